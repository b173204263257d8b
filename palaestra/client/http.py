"""The two HTTP clients: :class:`Client` runs each route's flow with an ``httpx.Client``,
:class:`AsyncClient` with an ``httpx.AsyncClient`` (the same methods, as coroutines)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypeVar, cast

import httpx
from tenacity import AsyncRetrying, Retrying

from palaestra.client.routes import _Core
from palaestra.client.wire import _Call, _Done, _Flow, _result, _resume, _Sleep

T = TypeVar("T")


class Client(_Core):
    """Synchronous HTTP client, one method per API route (retries: see :class:`Retries`)."""

    _http_class = httpx.Client
    _transport_class = httpx.HTTPTransport

    def _drive(self, flow: _Flow[T]) -> T:
        need = _resume(flow, None)
        while not isinstance(need, _Done):
            need = _resume(flow, self._answer(need))
        return cast(T, need.value)

    def _answer(self, need: _Call | _Sleep) -> Any:
        """What a flow gets back for what it needs: a call's answer, nothing after a pause."""
        if isinstance(need, _Sleep):
            time.sleep(need.seconds)
            return None
        return self._send(need)

    def _send(self, call: _Call) -> Any:
        request = self._build(call)
        try:
            response = Retrying(**self._policy(call))(self._http.send, request)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        return _result(response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Core):
    """Asynchronous HTTP client: every method of :class:`Client`, as coroutines."""

    _http_class = httpx.AsyncClient
    _transport_class = httpx.AsyncHTTPTransport

    async def _drive(self, flow: _Flow[T]) -> T:
        need = _resume(flow, None)
        while not isinstance(need, _Done):
            need = _resume(flow, await self._answer(need))
        return cast(T, need.value)

    async def _answer(self, need: _Call | _Sleep) -> Any:
        if isinstance(need, _Sleep):
            await asyncio.sleep(need.seconds)
            return None
        return await self._send(need)

    async def _send(self, call: _Call) -> Any:
        request = self._build(call)
        try:
            retrying = AsyncRetrying(**self._policy(call))
            response: httpx.Response = await retrying(self._http.send, request)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        return _result(response)

    async def aclose(self) -> None:
        await self._http.aclose()

    close = aclose

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
