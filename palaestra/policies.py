"""The one ``Policy`` protocol every scripted policy and agent speaks, and the generic ones.

A policy is told the task at :meth:`Policy.reset` and answers each observation with an action
in any encoding the family's ActionSet accepts. Scripted policies (oracles, random, no-op,
adversaries) get the full :class:`~palaestra.tasks.Task` because they run on the worker side of
the trust boundary; agents get only :meth:`Task.agent_view`. Families put theirs in
``envs/<family>/policies.py`` under ``POLICIES``; :class:`palaestra.family.Family` finds them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from palaestra.tasks import Task


@runtime_checkable
class Policy(Protocol):
    def reset(self, task: Task | None) -> None: ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any: ...


#: What a family's ``POLICIES`` maps a name to: keyword options in, a fresh policy out.
PolicyFactory = Callable[..., Policy]


def scripted(task: Task | None, given: Sequence[Any] | None = None) -> list[Any]:
    """What a scripted policy plays: the steps it was given, else its task oracle's data."""
    if given is not None:
        return list(given)
    oracle = task.oracle if task is not None else None
    return list(oracle.data or []) if oracle is not None else []


class ReplayPolicy:
    """Plays the task oracle's fixed action list (``{"policy": "replay", "data": [...]}``),
    then ``then`` forever. With ``actions`` given, plays those instead (a mutant, a script)."""

    def __init__(self, actions: Sequence[Any] | None = None, then: Any = None) -> None:
        self.fixed = None if actions is None else list(actions)
        self.then = then
        self.actions: list[Any] = []

    def reset(self, task: Task | None) -> None:
        self.actions = scripted(task, self.fixed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.actions:
            return self.actions.pop(0)
        if self.then is None:
            raise StopIteration("the replayed action list is exhausted")
        return self.then


class ConstantPolicy:
    """Always the same action: a family's no-op (``noop()``, ``done()``, ``submit()``, ...)."""

    def __init__(self, action: Any) -> None:
        self.action = action

    def reset(self, task: Task | None) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return self.action


class SpacePolicy:
    """Valid actions drawn from a gymnasium space (a family's ``ActionSet.space()``), seeded."""

    def __init__(self, space: Any, seed: int = 0) -> None:
        self.space = space
        self.seed = seed

    def reset(self, task: Task | None) -> None:
        self.space.seed(self.seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return self.space.sample()


# ----- generic pieces for adversaries (cheap strategies a reward hacker tries) ------------------
#
# A family's ``ADVERSARIES`` (see :mod:`palaestra.family`) are usually built from these: a
# script computed from the task, a coroutine that reads observations as it goes, a policy that
# replays its last good action, and a wrapper that turns a policy's failure into giving up.


class ScriptPolicy:
    """Plays the actions ``build(task)`` returns at reset, then stops (the episode ends there,
    or the runner's step limit does): "claim success", "answer every candidate", "report
    infeasible with a stuffed reason" are each one such script."""

    def __init__(self, build: Callable[[Task | None], Sequence[Any]]) -> None:
        self.build = build
        self.actions: list[Any] = []

    def reset(self, task: Task | None) -> None:
        self.actions = list(self.build(task))

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if not self.actions:
            raise StopIteration("the script is played")
        return self.actions.pop(0)


#: ``script(task)`` -> a generator that yields actions and is sent each next observation
Coroutine = Callable[[Task | None], Generator[Any, dict[str, Any], None]]


class CoroutinePolicy:
    """A policy written as a generator: ``obs = yield action``. A generator that first yields
    ``None`` (``obs = yield``) is sent the first observation before its first action; one that
    yields an action at once acts blind. The policy stops when the generator returns. For
    adversaries that look before they act (read every value of a column, then answer)."""

    def __init__(self, script: Coroutine) -> None:
        self.script = script
        self.running: Generator[Any, dict[str, Any], None] | None = None
        self.started = False

    def reset(self, task: Task | None) -> None:
        self.running = self.script(task)
        self.started = False

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        assert self.running is not None, "reset() first"
        try:
            if not self.started:
                self.started = True
                first = next(self.running)
                return first if first is not None else self.running.send(observation)
            return self.running.send(observation)
        except StopIteration:
            raise StopIteration("the coroutine returned") from None


class RepeatLastPolicy:
    """Plays ``inner`` (typically the oracle) until it is about to play a *final* action
    (``is_final``: an answer, ``done``), then plays ``before`` and its last action that the env
    accepted again, ``times`` times, and ends with ``end``: "submit twice", "delete again",
    "repeat the last command". What it exposes is a verifier that counts a repeated effect as
    done once (a second booking, a second payment)."""

    def __init__(
        self,
        inner: Policy,
        is_final: Callable[[Any], bool],
        *,
        before: Sequence[Any] = (),
        times: int = 1,
        end: Any = None,
    ) -> None:
        self.inner = inner
        self.is_final = is_final
        self.before = list(before)
        self.times = times
        self.end = end
        self.last_good: Any = None
        self.previous: Any = None
        self.tail: list[Any] | None = None

    def reset(self, task: Task | None) -> None:
        self.inner.reset(task)
        self.last_good = self.previous = None
        self.tail = None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.previous is not None and not observation.get("last_action_error"):
            self.last_good = self.previous
        if self.tail is None:
            try:
                action = self.inner.act(observation, info)
            except StopIteration:
                action = None
            if action is not None and not self.is_final(action):
                self.previous = action
                return action
            repeat = [] if self.last_good is None else [*self.before, self.last_good] * self.times
            self.tail = [*repeat, *([] if self.end is None else [self.end])]
        self.previous = None
        if not self.tail:
            raise StopIteration("repeated")
        return self.tail.pop(0)


class GiveUpPolicy:
    """``inner``, but an exception from it (a scripted strategy that finds nothing to act on)
    ends the attempt with ``fallback`` (then stops) instead of crashing the run: adversaries are
    played with ``strict=False`` and their failure to act is a failed attack, not an error."""

    def __init__(self, inner: Policy, fallback: Any = None) -> None:
        self.inner = inner
        self.fallback = fallback
        self.gave_up = False

    def reset(self, task: Task | None) -> None:
        self.gave_up = False
        self.inner.reset(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.gave_up:
            raise StopIteration("gave up")
        try:
            return self.inner.act(observation, info)
        except StopIteration:
            raise
        except Exception:
            self.gave_up = True
            if self.fallback is None:
                raise StopIteration("gave up") from None
            return self.fallback


class _Stop:
    def __repr__(self) -> str:
        return "STOP"


#: what a policy's ``StopIteration`` becomes on its way to the loop (an exception cannot cross a
#: coroutine or a thread pool's future): the policy has no more actions
STOP: Any = _Stop()


@dataclass
class Episode:
    """What one policy did in one episode: the last reward, the score, steps and the end."""

    reward: float
    steps: int
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    observation: dict[str, Any]
    total_reward: float = 0.0
    #: what the policy played, in order (an adversary's trajectory, kept when it wins)
    actions: list[Any] = field(default_factory=list)
    #: steps whose observation carried a ``last_action_error`` (the env refused the action)
    action_errors: int = 0
    #: the policy ran out of actions (``STOP``) and no finishing action ended the episode
    stopped: bool = False

    @classmethod
    def start(cls, observation: dict[str, Any], info: dict[str, Any]) -> Episode:
        """An episode just reset: no step yet, the reset's observation and info."""
        return cls(0.0, 0, False, False, info, observation)


@dataclass(frozen=True)
class Act:
    """The loop asks the policy for its action (answered with it, or ``STOP``)."""

    observation: dict[str, Any]
    info: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """The loop asks the env to play ``action`` (answered with gymnasium's 5-tuple)."""

    action: Any


#: the loop as a generator: it yields what it needs, is sent the answer, returns the episode
Loop = Generator[Act | Step, Any, Episode]


def episode_loop(episode: Episode, limit: int, *, strict: bool = False, finish: Any = None) -> Loop:
    """The one episode loop every runner shares (validation, the demo, the benchmarks, the eval
    runner), written once without I/O: it yields :class:`Act` when it needs the policy's action
    and :class:`Step` when it needs the env's reply, so the same loop runs over a local env and
    a policy (:func:`drive`) or over a gateway session and a model agent (:func:`adrive`).

    ``episode`` starts as the reset left it (:meth:`Episode.start`) and is updated in place, so a
    caller whose policy raised mid-episode still has what was played. At most ``limit`` steps.
    A policy that stops (``STOP``) ends the episode, or plays ``finish`` when given (a family's
    ``done()``: the state is scored as it is). ``strict`` raises on the first
    ``last_action_error`` (a scripted plan that an env refuses is broken, not a low score).
    """
    e = episode
    while e.steps < limit:
        action = yield Act(e.observation, e.info)
        if action is STOP:
            if finish is None:
                e.stopped = True
                break
            action = finish
        e.actions.append(action)
        e.observation, reward, e.terminated, e.truncated, e.info = yield Step(action)
        e.steps += 1
        e.reward = float(reward)
        e.total_reward += e.reward
        error = e.observation.get("last_action_error")
        e.action_errors += bool(error)
        if strict and error:
            raise RuntimeError(f"step {e.steps} ({str(action)[:80]}): {error}")
        if e.terminated or e.truncated:
            break
    return e


async def adrive(
    loop: Loop,
    act: Callable[..., Awaitable[Any]],
    step: Callable[[Any], Awaitable[Any]],
) -> Episode:
    """Run :func:`episode_loop`, answering its requests with coroutines: ``act(observation,
    info)`` (a model agent), ``step(action)`` (a gateway session)."""
    answer: Any = None
    while True:
        try:
            request = loop.send(answer)
        except StopIteration as done:
            episode: Episode = done.value
            return episode
        if isinstance(request, Act):
            answer = await act(request.observation, request.info)
        else:
            answer = await step(request.action)


def drive(loop: Loop, act: Callable[..., Any], step: Callable[[Any], Any]) -> Episode:
    """:func:`adrive` with plain calls (a local or remote gymnasium env, a scripted policy):
    nothing in it suspends, so its coroutine finishes at the first ``send``."""

    async def acting(observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return act(observation, info)

    async def stepping(action: Any) -> Any:
        return step(action)

    running = adrive(loop, acting, stepping)
    try:
        running.send(None)
    except StopIteration as done:
        episode: Episode = done.value
        return episode
    raise AssertionError("nothing in drive() suspends: its coroutine ends at the first send")


def next_action(policy: Policy, observation: dict[str, Any], info: dict[str, Any]) -> Any:
    """``policy.act``, its ``StopIteration`` as ``STOP``."""
    try:
        return policy.act(observation, info)
    except StopIteration:
        return STOP


def run_episode(
    env: Any,
    policy: Policy,
    task: Task | None = None,
    *,
    seed: int | None = None,
    reset_options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    strict: bool = False,
    finish: Any = None,
) -> Episode:
    """Reset ``env`` and let ``policy`` act until the episode ends (:func:`episode_loop` over a
    gymnasium env: local, or a :class:`palaestra.client.RemoteEnv`). ``reset_options``
    defaults to ``{"task": task}``; remote envs pass ``{"task": "suite/id"}`` (or ``{}``: the
    session is on its task already). The limit is ``max_steps``, else the task's.
    """
    options = reset_options if reset_options is not None else ({"task": task} if task else None)
    observation, info = env.reset(seed=seed, options=options)
    policy.reset(task)
    limit = max_steps if max_steps is not None else (task.max_steps if task else 10**9)
    loop = episode_loop(Episode.start(observation, info), limit, strict=strict, finish=finish)
    return drive(loop, lambda obs, info: next_action(policy, obs, info), env.step)
