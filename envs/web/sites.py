"""Static sites on loopback: one small HTTP server per folder per worker process.

Benchmarks that ship their pages (MiniWoB++) and tests are served from their folders by a
threaded ``http.server`` bound to 127.0.0.1 on a free port, started on first use and shared by
every session of the worker. The browser reaches it directly; nothing else can route there,
as contexts only reach the origins a task allows.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path

_SERVERS: dict[Path, http.server.ThreadingHTTPServer] = {}
_LOCK = threading.Lock()


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # a request log per page load would drown the worker's output

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        """Text is UTF-8: a page without a <meta charset> must not be read as windows-1252."""
        ctype = super().guess_type(path)
        return (
            f"{ctype}; charset=utf-8"
            if ctype.startswith(("text/", "application/javascript"))
            else ctype
        )

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """No listings: a page reaches the files it links to, never the folder's contents
        (a task's other pages, or anything else left in the folder)."""
        self.send_error(404, "File not found")

    def end_headers(self) -> None:
        # pages of a suite do not change while a worker runs; let each context cache them
        self.send_header("Cache-Control", "max-age=3600")
        super().end_headers()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A page that went away mid-answer (the browser closed, the episode reset) is
        normal, not a traceback on the worker's stderr; anything else still is."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def origin(folder: str | Path) -> str:
    """The loopback origin serving ``folder`` (started on first use)."""
    key = Path(folder).resolve()
    with _LOCK:
        server = _SERVERS.get(key)
        if server is None:
            if not key.is_dir():
                raise FileNotFoundError(f"site folder {key} does not exist")
            handler = functools.partial(_Handler, directory=str(key))
            server = _Server(("127.0.0.1", 0), handler)
            threading.Thread(
                target=server.serve_forever, name=f"site-{key.name}", daemon=True
            ).start()
            _SERVERS[key] = server
    return f"http://127.0.0.1:{server.server_address[1]}"
