"""Agents the runner drives, all behind the kernel's one protocol (``reset`` then ``act``).

An agent spec (``EvalConfig.agent``) names one of four kinds:

- a **scripted policy** of the suite's family (``oracle``, ``random``, ``noop``, ``competent``,
  an adversary...), from :meth:`palaestra.family.Family.policy`. Scripted policies read the full
  task (the oracle's data), so they are *privileged*: the runner plays them in its own process
  (the CLI's or the gateway's), and only their actions travel through the session;
- ``openai:MODEL``: an OpenAI-compatible chat model (:mod:`.openai_agent`);
- ``module:Class``: a user's class, built with ``agent_options`` as keyword arguments; its
  ``reset(task_view)`` gets the task as an agent may see it;
- ``http(s)://...``: an agent in another process or language (:class:`HttpAgent`).

Either way the runner sees a :class:`Driver`: coroutine ``reset``/``act`` whatever the agent is
(sync agents of users run in a thread so a slow one never blocks the other episodes), plus the
agent's token usage when it counts any.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import inspect
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from palaestra.errors import InvalidRequest
from palaestra.evals.context import EpisodeContext, ModelUnavailable
from palaestra.family import Family, families
from palaestra.family import family as get_family
from palaestra.policies import STOP, ReplayPolicy
from palaestra.resolve import resolve
from palaestra.tasks import Task


class Agent(Protocol):
    """What a user's agent implements (each method may also be a coroutine function)."""

    def reset(self, task_view: dict[str, Any]) -> Any: ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any: ...


