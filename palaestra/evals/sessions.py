"""Where the runner's episodes live: sessions on a gateway, through the async Python client.

The runner talks to a :class:`SessionFactory` only, so the gateway (its eval jobs) and
``palaestra eval`` without ``--url`` (a gateway in its own process) hand it
``server.evals.OwnSessions``: sessions made on the session manager directly, with no HTTP round
trip. The default, :class:`GatewaySessions`, opens one recorded session per episode with
:class:`palaestra.client.AsyncClient` (keep-alive connections, retries of busy answers) and
finds the run its recordings land in, so each episode links to its trajectory.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from palaestra.actions import ActionSet
from palaestra.client import AsyncClient
from palaestra.errors import PalaestraError
from palaestra.spaces import space_from_json
from palaestra.steps import ResetReply, StepReply


class EvalSession(Protocol):
    session_id: str | None
    action_set: ActionSet | None

    async def reset(self, seed: int | None) -> ResetReply: ...

    async def step(self, action: Any) -> StepReply: ...

    async def close(self) -> None: ...


class SessionFactory(Protocol):
    async def tasks(self, suite: str, split: str | None = None) -> list[dict[str, Any]]:
        """The suite's tasks as an agent may see them (``Task.agent_view``), only those of
        ``split`` if given (the split is private metadata, so the trusted side filters)."""
        ...

    async def open(self, task: str, *, options: dict[str, Any], record: bool) -> EvalSession: ...

    async def trajectory(self, session_id: str) -> str | None:
        """Where the recorded episode can be read (a gateway route), if it was recorded."""
        ...

    async def aclose(self) -> None: ...


class GatewaySession:
    def __init__(self, client: AsyncClient, made: dict[str, Any], action_set: Any) -> None:
        self.client = client
        self.session_id: str | None = made["session_id"]
        self.action_set: ActionSet | None = action_set

    async def reset(self, seed: int | None) -> ResetReply:
        assert self.session_id is not None
        return await self.client.reset(self.session_id, seed)

    async def step(self, action: Any) -> StepReply:
        assert self.session_id is not None
        return await self.client.step(self.session_id, action)

    async def close(self) -> None:
        if self.session_id is not None:
            sid, self.session_id = self.session_id, None
            with contextlib.suppress(PalaestraError):  # gone either way
                await self.client.close_session(sid)


class GatewaySessions:
    def __init__(
        self,
        url: str | None,
        api_key: str | None = None,
        timeout: float = 300.0,
        run: str | None = None,
        tags: dict[str, str] | None = None,
    ):
        """``run``: the named run (docs/data.md) the episodes are recorded in, with ``tags``."""
        self.client = AsyncClient(url, api_key, timeout)
        self._run_id: str | None = run
        self._tags = tags
        self._action_sets: dict[str, ActionSet | None] = {}

    async def tasks(self, suite: str, split: str | None = None) -> list[dict[str, Any]]:
        return await self.client.tasks(suite, split)

    async def open(self, task: str, *, options: dict[str, Any], record: bool) -> GatewaySession:
        made = await self.client.create_session(
            task=task, options=options, record=record, run=self._run_id, tags=self._tags
        )
        return GatewaySession(self.client, made, self._action_set(made))

    def _action_set(self, made: dict[str, Any]) -> ActionSet | None:
        """The env's action set, parsed once per env (every session of it publishes the same)."""
        env = made.get("env", "")
        if env not in self._action_sets:
            space = space_from_json(made["spaces"]["action"])
            self._action_sets[env] = getattr(space, "action_set", None)
        return self._action_sets[env]

    async def trajectory(self, session_id: str) -> str | None:
        """``/v1/runs/<run>/sessions/<sid>``; the run is looked up once (one per gateway)."""
        if self._run_id is None:
            with contextlib.suppress(PalaestraError):
                for run in await self.client.runs():
                    if session_id in run.get("sessions", []):
                        self._run_id = run["run_id"]
                        break
        if self._run_id is None:
            return None
        return f"/v1/runs/{self._run_id}/sessions/{session_id}"

    async def aclose(self) -> None:
        await self.client.aclose()
