"""Gymnasium envs whose worlds live behind the gateway: :class:`RemoteEnv` (a session, over REST
or a WebSocket) and :class:`RemoteVectorEnv` (a gateway pool)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from palaestra import codec
from palaestra.client.http import Client
from palaestra.client.retries import Retries
from palaestra.client.routes import _structured
from palaestra.client.ws import _WebSocket
from palaestra.errors import PalaestraError
from palaestra.spaces import json_text_keys, space_from_json
from palaestra.spaces import structured as structured_space
from palaestra.steps import ResetReply, StepReply


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
