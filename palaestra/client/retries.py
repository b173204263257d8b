"""When a request is sent again (:class:`Retries`), and when it must not be: tenacity does the
retrying and the waiting."""

from __future__ import annotations

import contextlib
import email.utils
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from tenacity import RetryCallState, wait_exponential_jitter

from palaestra.client.wire import _Call

#: Answers that say "not now, try later": the gateway refused the request before acting on it.
_BUSY = (429, 503)
#: The connection could not be made, so the request never left this process.
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout)
#: The connection broke while the request was out: the gateway may have acted on it.
_LOST = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
_IDEMPOTENT = ("GET", "DELETE")
_CREATING = ("/v1/sessions", "/v1/pools")


def _retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (it is either seconds or an HTTP date)."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


@dataclass(frozen=True)
class Retries:
    """When the clients send a request again; tenacity does the retrying and the waiting.

    - **429 and 503** are retried for every method, waiting what ``Retry-After`` says (or the
      backoff when there is no header). Both mean the request was refused before anything was
      done (the gateway's capacity or a busy session; a gateway or a proxy in front of it that
      is starting or overloaded), so sending it again cannot do anything twice. A
      ``Retry-After`` longer than ``max_retry_after`` is not waited for: the error (e.g.
      :class:`~palaestra.errors.CapacityExceeded`, whose ``retry_after_s`` says how long) is
      raised at once, since blocking a caller for half a minute is worse than telling it.
    - **Connection errors** are retried, with exponential backoff and jitter, only where a
      second request is harmless. GET and DELETE always (a resent DELETE whose first copy did
      close the session raises :class:`~palaestra.errors.SessionClosed`). Session creation
      (``POST /v1/sessions`` and ``POST /v1/pools``) only when the connection could not be
      made at all (refused, connect timeout): then the request provably never left, which is
      what a client meets while a gateway starts or restarts. It is *not* retried when the
      connection broke after the request was sent, because the gateway may have made the
      session: a second one would hold a worker until the idle reaper takes it and count
      against the key's session cap. Every other POST (reset, step, pool calls, synthesis
      jobs) is never retried on a connection error: a step may have been applied, and a
      gateway that refuses a step's connection has most likely lost the session with it (it
      died or restarted), so a retry would only hide the failure.
    - **Timeouts** are never retried: ``timeout`` is the caller's budget for one call.

    ``attempts`` counts the first try; ``Retries(attempts=1)`` turns retrying off.
    """

    attempts: int = 4
    backoff: float = 0.2
    max_backoff: float = 5.0
    max_retry_after: float = 10.0

    def busy(self, response: httpx.Response) -> bool:
        if response.status_code not in _BUSY:
            return False
        after = _retry_after(response)
        return after is None or after <= self.max_retry_after

    def wait(self, state: RetryCallState) -> float:
        outcome = state.outcome
        if outcome is not None and not outcome.failed:
            after = _retry_after(outcome.result())
            if after is not None:
                return after
        backoff = wait_exponential_jitter(
            multiplier=self.backoff, max=self.max_backoff, jitter=self.backoff
        )
        return backoff(state)


def _may_resend(call: _Call, exc: BaseException) -> bool:
    if isinstance(exc, _NEVER_SENT):
        return call.method in _IDEMPOTENT or (call.method == "POST" and call.path in _CREATING)
    return isinstance(exc, _LOST) and call.method in _IDEMPOTENT


def _last_outcome(state: RetryCallState) -> Any:
    """Out of attempts: the last answer (a 429 becomes its error) or the last exception."""
    assert state.outcome is not None
    return state.outcome.result()
