"""Python clients of the gateway.

- :class:`Client` / :class:`AsyncClient`: the HTTP API, one method per route.
- :class:`RemoteEnv`: a real ``gymnasium.Env`` whose world lives behind the gateway (also
  ``gymnasium.make("palaestra/Remote-v0", env_id=...)``), over REST or a WebSocket.
- :class:`RemoteVectorEnv`: a ``gymnasium.vector.VectorEnv`` over a gateway pool.

Connections are kept alive with ``TCP_NODELAY`` set, and problem+json answers come back as the
same :mod:`palaestra.errors` classes the gateway raised, so ``except EnvNotFound`` works remotely.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import gymnasium as gym
import httpx
import numpy as np
import orjson
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from palaestra import codec
from palaestra.errors import PalaestraError, TransportError, from_problem
from palaestra.spaces import space_from_json

DEFAULT_URL = "http://127.0.0.1:8000"
_NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


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


#: States a synthesis job ends in.
JOB_DONE = ("succeeded", "failed")


class _JobWatch:
    """One poll's verdict on a job, for the sync and the async client alike: report new
    progress, say whether the job ended, raise once the caller's timeout has passed."""

    def __init__(
        self, on_progress: Callable[[dict[str, Any]], None] | None, timeout: float | None
    ) -> None:
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
            raise _job_timed_out(job, float(self.timeout or 0))
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


def _job_timed_out(job: dict[str, Any], timeout: float) -> TimeoutError:
    return TimeoutError(
        f"synthesis job {job['job_id']} is still {job['status']} after {timeout:g} s "
        f"(progress {job.get('progress')}); it keeps running on the gateway"
    )


def _session_body(
    env: str | None, task: str | None, options: Mapping[str, Any] | None, record: bool | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"options": dict(options or {})}
    if env is not None:
        body["env"] = env
    if task is not None:
        body["task"] = task
    if record is not None:
        body["record"] = record
    return body


