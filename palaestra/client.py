"""Python clients of the gateway.

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

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import logging
import os
import select
import socket
import time
from collections.abc import Callable, Coroutine, Generator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MethodType
from typing import Any, Concatenate, Generic, NamedTuple, ParamSpec, TypeVar, overload
from urllib.parse import quote

import gymnasium as gym
import httpx
import numpy as np
import orjson
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    retry_if_result,
    stop_after_attempt,
    wait_exponential_jitter,
)

from palaestra import codec
from palaestra.errors import PalaestraError, TransportError, from_problem
from palaestra.registry import tasks_known
from palaestra.spaces import json_text_keys, space_from_json
from palaestra.spaces import structured as structured_space
from palaestra.steps import ResetReply, StepReply

DEFAULT_URL = "http://127.0.0.1:8000"
_NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
_JSON = {"content-type": "application/json"}
_log = logging.getLogger(__name__)

P = ParamSpec("P")
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


# ----- retries ---------------------------------------------------------------------------------

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


# ----- the one implementation of the API -------------------------------------------------------


class _Call(NamedTuple):
    """A request a route needs: ``json`` is the body (None: no body)."""

    method: str
    path: str
    json: Any = None


class _Sleep(NamedTuple):
    seconds: float


#: A route's body: yields calls and pauses, receives the decoded answers, returns its result.
_Flow = Generator[_Call | _Sleep, Any, T]


class _route(Generic[P, T]):
    """A route written once as a flow; on :class:`Client` it runs to its result, on
    :class:`AsyncClient` it is a coroutine. Each client says how to run a flow (``_drive``)."""

    def __init__(self, flow: Callable[Concatenate[Any, P], _Flow[T]]) -> None:
        self.flow = flow

        @functools.wraps(flow)
        def run(client: Any, *args: Any, **kwargs: Any) -> Any:
            return client._drive(flow(client, *args, **kwargs))

        self._run = run
        self.__doc__ = flow.__doc__
        self.__wrapped__ = flow

    @overload
    def __get__(self, client: None, owner: type | None = None) -> _route[P, T]: ...
    @overload
    def __get__(
        self, client: AsyncClient, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, client: Client, owner: type | None = None) -> Callable[P, T]: ...
    def __get__(self, client: Any, owner: type | None = None) -> Any:
        return self if client is None else MethodType(self._run, client)


#: States a synthesis or evaluation job ends in (an interrupted or cancelled one may resume).
JOB_DONE = ("succeeded", "failed", "cancelled", "interrupted")


class _JobWatch:
    """One poll's verdict on a job: report new progress, say whether the job ended, raise once
    the caller's timeout has passed."""

    def __init__(
        self,
        on_progress: Callable[[dict[str, Any]], None] | None,
        timeout: float | None,
        noun: str = "synthesis",
    ) -> None:
        self.noun = noun
        self.on_progress = on_progress
        self.timeout = timeout
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.seen: Any = None

    def finished(self, job: dict[str, Any]) -> bool:
        if self.on_progress is not None and job["progress"] != self.seen:
            self.seen = job["progress"]
            self.on_progress(self.seen)
        if job["status"] in JOB_DONE:
            return True
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _job_timed_out(job, float(self.timeout or 0), self.noun)
        return False


def _synth_body(
    domains: Sequence[str] | str,
    variants: int,
    tasks: int,
    seed: int,
    layouts: Sequence[str],
    name: str | None,
    family: str = "web",
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "domains": [domains] if isinstance(domains, str) else list(domains),
        "variants": variants,
        "tasks": tasks,
        "seed": seed,
        "layouts": list(layouts),
        "family": family,
    }
    if name is not None:
        body["name"] = name
    return body


def _job_timed_out(job: dict[str, Any], timeout: float, noun: str) -> TimeoutError:
    return TimeoutError(
        f"{noun} job {job['job_id']} is still {job['status']} after {timeout:g} s "
        f"(progress {job.get('progress')}); it keeps running on the gateway"
    )


def _job_path(job_id: str) -> str:
    return f"/v1/synth/jobs/{quote(job_id, safe='')}"


