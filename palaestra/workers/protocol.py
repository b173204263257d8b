"""The worker wire protocol: length-prefixed JSON frames over a Unix stream socket.

A frame is a 4-byte big-endian length and an orjson document. Requests are
``{"op": ..., ...}``; replies are ``{"ok": true, "result": ...}`` or
``{"ok": false, "error": <problem dict>}``. The gateway opens one *control* connection per
worker (``hello``/``ping``; when it closes the worker exits) and one connection per session,
whose first request is ``make``; requests on a connection are answered in order. Unix sockets
work the same from a subprocess and from a container through a bind-mounted folder, with no
port to clash.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import orjson

MAX_FRAME = 256 * 1024 * 1024
_HEADER = struct.Struct(">I")


def pack(message: Any) -> bytes:
    body = orjson.dumps(message, option=orjson.OPT_SERIALIZE_NUMPY)
    return _HEADER.pack(len(body)) + body


def _size(header: bytes) -> int:
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes exceeds the {MAX_FRAME} byte limit")
    return int(size)


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """Next message, or raise ``asyncio.IncompleteReadError`` when the peer is gone."""
    size = _size(await reader.readexactly(_HEADER.size))
    return orjson.loads(await reader.readexactly(size))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("peer closed the connection")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket) -> Any:
    """Blocking read of the next message; EOFError when the peer is gone."""
    return orjson.loads(_recv_exact(sock, _size(_recv_exact(sock, _HEADER.size))))


def send_frame(sock: socket.socket, message: Any) -> None:
    sock.sendall(pack(message))
