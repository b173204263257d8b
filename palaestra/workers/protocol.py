"""The worker wire protocol: length-prefixed JSON frames over a stream (a Unix socket).

A frame is a 4-byte big-endian length and an orjson document. Requests are
``{"id": n, "op": ..., "sid": ..., ...}``; replies are ``{"id": n, "ok": true, "result": ...}`` or
``{"id": n, "ok": false, "error": <problem dict>}``. Unix sockets work the same from a
subprocess, from a container through a bind-mounted folder, and need no port.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import orjson

MAX_FRAME = 256 * 1024 * 1024
_HEADER = struct.Struct(">I")


def pack(message: Any) -> bytes:
    body = orjson.dumps(message, option=orjson.OPT_SERIALIZE_NUMPY)
    return _HEADER.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """Next message, or raise ``asyncio.IncompleteReadError`` when the peer is gone."""
    (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes exceeds the {MAX_FRAME} byte limit")
    return orjson.loads(await reader.readexactly(size))