def _eval_path(job_id: str) -> str:
    return f"/v1/evals/{quote(job_id, safe='')}"


def _session_body(
    env: str | None,
    task: str | None,
    options: Mapping[str, Any] | None,
    record: bool | None,
    run: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"options": dict(options or {})}
    if run is not None:  # the named run its recording joins (docs/data.md)
        body["run"] = run
    if tags:
        body["tags"] = dict(tags)
    if env is not None:
        body["env"] = env
    if task is not None:
        body["task"] = task
    if record is not None:
        body["record"] = record
    return body


def _structured(structured: bool) -> str:
    return "?structured=true" if structured else ""


class _Core:
    """What both clients share: configuration, every route, request building, the retry
    policy and answer reading. Subclasses bring the HTTP client and run the flows."""

    #: ``httpx.Client`` or ``httpx.AsyncClient``, and the transport class that goes with it.
    _http_class: Any
    _transport_class: Any

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 300.0,
        *,
        retries: Retries | None = None,
    ) -> None:
        self.base_url = _default_url(base_url)
        self.api_key = api_key or os.environ.get("PALAESTRA_API_KEY")
        self.timeout = timeout
        self.retries = retries or Retries()
        # one pool of keep-alive connections per client, TCP_NODELAY on each
        self._http = self._http_class(
            base_url=self.base_url,
            headers=_headers(self.api_key),
            timeout=timeout,
            transport=self._transport_class(socket_options=_NODELAY),
        )

    # ----- plumbing shared by both drivers ---------------------------------------------------
    def _build(self, call: _Call) -> httpx.Request:
        if call.json is None:
            return self._http.build_request(call.method, call.path)
        content = orjson.dumps(call.json)
        return self._http.build_request(call.method, call.path, content=content, headers=_JSON)

    def _policy(self, call: _Call) -> dict[str, Any]:
        """tenacity's arguments for one call (a fresh ``Retrying`` each call: tenacity keeps
        its state per thread, not per asyncio task)."""
        retries = self.retries

        def log(state: RetryCallState) -> None:
            outcome = state.outcome
            assert outcome is not None
            why = outcome.exception() if outcome.failed else outcome.result().status_code
            _log.info(
                "retrying %s %s in %.2f s (%s)", call.method, call.path, state.upcoming_sleep, why
            )

        return {
            "retry": retry_if_result(retries.busy)
            | retry_if_exception(functools.partial(_may_resend, call)),
            "wait": retries.wait,
            "stop": stop_after_attempt(retries.attempts),
            "before_sleep": log,
            "retry_error_callback": _last_outcome,
        }

    def _unreachable(self, exc: httpx.TransportError) -> TransportError:
        return TransportError(
            f"cannot reach the gateway at {self.base_url}: {exc}", url=self.base_url
        )

    def _drive(self, flow: _Flow[T]) -> Any:
        raise NotImplementedError

    # ----- the routes ------------------------------------------------------------------------
    @_route
    def request(self, method: str, path: str, json: Any = None) -> _Flow[Any]:
        """Any route: ``json`` is the body; returns the decoded answer (bytes for images)."""
        return (yield _Call(method, path, json))

    @_route
    def health(self) -> _Flow[dict[str, Any]]:
        return (yield _Call("GET", "/v1/health"))

    @_route
    def envs(self) -> _Flow[list[dict[str, Any]]]:
        return (yield _Call("GET", "/v1/envs"))["envs"]

    @_route
    def suites(self) -> _Flow[list[dict[str, Any]]]:
        return (yield _Call("GET", "/v1/suites"))["suites"]

    @_route
    def tasks(self, suite: str, split: str | None = None) -> _Flow[list[dict[str, Any]]]:
        """The suite's tasks as an agent may see them (only ``split``'s, if given); their
        gymnasium ids (``palaestra/<suite>.<task>-v0``, made with ``url=``) are registered on
        the way."""
        path = f"/v1/suites/{quote(suite, safe='')}/tasks"
        if split is not None:
            path += f"?split={quote(split, safe='')}"
        tasks = (yield _Call("GET", path))["tasks"]
        tasks_known(suite, [t["id"] for t in tasks if "id" in t])
        return tasks

    @_route
    def create_session(
        self,
        env: str | None = None,
        task: str | None = None,
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
        run: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> _Flow[dict[str, Any]]:
        body = _session_body(env, task, options, record, run, tags)
        return (yield _Call("POST", "/v1/sessions", body))

    @_route
    def reset(
        self,
        sid: str,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        structured: bool = False,
    ) -> _Flow[ResetReply]:
        """``structured``: JSON-text fields as JSON values (the API's ``?structured=true``)."""
        body = {"seed": seed, "options": options}
        return (yield _Call("POST", f"/v1/sessions/{sid}/reset{_structured(structured)}", body))

    @_route
    def step(self, sid: str, action: Any, structured: bool = False) -> _Flow[StepReply]:
        path = f"/v1/sessions/{sid}/step{_structured(structured)}"
        return (yield _Call("POST", path, {"action": action}))

    @_route
    def screenshot(self, sid: str) -> _Flow[np.ndarray]:
        png = yield _Call("GET", f"/v1/sessions/{sid}/screenshot")
        return codec.image_from_bytes(png, _png_shape(png))

    @_route
    def close_session(self, sid: str) -> _Flow[None]:
        yield _Call("DELETE", f"/v1/sessions/{sid}")

    @_route
    def create_pool(
        self,
        size: int,
        env: str | None = None,
        task: str | None = None,
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
        **pool: Any,
    ) -> _Flow[dict[str, Any]]:
        """``pool`` takes ``placement``, ``warm``, ``min_size``, ``max_size`` (see the API)."""
        body = {**_session_body(env, task, options, record), "size": size, **pool}
        return (yield _Call("POST", "/v1/pools", body))

    @_route
    def reset_pool(
        self,
        pool_id: str,
        seed: int | list[int | None] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> _Flow[Any]:
        body = {"seed": seed, "options": dict(options) if options is not None else None}
        return (yield _Call("POST", f"/v1/pools/{pool_id}/reset", body))

    @_route
    def step_pool(self, pool_id: str, actions: list[Any]) -> _Flow[Any]:
        return (yield _Call("POST", f"/v1/pools/{pool_id}/step", {"actions": actions}))

    @_route
    def resize_pool(self, pool_id: str, size: int) -> _Flow[Any]:
        return (yield _Call("POST", f"/v1/pools/{pool_id}/resize", {"size": size}))

    @_route
    def send_pool(self, pool_id: str, actions: list[Any], env_ids: list[int]) -> _Flow[Any]:
        body = {"actions": actions, "env_ids": env_ids}
        return (yield _Call("POST", f"/v1/pools/{pool_id}/send", body))

    @_route
    def recv_pool(self, pool_id: str, batch_size: int, timeout_s: float = 60.0) -> _Flow[Any]:
        body = {"batch_size": batch_size, "timeout_s": timeout_s}
        return (yield _Call("POST", f"/v1/pools/{pool_id}/recv", body))

    @_route
    def close_pool(self, pool_id: str) -> _Flow[None]:
        yield _Call("DELETE", f"/v1/pools/{pool_id}")

    @_route
    def runs(self) -> _Flow[list[dict[str, Any]]]:
        return (yield _Call("GET", "/v1/runs"))["runs"]

    @_route
    def synth(
        self,
        domains: Sequence[str] | str,
        *,
        variants: int,
        tasks: int,
        seed: int = 0,
        layouts: Sequence[str] = ("desktop",),
        name: str | None = None,
        family: str = "web",
        wait: bool = True,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        poll_s: float = 1.0,
        timeout: float | None = None,
    ) -> _Flow[dict[str, Any]]:
        """Start a synthesis job; with ``wait`` poll it to the end and return the final job.

        A failed job is returned, not raised (its ``error`` says why, its ``report`` what was
        made); on success ``job["suite"]`` is the suite name to use in ``"suite/task_id"``.
        ``on_progress`` gets the job's ``progress`` dict whenever it changes.
        """
        body = _synth_body(domains, variants, tasks, seed, layouts, name, family)
        job = yield _Call("POST", "/v1/synth/jobs", body)
        watch = _JobWatch(on_progress, timeout)
        while wait and not watch.finished(job):
            yield _Sleep(poll_s)
            job = yield _Call("GET", _job_path(job["job_id"]))
        return job

    @_route
    def synth_job(self, job_id: str) -> _Flow[dict[str, Any]]:
        return (yield _Call("GET", _job_path(job_id)))

    @_route
    def synth_jobs(self) -> _Flow[list[dict[str, Any]]]:
        return (yield _Call("GET", "/v1/synth/jobs"))["jobs"]

    @_route
    def cancel_synth_job(self, job_id: str) -> _Flow[dict[str, Any]]:
        return (yield _Call("POST", f"{_job_path(job_id)}/cancel"))

    @_route
    def resume_synth_job(self, job_id: str) -> _Flow[dict[str, Any]]:
        """Run an interrupted (or cancelled) synthesis job again, under the same id."""
        return (yield _Call("POST", f"{_job_path(job_id)}/resume"))

    @_route
    def evaluate(
        self,
        suite: str,
        agent: str,
        *,
        tasks: Sequence[str] = (),
        agent_options: Mapping[str, Any] | None = None,
        parallel: int = 4,
        attempts: int = 1,
        seeds: Sequence[int] = (0,),
        max_steps: int | None = None,
        limit: int | None = None,
        wait: bool = True,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        poll_s: float = 1.0,
        timeout: float | None = None,
    ) -> _Flow[dict[str, Any]]:
        """Start an evaluation job on the gateway (``POST /v1/evals``): a built-in agent
        (``oracle``, ``random``, ``noop``, ``openai:MODEL`` on the operator's endpoint) over a
        suite's tasks. With ``wait`` poll it to the end and return the final job, whose
        ``summary`` holds the figures; :meth:`eval_results` gives the episodes."""
        body: dict[str, Any] = {
            "suite": suite,
            "agent": agent,
            "tasks": list(tasks),
            "agent_options": dict(agent_options or {}),
            "parallel": parallel,
            "attempts": attempts,
            "seeds": list(seeds),
        }
        if max_steps is not None:
            body["max_steps"] = max_steps
        if limit is not None:
            body["limit"] = limit
        job = yield _Call("POST", "/v1/evals", body)
        watch = _JobWatch(on_progress, timeout, "evaluation")
        while wait and not watch.finished(job):
            yield _Sleep(poll_s)
            job = yield _Call("GET", _eval_path(job["job_id"]))
        return job

    @_route
    def eval_job(self, job_id: str) -> _Flow[dict[str, Any]]:
        return (yield _Call("GET", _eval_path(job_id)))

    @_route
    def eval_jobs(self) -> _Flow[list[dict[str, Any]]]:
        return (yield _Call("GET", "/v1/evals"))["jobs"]

    @_route
    def eval_results(
        self, job_id: str, offset: int = 0, limit: int = 1000
    ) -> _Flow[dict[str, Any]]:
        """The job's summary (None until it ends) and a page of its per-episode results."""
        path = f"{_eval_path(job_id)}/results?offset={int(offset)}&limit={int(limit)}"
        return (yield _Call("GET", path))

    @_route
    def cancel_eval(self, job_id: str) -> _Flow[dict[str, Any]]:
        """Stop the job: no new episode starts; the finished ones stay (resume continues)."""
        return (yield _Call("POST", f"{_eval_path(job_id)}/cancel"))

    @_route
    def resume_eval(self, job_id: str) -> _Flow[dict[str, Any]]:
        """Continue an interrupted or cancelled job from the episodes it had finished."""
        return (yield _Call("POST", f"{_eval_path(job_id)}/resume"))

    @_route
    def recording(self, run_id: str, sid: str) -> _Flow[dict[str, Any]]:
        return (yield _Call("GET", f"/v1/runs/{run_id}/sessions/{sid}"))


class Client(_Core):
    """Synchronous HTTP client, one method per API route (retries: see :class:`Retries`)."""

    _http_class = httpx.Client
    _transport_class = httpx.HTTPTransport

    def _drive(self, flow: _Flow[T]) -> T:
        answer: Any = None
        while True:
            try:
                need = flow.send(answer)
            except StopIteration as done:
                return done.value
            if isinstance(need, _Sleep):
                time.sleep(need.seconds)
                answer = None
            else:
                answer = self._send(need)

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
        answer: Any = None
        while True:
            try:
                need = flow.send(answer)
            except StopIteration as done:
                return done.value
            if isinstance(need, _Sleep):
                await asyncio.sleep(need.seconds)
                answer = None
            else:
                answer = await self._send(need)

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


def _png_shape(png: bytes) -> tuple[int, int, int]:
    from io import BytesIO

    from PIL import Image

    img = Image.open(BytesIO(png))
    return (img.height, img.width, len(img.getbands()))


def conform(value: Any, space: spaces.Space) -> Any:
    """Decoded JSON -> the exact Python/numpy types the space's ``contains`` expects."""
    if isinstance(space, spaces.Dict) and isinstance(value, dict):
        return {k: conform(value[k], s) for k, s in space.spaces.items() if k in value}
    if isinstance(space, spaces.Tuple) and isinstance(value, list | tuple):
        return tuple(conform(v, s) for v, s in zip(value, space.spaces, strict=False))
    if isinstance(space, spaces.Discrete):
        return np.int64(value)
    if isinstance(space, spaces.Box) and not isinstance(value, np.ndarray):
        return np.asarray(value, dtype=space.dtype)
    return value


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


class RemoteEnv(gym.Env[Any, Any]):
    """A ``gymnasium.Env`` whose world is a session on a palaestra gateway.

    ``transport="ws"`` keeps one WebSocket open for reset/step (lower latency); ``"http"`` uses
    keep-alive REST calls. Observations are rebuilt into numpy arrays matching the published
    spaces; ``info`` is returned as the gateway sent it. ``structured=True`` asks for JSON-text
    fields (``tools``, ``ui_elements``, ...) as JSON values: their spaces become
    :class:`~palaestra.spaces.JSONValue`.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        env_id: str | None = None,
        *,
        task: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        transport: str = "http",
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
        render_mode: str | None = None,
        timeout: float = 300.0,
        retries: Retries | None = None,
        structured: bool = False,
    ) -> None:
        if transport not in ("http", "ws"):
            raise ValueError("transport must be 'http' or 'ws'")
        self.client = Client(base_url, api_key, timeout, retries=retries)
        self.render_mode = render_mode
        self.transport = transport
        self._ws: _WebSocket | None = None
        self.session_id: str | None = None
        try:
            made = self.client.create_session(env_id, task, options, record)
        except PalaestraError:
            self.client.close()
            raise
        self.session_id = made["session_id"]
        self.env_id = made["env"]
        self.task_ref = made.get("task")
        self.action_description: str = made.get("actions", "")
        self.observation_space = space_from_json(made["spaces"]["observation"])
        self._query = _structured(structured)
        self._json_keys = json_text_keys(self.observation_space) if structured else ()
        if structured:
            self.observation_space = structured_space(self.observation_space)
        self.action_space = space_from_json(made["spaces"]["action"])
        if transport == "ws":
            self._ws = _WebSocket(self.client, self.session_id, self._query)

    def _call(self, op: str, **payload: Any) -> Any:
        if self.session_id is None:
            raise PalaestraError("this RemoteEnv is closed")
        if self._ws is not None:
            return self._ws.call({"op": op, **payload})
        path = f"/v1/sessions/{self.session_id}/{op}{self._query}"
        return self.client.request("POST", path, payload)

    def _obs(self, encoded: Any) -> Any:
        if self._json_keys and isinstance(encoded, dict):  # JSON values need no decoding
            kept = {k: encoded[k] for k in self._json_keys if k in encoded}
            rest = codec.decode({k: v for k, v in encoded.items() if k not in kept})
            return conform({**rest, **kept}, self.observation_space)
        return conform(codec.decode(encoded), self.observation_space)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        result: ResetReply = self._call("reset", seed=seed, options=options)
        return self._obs(result["observation"]), result["info"]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        r: StepReply = self._call("step", action=_jsonable_action(action))
        return self._obs(r["observation"]), r["reward"], r["terminated"], r["truncated"], r["info"]

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array" or self.session_id is None:
            return None
        return self.client.screenshot(self.session_id)

    def close(self) -> None:
        if self.session_id is None:
            return
        sid, self.session_id = self.session_id, None
        try:
            if self._ws is not None:
                self._ws.close()
            self.client.close_session(sid)
        except PalaestraError:
            pass  # the session is gone either way (closed, reaped or its worker died)
        finally:
            self.client.close()


def _jsonable_action(action: Any) -> Any:
    if hasattr(action, "to_json"):
        return action.to_json()
    if isinstance(action, np.generic):
        return action.item()
    return action


class RemoteVectorEnv(VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` over a gateway pool (NEXT_STEP autoreset)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        env_id: str | None = None,
        num_envs: int = 2,
        *,
        task: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
        timeout: float = 300.0,
        placement: str = "spread",
        warm: int = 0,
        min_size: int | None = None,
        max_size: int | None = None,
        retries: Retries | None = None,
    ) -> None:
        self.client = Client(base_url, api_key, timeout, retries=retries)
        made = self.client.create_pool(
            num_envs,
            env_id,
            task,
            options,
            record,
            placement=placement,
            warm=warm,
            min_size=min_size,
            max_size=max_size,
        )
        self.pool_id: str | None = made["pool_id"]
        self.single_observation_space = space_from_json(made["spaces"]["observation"])
        self.single_action_space = space_from_json(made["spaces"]["action"])
        self._sized(made)

    def _sized(self, made: Mapping[str, Any]) -> None:
        self.session_ids: list[str] = list(made["session_ids"])
        self.num_envs = len(self.session_ids)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def resize(self, num_envs: int) -> tuple[Any, dict[str, Any]]:
        """Grow or shrink the pool (within its min/max); new members arrive reset: their
        observations and infos are returned (warm spares make this instant)."""
        r = self.client.resize_pool(str(self.pool_id), num_envs)
        self._sized(r)
        added = self._batch(r["observations"], len(r["added"])) if r["added"] else None
        return added, {"members": r["infos"], "added": r["added"], "from_warm": r["from_warm"]}

    def _batch(self, encoded: list[Any], n: int | None = None) -> Any:
        items = [conform(codec.decode(o), self.single_observation_space) for o in encoded]
        out = create_empty_array(self.single_observation_space, n or self.num_envs)
        assert out is not None
        return concatenate(self.single_observation_space, items, out)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        r = self.client.reset_pool(str(self.pool_id), seed, options)
        return self._batch(r["observations"]), {"members": r["infos"]}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        batch = [_jsonable_action(a) for a in actions]
        return self._results(self.client.step_pool(str(self.pool_id), batch), self.num_envs)

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start steps on some members and return at once (EnvPool's async API); all members
        when ``env_ids`` is None."""
        ids = list(range(self.num_envs)) if env_ids is None else [int(i) for i in env_ids]
        batch = [_jsonable_action(a) for a in actions]
        self.client.send_pool(str(self.pool_id), batch, ids)

    def recv(
        self, batch_size: int, timeout_s: float = 60.0
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The first ``batch_size`` sent steps to finish; ``info["env_id"]`` says whose."""
        r = self.client.recv_pool(str(self.pool_id), batch_size, timeout_s)
        obs, rewards, terminated, truncated, info = self._results(r, batch_size)
        return obs, rewards, terminated, truncated, {**info, "env_id": np.asarray(r["env_ids"])}

    def _results(self, r: Any, n: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        return (
            self._batch(r["observations"], n),
            np.asarray(r["rewards"], dtype=np.float64),
            np.asarray(r["terminated"], dtype=np.bool_),
            np.asarray(r["truncated"], dtype=np.bool_),
            {"members": r["infos"]},
        )

    def close_extras(self, **kwargs: Any) -> None:
        if self.pool_id is not None:
            pool, self.pool_id = self.pool_id, None
            with contextlib.suppress(PalaestraError):
                self.client.close_pool(pool)
            self.client.close()
