"""Keep secrets out of recordings, log lines and error bodies.

Two nets, because either alone misses something: by field name (a mapping key that names a
credential: ``llm_key``, ``api_key``, ``token``, ``password``, ``authorization``, ...) and by
value (the operator's configured secrets, wherever they turn up: an error message quoting a
header, an observation echoing a request). Both replace with :data:`REDACTED`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

import orjson

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(
    r"(?i)(secret|token|passw(or)?d|authorization|credential|cookie|(^|[_-])(api_?)?key$|apikey)"
)


def secret_name(name: str) -> bool:
    """Whether a field named ``name`` holds a credential (``key`` alone, as in a key press,
    does not)."""
    return name.lower() != "key" and bool(_SECRET_NAME.search(name))


class Redactor:
    """Replaces the configured secrets' values in text, bytes and JSON-like data."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # longest first, so a secret that contains another is replaced whole
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        # as they appear inside a JSON string (quotes, backslashes and controls escaped)
        self._json = [orjson.dumps(s)[1:-1] for s in self.secrets]
        self._raw = [s.encode() for s in self.secrets]

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        return value

    def bytes(self, value: bytes) -> bytes:
        for secret in (*self._json, *self._raw):
            value = value.replace(secret, REDACTED.encode())
        return value

    def data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` with secret-named fields and secret values replaced."""
        if isinstance(value, dict):
            return {
                k: REDACTED if isinstance(k, str) and secret_name(k) else self.data(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


class RedactingFilter(logging.Filter):
    """A handler filter that takes the configured secrets out of every record it passes."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if self.redactor:
            message = record.getMessage()
            record.msg, record.args = self.redactor.text(message), ()
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self.redactor.text(record.exc_text)
        return True


def install_log_redaction(secrets: Iterable[str]) -> None:
    """Put a :class:`RedactingFilter` on every handler of the root and uvicorn loggers (a
    filter on a handler sees records of every logger that reaches it)."""
    redactor = Redactor(secrets)
    if not redactor:
        return
    names = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "palaestra")
    for name in names:
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter(redactor))
            else:
                for f in handler.filters:
                    if isinstance(f, RedactingFilter):
                        f.redactor = Redactor([*f.redactor.secrets, *redactor.secrets])
