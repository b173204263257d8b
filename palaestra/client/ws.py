"""A session's WebSocket for :class:`~palaestra.client.RemoteEnv`: one request/answer at a time,
re-opened once where a message can safely go again."""

from __future__ import annotations

import select
from typing import TYPE_CHECKING, Any

import orjson

from palaestra.client.wire import _NODELAY, _headers
from palaestra.errors import TransportError, from_problem

if TYPE_CHECKING:
    from palaestra.client.http import Client


class _Dropped(Exception):
    """The WebSocket broke during one exchange; ``sent`` says whether the message got out."""

    def __init__(self, why: object, *, sent: bool) -> None:
        super().__init__(str(why) or type(why).__name__)
        self.sent = sent


class _WebSocket:
    """The session's WebSocket: one request/answer at a time, as the env API is sequential.

    websocket-client is used because it is plain blocking I/O on the caller's thread; the
    ``websockets`` sync client reads on a background thread, which costs a thread hop per
    message (about 0.2 ms per step here).

    A dropped connection (an idle timeout, a proxy, a network blip, a gateway restart that kept
    the session) is re-opened once, transparently, when the message can safely go again: it
    was never sent (the drop is seen before sending, or the send failed), or it is a reset.
    A step whose answer was lost is not sent again, since the gateway may have applied it: that
    raises :class:`~palaestra.errors.TransportError` and the next call opens a new connection.
    The session lives on the gateway, not in the connection, so a new connection goes on where
    the old one stopped.
    """

    def __init__(self, client: Client, sid: str, query: str = "") -> None:
        self.sid = sid
        self.url = client.base_url.replace("http", "ws", 1) + f"/v1/sessions/{sid}/ws{query}"
        self.header = [f"{k}: {v}" for k, v in _headers(client.api_key).items()]
        self._ws: Any = self._connect()

    def _connect(self) -> Any:
        import websocket

        try:
            # orjson validates UTF-8 when it parses; websocket-client's own check is pure Python
            return websocket.create_connection(
                self.url,
                header=self.header,
                sockopt=_NODELAY,
                enable_multithread=False,
                skip_utf8_validation=True,
            )
        except Exception as exc:
            raise TransportError(
                f"cannot open the WebSocket {self.url}: {exc}", url=self.url
            ) from None

    def call(self, message: dict[str, Any]) -> Any:
        text = orjson.dumps(message).decode()
        try:
            reply = self._exchange(text)
        except _Dropped as first:
            self._drop()
            if first.sent and message.get("op") == "step":
                raise TransportError(
                    f"the WebSocket of session {self.sid} dropped after a step was sent "
                    f"({first}); the gateway may have applied it, so it is not sent again. "
                    "The next call reconnects; reset to know where the episode stands",
                    session_id=self.sid,
                ) from None
            try:
                self._ws = self._connect()
            except TransportError as exc:
                raise TransportError(
                    f"the WebSocket of session {self.sid} dropped ({first}) and could not be "
                    f"re-opened: {exc.detail}",
                    session_id=self.sid,
                    url=self.url,
                ) from None
            try:
                reply = self._exchange(text)
            except _Dropped as second:
                self._drop()
                raise TransportError(
                    f"the WebSocket of session {self.sid} dropped ({first}) and again after "
                    f"reconnecting ({second})",
                    session_id=self.sid,
                ) from None
        if isinstance(reply, dict) and "error" in reply:
            raise from_problem(reply["error"])
        return reply

    def _exchange(self, text: str) -> Any:
        import websocket

        errors = (websocket.WebSocketException, OSError)
        if self._ws is None:
            raise _Dropped("closed after an earlier failure", sent=False)
        if self._went_away():
            raise _Dropped("closed while idle", sent=False)
        try:
            self._ws.send(text)
        except errors as exc:
            raise _Dropped(exc, sent=False) from None
        try:
            raw = self._ws.recv()
        except errors as exc:
            raise _Dropped(exc, sent=True) from None
        if not raw:  # a close frame instead of an answer
            raise _Dropped("the gateway closed the connection", sent=True)
        return orjson.loads(raw)

    def _went_away(self) -> bool:
        """Whether the connection closed while idle. Calls are in lockstep, so nothing is due:
        anything readable now is a close frame, an EOF or a ping (answered, then looked past).
        One ``select`` with no wait, a microsecond per call."""
        import websocket

        sock = self._ws.sock
        if sock is None:
            return True
        while select.select([sock], [], [], 0)[0]:
            try:
                opcode, _ = self._ws.recv_data_frame(control_frame=True)
            except (websocket.WebSocketException, OSError):
                return True
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                return True
        return False

    def _drop(self) -> None:
        if self._ws is not None:
            self._ws.shutdown()  # the socket only: there is no one to say goodbye to
        self._ws = None

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