class Client:
    """Synchronous HTTP client, one method per API route."""

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 300.0
    ) -> None:
        self.base_url = _default_url(base_url)
        self.api_key = api_key or os.environ.get("PALAESTRA_API_KEY")
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=_headers(api_key),
            timeout=timeout,
            transport=httpx.HTTPTransport(socket_options=_NODELAY),
        )

    def request(self, method: str, path: str, json: Any = None) -> Any:
        content = None if json is None else orjson.dumps(json)
        headers = {"content-type": "application/json"} if content is not None else None
        try:
            response = self._http.request(method, path, content=content, headers=headers)
        except httpx.TransportError as exc:
            raise TransportError(
                f"cannot reach the gateway at {self.base_url}: {exc}", url=self.base_url
            ) from None
        return _result(response)

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/v1/health")

    def envs(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/envs")["envs"]

    def suites(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/suites")["suites"]

    def tasks(self, suite: str) -> list[dict[str, Any]]:
        return self.request("GET", f"/v1/suites/{quote(suite, safe='')}/tasks")["tasks"]

    def create_session(
        self,
        env: str | None = None,
        task: str | None = None,
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
    ) -> dict[str, Any]:
        return self.request("POST", "/v1/sessions", _session_body(env, task, options, record))

    def reset(
        self, sid: str, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.request("POST", f"/v1/sessions/{sid}/reset", {"seed": seed, "options": options})

    def step(self, sid: str, action: Any) -> dict[str, Any]:
        return self.request("POST", f"/v1/sessions/{sid}/step", {"action": action})

    def screenshot(self, sid: str) -> np.ndarray:
        png = self.request("GET", f"/v1/sessions/{sid}/screenshot")
        return codec.image_from_bytes(png, _png_shape(png))

    def close_session(self, sid: str) -> None:
        self.request("DELETE", f"/v1/sessions/{sid}")

    def create_pool(
        self,
        size: int,
        env: str | None = None,
        task: str | None = None,
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
        **pool: Any,
    ) -> dict[str, Any]:
        """``pool`` takes ``placement``, ``warm``, ``min_size``, ``max_size`` (see the API)."""
        body = {**_session_body(env, task, options, record), "size": size, **pool}
        return self.request("POST", "/v1/pools", body)

    def reset_pool(
        self,
        pool_id: str,
        seed: int | list[int | None] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Any:
        body = {"seed": seed, "options": dict(options) if options is not None else None}
        return self.request("POST", f"/v1/pools/{pool_id}/reset", body)

    def step_pool(self, pool_id: str, actions: list[Any]) -> Any:
        return self.request("POST", f"/v1/pools/{pool_id}/step", {"actions": actions})

    def resize_pool(self, pool_id: str, size: int) -> Any:
        return self.request("POST", f"/v1/pools/{pool_id}/resize", {"size": size})

    def send_pool(self, pool_id: str, actions: list[Any], env_ids: list[int]) -> Any:
        body = {"actions": actions, "env_ids": env_ids}
        return self.request("POST", f"/v1/pools/{pool_id}/send", body)

    def recv_pool(self, pool_id: str, batch_size: int, timeout_s: float = 60.0) -> Any:
        body = {"batch_size": batch_size, "timeout_s": timeout_s}
        return self.request("POST", f"/v1/pools/{pool_id}/recv", body)

    def close_pool(self, pool_id: str) -> None:
        self.request("DELETE", f"/v1/pools/{pool_id}")

    def runs(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/runs")["runs"]

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
    ) -> dict[str, Any]:
        """Start a synthesis job; with ``wait`` poll it to the end and return the final job.

        A failed job is returned, not raised (its ``error`` says why, its ``report`` what was
        made); on success ``job["suite"]`` is the suite name to use in ``"suite/task_id"``.
        ``on_progress`` gets the job's ``progress`` dict whenever it changes.
        """
        body = _synth_body(domains, variants, tasks, seed, layouts, name, family)
        job = self.request("POST", "/v1/synth/jobs", body)
        watch = _JobWatch(on_progress, timeout)
        while wait and not watch.finished(job):
            time.sleep(poll_s)
            job = self.synth_job(job["job_id"])
        return job

    def synth_job(self, job_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/synth/jobs/{quote(job_id, safe='')}")

    def synth_jobs(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/synth/jobs")["jobs"]

    def recording(self, run_id: str, sid: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/runs/{run_id}/sessions/{sid}")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """Asynchronous HTTP client with the session and pool methods of :class:`Client`."""

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 300.0
    ) -> None:
        self.base_url = _default_url(base_url)
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=_headers(api_key),
            timeout=timeout,
            transport=httpx.AsyncHTTPTransport(socket_options=_NODELAY),
        )

    async def request(self, method: str, path: str, json: Any = None) -> Any:
        content = None if json is None else orjson.dumps(json)
        headers = {"content-type": "application/json"} if content is not None else None
        try:
            response = await self._http.request(method, path, content=content, headers=headers)
        except httpx.TransportError as exc:
            raise TransportError(
                f"cannot reach the gateway at {self.base_url}: {exc}", url=self.base_url
            ) from None
        return _result(response)

    async def health(self) -> dict[str, Any]:
        return await self.request("GET", "/v1/health")

    async def create_session(
        self,
        env: str | None = None,
        task: str | None = None,
        options: Mapping[str, Any] | None = None,
        record: bool | None = None,
    ) -> dict[str, Any]:
        return await self.request("POST", "/v1/sessions", _session_body(env, task, options, record))

    async def reset(
        self, sid: str, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        body = {"seed": seed, "options": options}
        return await self.request("POST", f"/v1/sessions/{sid}/reset", body)

    async def step(self, sid: str, action: Any) -> dict[str, Any]:
        return await self.request("POST", f"/v1/sessions/{sid}/step", {"action": action})

    async def close_session(self, sid: str) -> None:
        await self.request("DELETE", f"/v1/sessions/{sid}")

    async def synth(
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
    ) -> dict[str, Any]:
        """The asynchronous twin of :meth:`Client.synth`."""
        body = _synth_body(domains, variants, tasks, seed, layouts, name, family)
        job = await self.request("POST", "/v1/synth/jobs", body)
        watch = _JobWatch(on_progress, timeout)
        while wait and not watch.finished(job):
            await asyncio.sleep(poll_s)
            job = await self.synth_job(job["job_id"])
        return job

    async def synth_job(self, job_id: str) -> dict[str, Any]:
        return await self.request("GET", f"/v1/synth/jobs/{quote(job_id, safe='')}")

    async def synth_jobs(self) -> list[dict[str, Any]]:
        return (await self.request("GET", "/v1/synth/jobs"))["jobs"]

    async def aclose(self) -> None:
        await self._http.aclose()

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


class _WebSocket:
    """The session's WebSocket: one request/answer at a time, as the env API is sequential.

    websocket-client is used because it is plain blocking I/O on the caller's thread; the
    ``websockets`` sync client reads on a background thread, which costs a thread hop per
    message (about 0.2 ms per step here).
    """

    def __init__(self, client: Client, sid: str) -> None:
        import websocket

        url = client.base_url.replace("http", "ws", 1) + f"/v1/sessions/{sid}/ws"
        headers = [f"{k}: {v}" for k, v in _headers(client.api_key).items()]
        try:
            # orjson validates UTF-8 when it parses; websocket-client's own check is pure Python
            self._ws = websocket.create_connection(
                url,
                header=headers,
                sockopt=_NODELAY,
                enable_multithread=False,
                skip_utf8_validation=True,
            )
        except Exception as exc:
            raise TransportError(f"cannot open the WebSocket {url}: {exc}", url=url) from None

    def call(self, message: dict[str, Any]) -> Any:
        import websocket

        try:
            self._ws.send(orjson.dumps(message).decode())
            reply = orjson.loads(self._ws.recv())
        except (websocket.WebSocketException, OSError) as exc:
            raise TransportError(f"the session's WebSocket failed: {exc}") from None
        if isinstance(reply, dict) and "error" in reply:
            raise from_problem(reply["error"])
        return reply

    def close(self) -> None:
        self._ws.close()


class RemoteEnv(gym.Env[Any, Any]):
    """A ``gymnasium.Env`` whose world is a session on a palaestra gateway.

    ``transport="ws"`` keeps one WebSocket open for reset/step (lower latency); ``"http"`` uses
    keep-alive REST calls. Observations are rebuilt into numpy arrays matching the published
    spaces; ``info`` is returned as the gateway sent it.
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
    ) -> None:
        if transport not in ("http", "ws"):
            raise ValueError("transport must be 'http' or 'ws'")
        self.client = Client(base_url, api_key, timeout)
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
        self.action_space = space_from_json(made["spaces"]["action"])
        if transport == "ws":
            self._ws = _WebSocket(self.client, self.session_id)

    def _call(self, op: str, **payload: Any) -> dict[str, Any]:
        if self.session_id is None:
            raise PalaestraError("this RemoteEnv is closed")
        if self._ws is not None:
            return self._ws.call({"op": op, **payload})
        path = f"/v1/sessions/{self.session_id}/{op}"
        return self.client.request("POST", path, payload)

    def _obs(self, encoded: Any) -> Any:
        return conform(codec.decode(encoded), self.observation_space)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        result = self._call("reset", seed=seed, options=options)
        return self._obs(result["observation"]), result["info"]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        r = self._call("step", action=_jsonable_action(action))
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
    ) -> None:
        self.client = Client(base_url, api_key, timeout)
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
