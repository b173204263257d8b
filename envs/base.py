"""The task lifecycle every family shares.

A family implements four hooks (``_setup``, ``_apply``, ``_observe``, ``state_probe``); this base
does the rest the same way everywhere: parse and validate the action against the family's
ActionSet, turn agent mistakes into ``last_action_error`` without touching the world, count steps
and truncate at the task's ``max_steps``, run the task's verifier at episode end (and after each
step for dense reward), and keep the full verifier report away from what the agent sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym

from palaestra.actions import Action, ActionSet
from palaestra.errors import ActionError, InvalidRequest, ResetNeeded
from palaestra.tasks import Task, get_task
from palaestra.verifiers import DeclarativeVerifier, StateProbe, VerifierResult

DEFAULT_MAX_STEPS = 100


class PalaestraEnv(gym.Env[dict, Any]):
    """Base of every family. Subclasses set ``family``, ``action_set`` and the spaces."""

    family: ClassVar[str] = ""
    action_set: ClassVar[ActionSet]
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        task: Task | Mapping[str, Any] | str | None = None,
        *,
        dense_reward: bool = False,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.task = _as_task(task)
        self.dense_reward = dense_reward
        self._max_steps_override = max_steps
        self.render_mode = render_mode
        self.action_space = self.action_set.space()
        self._steps = 0
        self._episode_over = True
        self._last_score = 0.0
        self.last_action_error = ""
        #: The full report of the last verification; privileged, never part of ``info``.
        self.last_verification: VerifierResult | None = None

    # ----- hooks for families -------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        """Build the world for a new episode from the task (``self.np_random`` is seeded)."""
        raise NotImplementedError

    def _apply(self, action: Action) -> bool:
        """Carry out a validated action. Return True when it ends the episode.

        Raise ActionError for a mistake found only while acting (no such element): the base
        reports it as ``last_action_error``; the family must leave the world unchanged.
        """
        raise NotImplementedError

    def _observe(self) -> dict[str, Any]:
        """The observation without ``last_action_error`` (the base adds it)."""
        raise NotImplementedError

    def state_probe(self) -> StateProbe:
        """Privileged read access to the world for verifiers."""
        raise NotImplementedError

    # ----- the shared lifecycle -----------------------------------------------------------
    @property
    def max_steps(self) -> int:
        """The task's budget; ``max_steps`` given to the constructor only lowers it (a task
        switched in by ``reset(options={"task": ...})`` keeps its own budget as the ceiling)."""
        if self._max_steps_override is not None:
            if self.task is not None:
                return min(self._max_steps_override, self.task.max_steps)
            return self._max_steps_override
        return self.task.max_steps if self.task else DEFAULT_MAX_STEPS

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        if "task" in options:
            task = _as_task(options.pop("task"))
            if task is not None and self.family and task.family != self.family:
                raise InvalidRequest(
                    f"task {task.id!r} is a {task.family} task; this env is {self.family}",
                    field="options.task",
                )
            self.task = task
        if options:
            raise InvalidRequest(
                f"unknown reset option(s) {sorted(options)}; reset takes only 'task'",
                field="options",
            )
        self._steps = 0
        self._last_score = 0.0
        self.last_action_error = ""
        self.last_verification = None
        self._setup(self.task)
        self._episode_over = False
        info = self._info()
        if self.task is not None:
            info["task"] = self.task.agent_view()
        return self._observation(), info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._episode_over:
            raise ResetNeeded("the episode is over (or never started): call reset() first")
        self._steps += 1
        self.last_action_error = ""
        terminated = False
        try:
            # several tool calls are applied in order, in this one step; the first that ends
            # the episode or fails stops the rest (see ActionSet.parse_many)
            actions = self.action_set.parse_many(action)
            for i, one in enumerate(actions):
                try:
                    terminated = bool(self._apply(one))
                except ActionError as exc:
                    if len(actions) > 1:
                        exc.detail = f"tool call {i + 1} of {len(actions)} failed: {exc.detail}"
                    raise
                if terminated:
                    break
        except ActionError as exc:
            self.last_action_error = exc.detail
        truncated = not terminated and self._steps >= self.max_steps
        info = self._info()
        reward = 0.0
        if terminated or truncated or self.dense_reward:
            result = self.verify()
            score = result.score
            reward = score - self._last_score if self.dense_reward else score
            self._last_score = score
            if terminated or truncated:
                info["verifier"] = result.public()
        self._episode_over = terminated or truncated
        return self._observation(), float(reward), terminated, truncated, info

    def verify(self) -> VerifierResult:
        """Score the current state with the task's verifier (privileged; run on the worker)."""
        if self.task is None or not self.task.verifier:
            result = VerifierResult(0.0, False, [], "this episode has no task, so no verifier")
        else:
            try:
                probe = self.state_probe()
            except Exception as exc:
                result = VerifierResult(0.0, False, [], f"state probe failed: {exc}")
            else:
                result = DeclarativeVerifier(self.task.verifier).verify(probe)
        self.last_verification = result
        return result

    def _observation(self) -> dict[str, Any]:
        obs = self._observe()
        obs["last_action_error"] = self.last_action_error[:2000]
        return obs

    def _info(self) -> dict[str, Any]:
        return {"step": self._steps, "max_steps": self.max_steps}


def _as_task(task: Task | Mapping[str, Any] | str | None) -> Task | None:
    if task is None or isinstance(task, Task):
        return task
    if isinstance(task, str):
        return get_task(task)
    try:
        return Task.model_validate(task)
    except Exception as exc:
        raise InvalidRequest(f"invalid task: {exc}", field="task") from None
