"""Python clients of the gateway, by job: ``wire`` (address, key, reading answers), ``retries``,
``routes`` (the API written once), ``http`` (the two drivers), ``ws`` and ``gym``.

- :class:`Client` / :class:`AsyncClient`: the HTTP API, one method per route, the same methods
  on both (the async ones are coroutines).
- :class:`RemoteEnv`: a real ``gymnasium.Env`` whose world lives behind the gateway (also
  ``gymnasium.make("palaestra/Remote-v0", env_id=...)``), over REST or a WebSocket.
- :class:`RemoteVectorEnv`: a ``gymnasium.vector.VectorEnv`` over a gateway pool.

Every route is written once, as a generator that yields the requests it needs (:class:`_Call`)
and the pauses it takes (:class:`_Sleep`) and gets the decoded answers back; :class:`Client`
drives those generators with an ``httpx.Client``, :class:`AsyncClient` with an
``httpx.AsyncClient``. Building requests, retrying (:class:`Retries`, done by tenacity) and
reading answers are shared too, so the two clients cannot drift apart.

Connections are kept alive with ``TCP_NODELAY`` set, and problem+json answers come back as the
same :mod:`palaestra.errors` classes the gateway raised, so ``except EnvNotFound`` works remotely.
"""

from palaestra.client.gym import RemoteEnv, RemoteVectorEnv, conform
from palaestra.client.http import AsyncClient, Client
from palaestra.client.retries import Retries, _retry_after
from palaestra.client.routes import JOB_DONE
from palaestra.client.wire import DEFAULT_URL

__all__ = [
    "DEFAULT_URL",
    "JOB_DONE",
    "AsyncClient",
    "Client",
    "RemoteEnv",
    "RemoteVectorEnv",
    "Retries",
    "_retry_after",
    "conform",
]
