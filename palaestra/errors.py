"""One exception tree for infrastructure failures.

Agent mistakes are *not* exceptions: they come back as ``last_action_error`` in the observation.
Everything here means the platform itself could not do what was asked. Each error carries
structured fields (``fields``) so the gateway can turn it into a problem+json body and the client
can turn that body back into the same class, which keeps one vocabulary on both sides of HTTP.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any, ClassVar


class PalaestraError(Exception):
    """Base of every palaestra error. ``status`` is the HTTP status the gateway answers with."""

    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"

    def __init_subclass__(cls, status: int | None = None, title: str | None = None) -> None:
        """``class Gone(PalaestraError, status=410, title="Gone")``: one line per error."""
        super().__init_subclass__()
        if status is not None:
            cls.status = status
        if title is not None:
            cls.title = title

    def __init__(self, detail: str, **fields: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fields = fields

    @property
    def type_name(self) -> str:
        return type(self).__name__

    def to_problem(self) -> dict[str, Any]:
        """RFC 9457 problem details; ``type`` names the exception class for the client."""
        return {
            "type": f"urn:palaestra:error:{self.type_name}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            **self.fields,
        }


class InvalidRequest(PalaestraError, status=422, title="Invalid request"): ...


class ActionError(PalaestraError, ValueError, status=422, title="Invalid action"):
    """An action that does not parse or validate. Inside an env it becomes ``last_action_error``."""


class Unauthorized(PalaestraError, status=401, title="Unauthorized"): ...


class NotFound(PalaestraError, status=404, title="Not found"): ...


class EnvNotFound(NotFound, title="Unknown environment"): ...


class TaskNotFound(NotFound, title="Unknown task"): ...


class SessionNotFound(NotFound, title="Unknown session"): ...


class JobNotFound(NotFound, title="Unknown job"): ...


class SuiteUnavailable(PalaestraError, status=503, title="Suite unavailable"):
    """A registered suite that cannot be loaded in this gateway (an optional extra is missing,
    or its loader failed); the reason says which."""


class Conflict(PalaestraError, status=409, title="Conflict"):
    """The request clashes with something that exists (e.g. a suite name already taken)."""


class SessionClosed(PalaestraError, status=409, title="Session closed"): ...


class ResetNeeded(PalaestraError, status=409, title="Reset needed"): ...


class CapacityExceeded(PalaestraError, status=429, title="Capacity exceeded"): ...


class PayloadTooLarge(PalaestraError, status=413, title="Payload too large"): ...


class WorkerError(PalaestraError, status=502, title="Worker failure"):
    """The worker hosting a session failed; ``worker`` and ``session_id`` name where."""


class WorkerCrashed(WorkerError, title="Worker crashed"): ...


class EnvCrashed(WorkerError, title="Environment crashed"):
    """The env code raised (a bug or a crashed browser): the session is failed, others go on."""


class StepTimeout(WorkerError, status=504, title="Step timed out"): ...


class TransportError(PalaestraError, status=503, title="Gateway unreachable"):
    """The client could not reach the gateway (connection refused, reset, timed out)."""


def conceal(exc: PalaestraError, log: logging.Logger) -> PalaestraError:
    """Keep internals off the wire: a traceback (``trace``) goes to ``log`` with the problem,
    under a ``correlation_id`` that the problem keeps, so an operator finds the log line a
    client quotes. Every 5xx gets one; an error already concealed is left as it is."""
    trace = exc.fields.pop("trace", None)
    if "correlation_id" in exc.fields or (exc.status < 500 and trace is None):
        return exc
    exc.fields["correlation_id"] = cid = secrets.token_hex(8)
    where = ", ".join(f"{k}={exc.fields[k]}" for k in ("worker", "session_id") if k in exc.fields)
    log.error(
        "[%s] %s %s (%s): %s%s",
        cid,
        exc.status,
        exc.type_name,
        where,
        exc.detail,
        f"\n{trace}" if trace else "",
    )
    return exc


def _all_subclasses(cls: type[PalaestraError]) -> list[type[PalaestraError]]:
    out = [cls]
    for sub in cls.__subclasses__():
        out += _all_subclasses(sub)
    return out


def from_problem(problem: dict[str, Any], status: int | None = None) -> PalaestraError:
    """Rebuild the exception a problem+json body describes (the client side of ``to_problem``)."""
    name = str(problem.get("type", "")).rsplit(":", 1)[-1]
    known = {c.__name__: c for c in _all_subclasses(PalaestraError)}
    cls = known.get(name, PalaestraError)
    fields = {k: v for k, v in problem.items() if k not in {"type", "title", "status", "detail"}}
    err = cls(str(problem.get("detail", "unknown error")), **fields)
    if cls is PalaestraError and status is not None:
        err.fields.setdefault("http_status", status)
    return err
