"""OSWorld's downloads, from a content cache folder keyed by URL.

OSWorld's office tasks download their documents (config ``download`` steps) and gold files
(evaluator ``cloud_file`` getters) from the internet, mostly Google Drive. Sessions here have no
network, so those files come from a folder filled beforehand where the internet is reachable
(``palaestra osworld cache DIR``, :func:`fill`): each file is named by the SHA-256 of its URL
(the URL as the task spells it) and ``index.json`` lists, per name, the URL, size and the
content's SHA-256. The loader (:mod:`osworld`) reads only that folder; a task whose files are
absent is listed as not runnable with the URLs it needs.

Decisions:

- Keyed by URL, not by content: a task names URLs, and the same URL is the same file to OSWorld
  too (it downloads once per task run). The content digest in the index says what was fetched.
- The cache is the operator's (trusted like the task files): gold files read from it are parsed
  in-process. Agents never write it; a session receives copies of its files in its home.
- :func:`fill` is the one place in the family that opens a network connection, and only when an
  operator runs it. It writes each file atomically (a temporary name, then a rename) and the
  index after each file, so an interrupted run leaves nothing half-written, and a second run
  fetches only what is missing. A Google Drive page where a file was expected (a quota or
  virus-scan warning) is an error naming the URL, never cached as the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the environment variable naming the cache folder (else :data:`DEFAULT`)
ENV = "PALAESTRA_OSWORLD_CACHE"
DEFAULT = Path("~/.cache/palaestra/osworld")
INDEX = "index.json"
#: the largest file fetched or read (OSWorld's office files are a few MB at most)
MAX_BYTES = 100 * 1024 * 1024
_CHUNK = 1 << 16


def key(url: str) -> str:
    """The name of a URL's file in the cache: the SHA-256 of the URL's text."""
    return hashlib.sha256(url.encode()).hexdigest()


def default_folder() -> Path:
    """``PALAESTRA_OSWORLD_CACHE``, else ``~/.cache/palaestra/osworld``."""
    return Path(os.environ.get(ENV) or DEFAULT).expanduser()


class Cache:
    """A cache folder: files named by :func:`key` plus ``index.json``."""

    def __init__(self, folder: Path | str | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder else default_folder()

    def __repr__(self) -> str:
        return f"Cache({str(self.folder)!r})"

    def path(self, url: str) -> Path:
        return self.folder / key(url)

    def has(self, url: str) -> bool:
        return self.path(url).is_file()

    def read(self, url: str) -> bytes | None:
        """The URL's file, or None when the cache does not hold it (or holds too big a one)."""
        path = self.path(url)
        try:
            if path.stat().st_size > MAX_BYTES:
                return None
            return path.read_bytes()
        except OSError:
            return None

    def index(self) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / INDEX).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def put(self, url: str, data: bytes, content_type: str = "") -> None:
        """Store a URL's file and list it in the index (both written atomically)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        _atomic(self.path(url), data)
        index = self.index()
        index[key(url)] = {
            "url": url,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "content_type": content_type,
        }
        _atomic(self.folder / INDEX, json.dumps(index, indent=1, sort_keys=True).encode())


def _atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def task_urls(data: dict[str, Any]) -> list[str]:
    """Every URL an OSWorld task reads, in order, once each: its config's and its evaluator's
    postconfig's ``download`` files, and its evaluator's ``cloud_file`` getters (``multi``
    ones too)."""
    ev = data.get("evaluator") or {}
    steps = [*(data.get("config") or []), *(ev.get("postconfig") or [])]
    urls = [
        str(f.get("url", ""))
        for s in steps
        if isinstance(s, dict) and s.get("type") == "download"
        for f in (s.get("parameters") or {}).get("files", [])
    ]
    for side in ("result", "expected"):
        for getter in as_list(ev.get(side)):
            if isinstance(getter, dict) and getter.get("type") == "cloud_file":
                urls += [str(p) for p in as_list(getter.get("path"))]
    return list(dict.fromkeys(u for u in urls if u))


def as_list(value: Any) -> list[Any]:
    """OSWorld's one-or-several fields (``func``, ``result``, ``path``...) as a list."""
    return value if isinstance(value, list) else [value]


def task_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The task JSON files under each path (a file, or a folder searched recursively)."""
    for p in paths:
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.json") if q.is_file())
        else:
            yield p


@dataclass
class FillReport:
    fetched: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


#: ``fetch(url) -> (bytes, content type)``; raises :class:`FetchError` with the reason
Fetch = Callable[[str], tuple[bytes, str]]


class FetchError(Exception):
    pass


def fetch(url: str, timeout: float = 60.0) -> tuple[bytes, str]:
    """Download one URL (http or https), at most :data:`MAX_BYTES`."""
    if not url.startswith(("http://", "https://")):
        raise FetchError("not an http(s) URL")
    request = urllib.request.Request(url, headers={"User-Agent": "palaestra-osworld-cache"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            ctype = resp.headers.get("Content-Type", "")
            chunks, size = [], 0
            while chunk := resp.read(_CHUNK):
                size += len(chunk)
                if size > MAX_BYTES:
                    raise FetchError(f"larger than {MAX_BYTES // 2**20} MB")
                chunks.append(chunk)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"cannot reach the host ({exc.reason})") from None
    except (TimeoutError, OSError) as exc:
        raise FetchError(f"the download failed ({exc})") from None
    data = b"".join(chunks)
    if ctype.startswith("text/html") and b"<html" in data[:2048].lower():
        raise FetchError(
            "the server sent a web page, not the file (Google Drive sends one when its "
            "download quota is spent or it asks to confirm a virus scan; try again later)"
        )
    return data, ctype


def fill(
    cache: Cache,
    urls: Iterable[str],
    get: Fetch = fetch,
    progress: Callable[[str, str], None] | None = None,
) -> FillReport:
    """Download every URL the cache does not hold yet. ``progress(url, outcome)`` is called
    after each URL with ``"present"``, ``"fetched"`` or ``"failed: <reason>"``."""
    out = FillReport()
    for url in dict.fromkeys(urls):
        if cache.has(url):
            out.present.append(url)
            outcome = "present"
        else:
            try:
                data, ctype = get(url)
            except FetchError as exc:
                out.failed[url] = str(exc)
                outcome = f"failed: {exc}"
            else:
                cache.put(url, data, ctype)
                out.fetched.append(url)
                outcome = "fetched"
        if progress is not None:
            progress(url, outcome)
    return out
