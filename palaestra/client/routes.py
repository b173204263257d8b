"""The one implementation of the HTTP API: every route written once, as a flow (a generator
that yields the requests it needs and the pauses it takes and gets the decoded answers back),
in :class:`_Core`; :mod:`palaestra.client.http` drives the flows synchronously or with asyncio."""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import MethodType
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload
from urllib.parse import quote

import httpx
import numpy as np
import orjson
from tenacity import RetryCallState, retry_if_exception, retry_if_result, stop_after_attempt

from palaestra import codec
from palaestra.client.retries import Retries, _last_outcome, _may_resend
from palaestra.client.wire import (
    _JSON,
    _NODELAY,
    _Call,
    _default_url,
    _Flow,
    _headers,
    _png_shape,
    _Sleep,
)
from palaestra.errors import TransportError
from palaestra.registry import tasks_known
from palaestra.steps import ResetReply, StepReply

_log = logging.getLogger("palaestra.client")

P = ParamSpec("P")
T = TypeVar("T")


class _Runs(Protocol):
    """A client that runs a flow to its result (:class:`palaestra.client.http.Client`)."""

    def _drive(self, flow: _Flow[T]) -> T: ...


class _Awaits(Protocol):
    """A client that runs a flow as a coroutine (:class:`palaestra.client.http.AsyncClient`).
    The two drivers are named by what they do, not by their classes: the clients sit above
    this module (they subclass :class:`_Core`), and naming them here would be a circle."""

    def _drive(self, flow: _Flow[T]) -> Coroutine[Any, Any, T]: ...


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
        self, client: _Awaits, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, client: _Runs, owner: type | None = None) -> Callable[P, T]: ...
    def __get__(self, client: Any, owner: type | None = None) -> Any:
        return self if client is None else MethodType(self._run, client)


#: States a synthesis or evaluation job ends in (an interrupted or cancelled one may resume).
JOB_DONE = ("succeeded", "failed", "cancelled", "interrupted")


def _job(
    jobs: _JobRoutes,
    body: dict[str, Any],
    wait: bool,
    on_progress: Callable[[dict[str, Any]], None] | None,
    poll_s: float,
    timeout: float | None,
) -> _Flow[dict[str, Any]]:
    """Start a synthesis or evaluation job; with ``wait`` poll it (every ``poll_s``) until it
    ends, handing each new ``progress`` to ``on_progress``, and raise once the caller's
    ``timeout`` has passed (the job keeps running on the gateway)."""
    job = yield _Call("POST", jobs.path, body)
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: Any = None
    while wait:
        if on_progress is not None and job["progress"] != seen:
            seen = job["progress"]
            on_progress(seen)
        if job["status"] in JOB_DONE:
            break
        if deadline is not None and time.monotonic() > deadline:
            raise _job_timed_out(job, float(timeout or 0), jobs.noun)
        yield _Sleep(poll_s)
        job = yield _Call("GET", jobs.one(job["job_id"]))
    return job


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


class _JobRoutes:
    """The four routes every kind of gateway job has (server/routes/jobs.py), written once:
    one job, the caller's jobs, cancel, resume, under ``path``."""

    def __init__(self, path: str, noun: str) -> None:
        self.path, self.noun = path, noun

    def one(self, job_id: str) -> str:
        return f"{self.path}/{quote(job_id, safe='')}"

    def routes(
        self, *names: str
    ) -> tuple[
        _route[[str], dict[str, Any]],
        _route[[], list[dict[str, Any]]],
        _route[[str], dict[str, Any]],
        _route[[str], dict[str, Any]],
    ]:
        """(get, list, cancel, resume) as routes of the clients, with these ``names``."""
        one, path, noun = self.one, self.path, self.noun

        def get(client: Any, job_id: str) -> _Flow[dict[str, Any]]:
            return (yield _Call("GET", one(job_id)))

        def listing(client: Any) -> _Flow[list[dict[str, Any]]]:
            return (yield _Call("GET", path))["jobs"]

        def cancel(client: Any, job_id: str) -> _Flow[dict[str, Any]]:
            return (yield _Call("POST", f"{one(job_id)}/cancel"))

        def resume(client: Any, job_id: str) -> _Flow[dict[str, Any]]:
            return (yield _Call("POST", f"{one(job_id)}/resume"))

        get.__doc__ = f"The {noun} job (its status, progress and, once it ends, its result)."
        listing.__doc__ = f"The caller's {noun} jobs."
        cancel.__doc__ = (
            f"Stop the {noun} job: what it finished stays, and resume continues from there."
        )
        resume.__doc__ = f"Run an interrupted or cancelled {noun} job again, under the same id."
        for flow, name in zip((get, listing, cancel, resume), names, strict=True):
            flow.__name__ = flow.__qualname__ = name
        return _route(get), _route(listing), _route(cancel), _route(resume)


_SYNTH_JOBS = _JobRoutes("/v1/synth/jobs", "synthesis")
_EVAL_JOBS = _JobRoutes("/v1/evals", "evaluation")


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
        return (yield from _job(_SYNTH_JOBS, body, wait, on_progress, poll_s, timeout))

    synth_job, synth_jobs, cancel_synth_job, resume_synth_job = _SYNTH_JOBS.routes(
        "synth_job", "synth_jobs", "cancel_synth_job", "resume_synth_job"
    )

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
        return (yield from _job(_EVAL_JOBS, body, wait, on_progress, poll_s, timeout))

    eval_job, eval_jobs, cancel_eval, resume_eval = _EVAL_JOBS.routes(
        "eval_job", "eval_jobs", "cancel_eval", "resume_eval"
    )

    @_route
    def eval_results(
        self, job_id: str, offset: int = 0, limit: int = 1000
    ) -> _Flow[dict[str, Any]]:
        """The job's summary (None until it ends) and a page of its per-episode results."""
        path = f"{_EVAL_JOBS.one(job_id)}/results?offset={int(offset)}&limit={int(limit)}"
        return (yield _Call("GET", path))

    @_route
    def recording(self, run_id: str, sid: str) -> _Flow[dict[str, Any]]:
        return (yield _Call("GET", f"/v1/runs/{run_id}/sessions/{sid}"))