def _guarded(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except StopIteration:
        return STOP


def did_you_mean(word: str, choices: Any) -> str:
    """``"; did you mean 'x'?"`` when ``word`` is a near miss of one of ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def agent_seed(seed: int, attempt: int) -> int:
    """The seed of a stochastic built-in agent in attempt ``attempt`` of episode seed ``seed``:
    the episode's seed in the first attempt, a different one (mixed from both) in each later
    one, so ``--attempts`` plays different episodes and pass@k means something."""
    if attempt == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}/{attempt}".encode()).digest()[:4], "big")


@dataclass
class AgentSpec:
    """A parsed ``EvalConfig.agent``: its kind, whether it is privileged, and its factory."""

    name: str
    kind: str  # "scripted" | "openai" | "class" | "http"
    privileged: bool
    make: Callable[[EpisodeContext], Any]
    #: the agent wants observations as the gateway sent them (images as base64), not numpy
    raw_observations: bool = False
    #: user code may block: run its sync methods in a thread
    threaded: bool = False
    shared: dict[str, Any] = field(default_factory=dict)
    #: two attempts of one (task, seed) can play differently (pass@k means something); False
    #: for deterministic agents (the oracle, noop, a policy without a seed). Model agents can
    #: always differ (even at temperature 0 endpoints are not deterministic)
    stochastic: bool = True
    #: one cheap request that shows the agent's endpoint answers and takes its key, made once
    #: before the first episode (raises :class:`ModelUnavailable`)
    probe: Callable[[], Awaitable[None]] | None = None
    #: what builds the agent, for checking its options up front (empty: not checked here)
    factories: list[Callable[..., Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def check_options(self, factories: list[Callable[..., Any]] | None = None) -> None:
        """Refuse options no factory of the agent takes, before any episode: a misspelled
        option would otherwise crash every episode alike."""
        chosen = factories if factories is not None else self.factories
        check_options(self.name, chosen, self.options)


def check_options(name: str, factories: list[Callable[..., Any]], options: dict[str, Any]) -> None:
    """InvalidRequest (field agent_options) naming options none of ``factories`` accepts, with
    a near miss and the options it does take; factories taking ``**kwargs`` accept anything."""
    if not options or not factories:
        return
    known: set[str] = set()
    for factory in factories:
        try:
            params = inspect.signature(factory).parameters.values()
        except (TypeError, ValueError):
            return  # a builtin or C factory: it will say so itself
        if any(p.kind is p.VAR_KEYWORD for p in params):
            return
        known |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    known.discard("self")
    unknown = sorted(set(options) - known)
    if unknown:
        hint = did_you_mean(unknown[0], known)
        takes = ", ".join(sorted(known)) or "none"
        raise InvalidRequest(
            f"agent {name!r} has no option {', '.join(map(repr, unknown))}{hint} "
            f"(its options: {takes})",
            field="agent_options",
        )


BUILTIN = ("oracle", "random", "noop")


def agent_names() -> list[str]:
    """Every agent spec a user may give, for error messages and ``--help``."""
    scripted = sorted({p for f in families().values() for p in _policy_names(f)})
    return [*scripted, "openai:MODEL", "module:Class", "http://HOST:PORT/PATH"]


def _policy_names(fam: Family) -> list[str]:
    try:
        return fam.policy_names()
    except Exception:  # a family whose policies module cannot import still lists the generic
        return list(BUILTIN)


def parse_agent(
    spec: str,
    family: str,
    options: dict[str, Any] | None = None,
    *,
    model_api_key: str | None = None,
    factory: Callable[..., Any] | None = None,
) -> AgentSpec:
    """``EvalConfig.agent`` -> :class:`AgentSpec`; an unknown name lists what exists.

    ``factory`` (a class or function given from Python) builds the agent instead, with the
    options as keyword arguments; ``spec`` then only names it in the results."""
    options = dict(options or {})
    if factory is not None:
        make = factory
        return AgentSpec(spec, "class", False, lambda ctx: make(**options), threaded=True)
    spec = spec.strip()
    if spec.startswith(("http://", "https://")):
        timeout = float(options.pop("timeout_s", 60.0))
        if options:
            check_options(spec, [lambda timeout_s=60.0: None], options)
        return AgentSpec(
            spec,
            "http",
            False,
            lambda ctx: HttpAgent(spec, timeout=timeout, episode=ctx.episode),
            raw_observations=True,
        )
    if spec.startswith("openai:"):
        from palaestra.evals.openai_agent import OpenAIAgent, OpenAISettings, probe

        settings = OpenAISettings.from_options(spec.removeprefix("openai:"), options, model_api_key)
        shared: dict[str, Any] = {}
        return AgentSpec(
            spec,
            "openai",
            False,
            lambda ctx: OpenAIAgent(settings, ctx, shared),
            raw_observations=True,
            shared=shared,
            probe=lambda: probe(settings, shared),
        )
    if ":" in spec:
        try:
            cls = resolve(spec)
        except Exception as exc:
            raise InvalidRequest(
                f"agent {spec!r}: cannot import it ({type(exc).__name__}: {exc}); an agent "
                "is a policy of the suite's family (oracle, random, noop, ...), openai:MODEL, "
                "module:Class or http://HOST:PORT/PATH",
                field="agent",
            ) from None
        if not callable(cls):
            raise InvalidRequest(f"agent {spec!r} is not a class or factory", field="agent")
        check_options(spec, [cls], options)
        return AgentSpec(spec, "class", False, lambda ctx: cls(**options), threaded=True)
    if family not in families():
        # a suite of envs without a Family descriptor (the bench fixture): its replay oracle
        if spec == "oracle":
            return AgentSpec(spec, "scripted", True, lambda ctx: ReplayPolicy(), stochastic=False)
        raise InvalidRequest(
            f"unknown agent {spec!r}: the {family!r} suite's envs have no family policies, "
            "only 'oracle' (a replayed oracle); agents: openai:MODEL, module:Class, "
            "http://HOST:PORT/PATH",
            field="agent",
        )
    fam = get_family(family)
    names = _policy_names(fam)
    if spec not in names:
        raise InvalidRequest(
            f"unknown agent {spec!r}{did_you_mean(spec, names)} for the {family} family; "
            f"agents: "
            f"{', '.join([*names, 'openai:MODEL', 'module:Class', 'http://HOST:PORT/PATH'])}",
            field="agent",
        )
    factory = None if spec == "oracle" else _policy_factory(fam, spec)
    return AgentSpec(
        spec,
        "scripted",
        True,
        lambda ctx: _scripted(fam, spec, ctx, options),
        stochastic=factory is not None and _takes_seed(factory),
        factories=[factory] if factory is not None else [],
        options={k: v for k, v in options.items() if k != "seed"},
    )


def _policy_factory(fam: Family, name: str) -> Callable[..., Any] | None:
    try:
        return {**fam._adversaries(), **fam._table()}.get(name)
    except Exception:  # a policies module that cannot import: the episode will say why
        return None


def oracle_factories(fam_name: str, tasks: list[Task]) -> list[Callable[..., Any]]:
    """The policies the oracles of ``tasks`` name (what the oracle agent's options reach)."""
    fam = families().get(fam_name)
    if fam is None:
        return []
    wanted = {t.oracle.policy for t in tasks if t.oracle is not None}
    found = [_policy_factory(fam, name) for name in sorted(wanted)]
    return [f for f in found if f is not None]


def _takes_seed(factory: Callable[..., Any]) -> bool:
    try:
        return "seed" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def _scripted(fam: Family, name: str, ctx: EpisodeContext, options: dict[str, Any]) -> Any:
    """A family policy; a seeded one (``random``) is seeded by the episode's seed and attempt
    (:func:`agent_seed`), or by the ``seed`` option mixed with the attempt."""
    opts = dict(options)
    factory = _policy_factory(fam, name) if name != "oracle" else None
    if factory is not None and _takes_seed(factory):
        opts["seed"] = agent_seed(int(opts.get("seed", ctx.seed)), ctx.attempt)
    return fam.policy(name, **opts)


class Driver:
    """One episode's agent as the runner drives it: coroutines, whatever the agent is."""

    def __init__(self, spec: AgentSpec, ctx: EpisodeContext, executor: Executor | None) -> None:
        self.spec = spec
        self.ctx = ctx
        self.executor = executor if spec.threaded else None
        self.agent = spec.make(ctx)

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if inspect.iscoroutinefunction(fn):
            return await fn(*args)
        if self.executor is not None:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.executor, _guarded, fn, *args)
        else:
            result = _guarded(fn, *args)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def reset(self) -> None:
        # scripted policies get the full task (they run on the trusted side), agents the view
        arg = self.ctx.task if self.spec.privileged else dict(self.ctx.view)
        await self._call(self.agent.reset, arg)

    async def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return await self._call(self.agent.act, observation, info)

    def usage(self) -> tuple[dict[str, int], int]:
        """(tokens, model calls) the agent counted (zero for agents without a model)."""
        tokens = getattr(self.agent, "tokens", None)
        calls = getattr(self.agent, "model_calls", 0)
        return (dict(tokens) if isinstance(tokens, dict) else {}), int(calls or 0)

    async def close(self) -> None:
        close = getattr(self.agent, "aclose", None) or getattr(self.agent, "close", None)
        if close is not None:
            result = close()
            if isinstance(result, Awaitable):
                await result


class HttpAgent:
    """An agent behind an HTTP endpoint, so agents in any language are evaluated the same way.

    The runner POSTs JSON to the URL: ``{"type": "reset", "episode": "task/seed/attempt",
    "task": <task view>}`` when an episode starts (the answer is ignored), then ``{"type":
    "act", "episode": ..., "observation": ..., "info": ...}`` per step; ``episode`` tells apart
    the episodes in flight. Observations are as the gateway sends them (images as base64
    PNG/JPEG with their shape). The answer is ``{"action": <any encoding the env accepts>}``;
    one without ``action`` is sent as it came, so the env reports it as ``last_action_error``.
    An endpoint that cannot be reached, or answers 5xx, makes the episode an error
    (``ModelUnavailable``).
    """

    def __init__(self, url: str, timeout: float = 60.0, episode: str = "") -> None:
        self.url = url
        self.episode = episode
        self.http = httpx.AsyncClient(timeout=timeout)

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        try:
            return await self.http.post(self.url, json={"episode": self.episode, **body})
        except httpx.TransportError as exc:
            raise ModelUnavailable(f"HTTP agent {self.url}: {type(exc).__name__}: {exc}") from None

    async def reset(self, task_view: dict[str, Any]) -> None:
        response = await self._post({"type": "reset", "task": task_view})
        if response.status_code >= 500:
            raise ModelUnavailable(f"HTTP agent {self.url} answered {response.status_code}")

    async def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        response = await self._post({"type": "act", "observation": observation, "info": info})
        if response.status_code >= 500:
            raise ModelUnavailable(f"HTTP agent {self.url} answered {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            return response.text  # not JSON: the env says why it is not an action
        if isinstance(answer, dict) and "action" in answer:
            return answer["action"]
        return answer

    async def aclose(self) -> None:
        await self.http.aclose()
