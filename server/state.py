"""The gateway's shared state, and the FastAPI dependencies through which routers reach it.

One :class:`Gateway` per app (tests run several in one process), kept on ``app.state`` and
handed to routes by :func:`gateway` and :func:`owner`; routers hold no state of their own.
Dependencies are ``async def`` on purpose: FastAPI runs plain ``def`` ones in a thread, a hop
the step route cannot afford.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import HTTPConnection

from palaestra.errors import Unauthorized
from palaestra.server.catalog import SuiteCatalog
from palaestra.server.evals import EvalJobManager
from palaestra.server.jobs import JobStore
from palaestra.server.metrics import Metrics
from palaestra.server.pools import PoolManager
from palaestra.server.sessions import SessionManager, owner_of
from palaestra.server.settings import Settings, key_digest
from palaestra.server.synth import SynthJobManager
from palaestra.workers.base import Backend


@dataclass
class Gateway:
    settings: Settings
    backend: Backend
    metrics: Metrics
    suites: SuiteCatalog
    sessions: SessionManager
    pools: PoolManager
    synth_jobs: SynthJobManager
    eval_jobs: EvalJobManager
    #: the persistent store of synthesis and evaluation jobs (server/jobs.py)
    jobs: JobStore
    #: SHA-256 digest of each API key -> its owner; empty: no authentication (loopback only)
    keys: dict[bytes, str]
    started: float = field(default_factory=time.time)
    templates: Environment = field(
        default_factory=lambda: Environment(
            loader=PackageLoader("palaestra.server", "templates"), autoescape=select_autoescape()
        )
    )

    @classmethod
    def build(cls, settings: Settings, backend: Backend) -> Gateway:
        metrics = Metrics()
        suites = SuiteCatalog()
        sessions = SessionManager(settings, backend, metrics, suites)
        jobs = JobStore(settings.jobs_db)
        return cls(
            settings=settings,
            backend=backend,
            metrics=metrics,
            suites=suites,
            sessions=sessions,
            pools=PoolManager(sessions),
            synth_jobs=SynthJobManager(settings, jobs),
            eval_jobs=EvalJobManager(settings, jobs, suites, sessions),
            jobs=jobs,
            # the owner is the digest's first 16 hex digits, as owner_of() gives for the key
            keys={_digest_bytes(d): d[7:23] for d in map(key_digest, settings.api_keys)},
        )

    def authenticate(self, key: str | None) -> str:
        """The owner an API key stands for (``anonymous`` when authentication is off)."""
        if not self.keys:
            return owner_of(None)
        found = None
        if key is not None:
            given = hashlib.sha256(key.encode()).digest()
            for digest, who in self.keys.items():  # all of them: the time tells nothing
                if hmac.compare_digest(given, digest):
                    found = who
        if found is None:
            raise Unauthorized(
                "missing or unknown API key: send 'Authorization: Bearer <key>' or 'X-API-Key'"
            )
        return found

    def may_monitor(self, key: str | None) -> bool:
        """Whether a caller sees health details and metrics (settings.public_monitoring)."""
        if not self.keys or self.settings.public_monitoring:
            return True
        try:
            self.authenticate(key)
        except Unauthorized:
            return False
        return True

    def count_workers(self) -> None:
        self.metrics.workers_alive.labels(backend=self.backend.name).set(
            sum(w.alive for w in self.backend.workers)
        )


def _digest_bytes(digest: str) -> bytes:
    return bytes.fromhex(digest.removeprefix("sha256:"))


def key_from(headers: Any) -> str | None:
    auth = headers.get("authorization")
    if auth and auth.lower().startswith("bearer "):
        return str(auth[7:].strip())
    return headers.get("x-api-key")


async def gateway(conn: HTTPConnection) -> Gateway:
    state: Gateway = conn.app.state.gateway
    return state


async def owner(conn: HTTPConnection) -> str:
    """The caller's owner digest, from ``Authorization: Bearer`` or ``X-API-Key``."""
    state: Gateway = conn.app.state.gateway
    return state.authenticate(key_from(conn.headers))


#: route parameters: ``gw: State`` and ``who: str = Owner``
State = Annotated[Gateway, Depends(gateway)]
Owner = Depends(owner)
