"""What every part of the client shares about the wire: the gateway's address and key, the
request a route needs (:class:`_Call`) or the pause it takes (:class:`_Sleep`), and reading an
answer (problem+json comes back as the :mod:`palaestra.errors` class the gateway raised)."""

from __future__ import annotations

import os
import socket
from collections.abc import Generator
from typing import Any, NamedTuple, TypeVar

import httpx
import orjson

from palaestra.errors import from_problem

DEFAULT_URL = "http://127.0.0.1:8000"
_NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
_JSON = {"content-type": "application/json"}

T = TypeVar("T")


def _default_url(base_url: str | None) -> str:
    return (base_url or os.environ.get("PALAESTRA_URL") or DEFAULT_URL).rstrip("/")


def _headers(api_key: str | None) -> dict[str, str]:
    key = api_key or os.environ.get("PALAESTRA_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def _result(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            body = {"detail": response.text[:500] or response.reason_phrase}
        raise from_problem(body, response.status_code)
    if response.status_code == 204 or not response.content:
        return None
    if response.headers.get("content-type", "").startswith("image/"):
        return response.content
    return orjson.loads(response.content)


class _Call(NamedTuple):
    """A request a route needs: ``json`` is the body (None: no body)."""

    method: str
    path: str
    json: Any = None


class _Sleep(NamedTuple):
    seconds: float


#: A route's body: yields calls and pauses, receives the decoded answers, returns its result.
_Flow = Generator[_Call | _Sleep, Any, T]


class _Done(NamedTuple):
    """A flow's result: it needs nothing more."""

    value: Any


def _resume(flow: _Flow[Any], answer: Any) -> _Call | _Sleep | _Done:
    """Hand a flow the answer to what it needed last: what it needs next, or its result."""
    try:
        return flow.send(answer)
    except StopIteration as done:
        return _Done(done.value)


def _png_shape(png: bytes) -> tuple[int, int, int]:
    from io import BytesIO

    from PIL import Image

    img = Image.open(BytesIO(png))
    return (img.height, img.width, len(img.getbands()))
