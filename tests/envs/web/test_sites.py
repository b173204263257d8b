"""The static site server: a page that goes away mid-answer is not a traceback."""

from __future__ import annotations

import socket
import struct
import threading
import time
from urllib.parse import urlsplit

from palaestra.envs.web import sites


def _hang_up_mid_answer(url: str, path: str, times: int = 5) -> None:
    where = urlsplit(url)
    for _ in range(times):
        conn = socket.create_connection((where.hostname, where.port))
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        conn.recv(100)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # a reset, with most of the file still to send


def test_a_client_gone_mid_answer_is_no_traceback(tmp_path, capsys):
    (tmp_path / "big.bin").write_bytes(b"x" * 30_000_000)
    url = sites.origin(tmp_path)
    _hang_up_mid_answer(url, "/big.bin")
    deadline = time.monotonic() + 10  # the server's threads finish writing into closed sockets
    while time.monotonic() < deadline and any(
        "process_request" in t.name for t in threading.enumerate()
    ):
        time.sleep(0.1)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err
