"""The one WebSocket message loop of the gateway's sessions: v1's (``/v1/sessions/{sid}/ws``)
and OpenEnv's (``/openenv/.../ws``) differ in their messages only, so each gives an answer
function and this loop receives, answers and closes the same way for both."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import WebSocket, WebSocketDisconnect


@dataclass(frozen=True)
class Reply:
    """One answer: a frame to send (text, bytes, or nothing) and, to end the connection after
    it, the close code."""

    frame: str | bytes | None
    close: int | None = None


#: ``answer(message)``: the reply to one text message (it never raises: errors are replies)
Answer = Callable[[str], Awaitable[Reply]]


async def serve(websocket: WebSocket, answer: Answer) -> None:
    """Answer each message in turn until the client leaves or a reply closes the socket (a
    client gone meanwhile is not an error: the reply is dropped)."""
    while True:
        try:
            raw = await websocket.receive_text()
        except WebSocketDisconnect:
            return
        reply = await answer(raw)
        if reply.close is None:
            await _send(websocket, reply.frame)
            continue
        with contextlib.suppress(Exception):
            await _send(websocket, reply.frame)
            await websocket.close(code=reply.close)
        return


async def _send(websocket: WebSocket, frame: str | bytes | None) -> None:
    if isinstance(frame, bytes):
        await websocket.send_bytes(frame)
    elif frame is not None:
        await websocket.send_text(frame)
