"""The evaluation runner: every (task, seed, attempt) of an :class:`EvalConfig`, N at a time.

Each episode is one asyncio task with its own gateway session, so a slow model call holds only
its own episode; at most ``parallel`` are in flight. A finished episode is appended to
``results.jsonl`` at once (see :mod:`.store`), so Ctrl-C, a cancel or a crash loses only the
episodes in flight, and running the same config again plays only what is missing.

Outcomes are sorted by whose they are. The agent's failures (a wrong answer, a malformed action)
are scored episodes. Errors are episodes that say nothing about the agent's skill, recorded as
``error`` with the exception and a short traceback: the agent's own code raising
(``error_kind`` "agent"), the model endpoint unreachable or refusing the key ("model": checked
once before the first episode, so a wrong ``base_url`` fails every episode at once instead of
retrying in each), the platform's (a worker crash, a dropped session, the gateway gone:
"infra", retried on a new session up to ``infra_retries`` times first). Errors never count in
success rates; the summary lists them apart. Options no agent factory takes are refused before
any episode.

Scripted policies (the oracle above all) are privileged: they are built here from the task as
:func:`palaestra.tasks.get_suite` loads it in this process, and only their actions reach the
session. When the suite cannot be loaded here (a remote gateway's synthesized suite), they are
refused: such an evaluation runs on the gateway (``POST /v1/evals``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from palaestra import codec
from palaestra.errors import InvalidRequest, PalaestraError, TaskNotFound, TransportError
from palaestra.evals import report
from palaestra.evals.agents import (
    STOP,
    AgentSpec,
    Driver,
    EpisodeContext,
    ModelUnavailable,
    did_you_mean,
    oracle_factories,
    parse_agent,
)
from palaestra.evals.config import EpisodeResult, EvalConfig, EvalSummary
from palaestra.evals.sessions import EvalSession, GatewaySessions, SessionFactory
from palaestra.evals.store import ResultStore
from palaestra.policies import Episode, adrive, episode_loop
from palaestra.tasks import Task, get_suite

#: public metadata keys (the task view's) that name a task's kind, first found wins
KIND_KEYS = ("domain", "app")
#: answered by the gateway when the session (not the agent) is at fault: retried
RETRY_STATUS = {404, 409, 429}


@dataclass
class ProgressEvent:
    done: int
    total: int
    succeeded: int
    scored: int
    errors: int
    skipped: int
    in_flight: int
    episodes_per_min: float
    elapsed_s: float
    last: EpisodeResult | None = None


Progress = Callable[[ProgressEvent], None]


class InfraError(Exception):
    """An episode the platform could not finish (retried on a new session)."""

    def __init__(self, detail: str, retry: bool = True) -> None:
        super().__init__(detail)
        self.retry = retry


class AgentCrashed(Exception):
    """The agent's own code raised: an error of the episode (``error_kind`` "agent"), with
    the agent's part of the traceback."""

    def __init__(self, detail: str, trace: str = "") -> None:
        super().__init__(detail)
        self.trace = trace


#: the runner's own folder: its frames are left out of an agent's traceback
_HERE = str(Path(__file__).parent)


def _plumbing(filename: str) -> bool:
    return filename.startswith(_HERE) or "/asyncio/" in filename or "/concurrent/" in filename


def short_traceback(exc: BaseException, keep: int = 6) -> str:
    """The last ``keep`` frames of ``exc``'s traceback outside the runner, and the exception."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _plumbing(f.filename)]
    head = "Traceback (most recent call last):\n" if frames else ""
    body = "".join(traceback.format_list(frames[-keep:]))
    return (head + body + "".join(traceback.format_exception_only(exc))).strip()[:4000]


@dataclass(frozen=True)
class Item:
    task: dict[str, Any]  # the agent view
    seed: int
    attempt: int

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.task["id"], self.seed, self.attempt)


class RunOptions(TypedDict, total=False):
    """How a run is watched, stopped and played, beside its config (every key optional)."""

    #: called with a :class:`ProgressEvent` after each episode
    progress: Progress | None
    #: set it to stop: no new episode starts, those in flight end, the summary is written
    cancel: threading.Event | None
    #: where the episodes' sessions are made (default: the config's gateway, over HTTP)
    sessions: SessionFactory | None
    #: a class (or factory) of your own to play instead of what ``config.agent`` names
    #: (which then only labels it)
    agent: Callable[..., Any] | None


def run_eval(config: EvalConfig, **options: Unpack[RunOptions]) -> EvalSummary:
    """Run an evaluation to the end (or to ``cancel``/Ctrl-C) in this thread's own event loop;
    returns the summary, also written to ``config.out``."""
    runner = Runner(config, **options)
    try:
        return asyncio.run(runner.run())
    except KeyboardInterrupt:
        if runner.store is None:
            raise
        return runner.finish(cancelled=True)


async def arun_eval(config: EvalConfig, **options: Unpack[RunOptions]) -> EvalSummary:
    """:func:`run_eval` as a coroutine, in the caller's event loop."""
    return await Runner(config, **options).run()


class Runner:
    def __init__(self, config: EvalConfig, **options: Unpack[RunOptions]) -> None:
        progress, cancel = options.get("progress"), options.get("cancel")
        sessions, agent = options.get("sessions"), options.get("agent")
        self.config = config
        self.agent_factory = agent
        self.progress = progress
        self.cancel = cancel or threading.Event()
        self._sessions = sessions
        self.store: ResultStore | None = None
        self.items: list[Item] = []
        self.started = time.monotonic()
        self.in_flight = 0
        self.finished_now = 0  # episodes finished by this run (not the resumed ones)
        self.summary: EvalSummary | None = None
        self.counts: Counter[str] = Counter()
        self.spec: AgentSpec | None = None

    # ----- set-up ------------------------------------------------------------------------------
    async def _prepare(self, sessions: SessionFactory) -> tuple[AgentSpec, dict[str, Task]]:
        c = self.config
        try:
            views = await sessions.tasks(c.suite, c.split)
        except TaskNotFound as exc:
            # the names it lists (quoted) after the unknown one: the nearest is suggested
            known = re.findall(r"'([^']+)'", exc.detail)[1:]
            hint = did_you_mean(c.suite, known)
            raise TaskNotFound(f"{exc.detail}{hint and f' ({hint[2:]})'}", field="suite") from None
        by_id = {v["id"]: v for v in views}
        if c.tasks:
            missing = [t for t in c.tasks if t not in by_id]
            if missing:
                some = ", ".join(list(by_id)[:20]) + (" ..." if len(by_id) > 20 else "")
                raise TaskNotFound(
                    f"suite {c.suite!r} has no task(s) {missing}"
                    f"{did_you_mean(missing[0], by_id)}; it has {len(by_id)}: {some}",
                    field="tasks",
                )
            views = [by_id[t] for t in c.tasks]
        if c.limit:
            views = views[: c.limit]
        if not views:
            where = f" in split {c.split!r}" if c.split else ""
            raise InvalidRequest(
                f"suite {c.suite!r} has no tasks{where}", field="split" if c.split else "suite"
            )
        family = views[0].get("family", "")
        spec = parse_agent(
            c.agent,
            family,
            c.agent_options,
            model_api_key=c.model_api_key,
            factory=self.agent_factory,
        )
        self.spec = spec
        full: dict[str, Task] = {}
        if spec.privileged:
            try:
                suite = get_suite(c.suite)
            except PalaestraError:
                raise InvalidRequest(
                    f"agent {c.agent!r} is a scripted policy that reads the task's oracle, and "
                    f"suite {c.suite!r} is not loadable in this process; run the evaluation on "
                    "the gateway (POST /v1/evals)",
                    field="agent",
                ) from None
            full = {t.id: t for t in suite.tasks}
        if spec.name == "oracle" and spec.privileged:
            played = [full[v["id"]] for v in views if v["id"] in full]
            spec.check_options(oracle_factories(family, played))
        else:
            spec.check_options()
        self.items = [
            Item(view, seed, attempt)
            for attempt in range(c.attempts)
            for seed in c.seeds
            for view in views
        ]
        return spec, full

    # ----- the run -----------------------------------------------------------------------------
    async def run(self) -> EvalSummary:
        c = self.config
        sessions = self._sessions or GatewaySessions(
            c.url, c.api_key, run=self.run_name(), tags=self.tags()
        )
        executor = ThreadPoolExecutor(max_workers=c.parallel, thread_name_prefix="eval-agent")
        spec: AgentSpec | None = None
        try:
            spec, full = await self._prepare(sessions)
            self.store = ResultStore(self.out(), c)
            todo = deque(i for i in self.items if not self.store.done(i.key))
            for item in self.items:  # what an earlier run of this config finished
                if item.key in self.store.results:
                    self._tally(self.store.results[item.key], 1)
            self._emit(None)
            if todo and spec.probe is not None:
                try:
                    await spec.probe()
                except ModelUnavailable as exc:
                    self._unplayable(todo, f"checked before the first episode: {exc}")
            workers = [
                asyncio.create_task(self._worker(todo, spec, full, sessions, executor))
                for _ in range(min(c.parallel, len(todo)))
            ]
            watch = asyncio.create_task(self._watch_cancel(workers))
            try:
                await asyncio.gather(*workers, return_exceptions=False)
            except asyncio.CancelledError:
                if not self.cancel.is_set():
                    raise
            finally:
                watch.cancel()
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
        finally:
            await _close_shared(spec)
            if self._sessions is None:
                await sessions.aclose()
            executor.shutdown(wait=False, cancel_futures=True)
        return self.finish(cancelled=self.cancel.is_set())

    def _unplayable(self, todo: deque[Item], detail: str) -> None:
        """Record every episode left as a model error without playing it (the endpoint check
        failed: each episode would retry its way to the same error)."""
        assert self.store is not None
        while todo:
            item = todo.popleft()
            view = item.task
            result = EpisodeResult(
                suite=self.config.suite, task=view["id"], seed=item.seed, attempt=item.attempt,
                agent=self.config.agent, family=view.get("family", ""), status="error",
                error_kind="model", error=detail[:2000], ended="error", started=time.time(),
            )  # fmt: skip
            self.store.append(result)
            self._tally(result, 1)
            self._emit(result)

    def tags(self) -> dict[str, str]:
        """The tags of the recorded run; the results folder among them, so the dashboard's
        viewer of an episode names its report."""
        c = self.config
        return {"agent": c.agent, "suite": c.suite, "results": str(self.out().resolve())}

    def run_name(self) -> str:
        """The recorded run of this evaluation: named by the config, else after its results
        folder (so a resumed evaluation records into the same run)."""
        c = self.config
        if c.run:
            return c.run
        digest = hashlib.sha256(str(self.out().resolve()).encode()).hexdigest()[:8]
        name = re.sub(r"[^A-Za-z0-9._-]", "-", f"{c.suite}-{c.agent}")[:50]
        return f"eval-{name}-{digest}"

    def out(self) -> Path:
        c = self.config
        if c.out is not None:
            return Path(c.out)
        safe = c.agent.replace("/", "_").replace(":", "_")
        return Path("runs") / "evals" / f"{c.suite}-{safe}"

    async def _watch_cancel(self, workers: list[asyncio.Task[None]]) -> None:
        while not self.cancel.is_set():
            await asyncio.sleep(0.1)
        for w in workers:
            w.cancel()

    async def _worker(
        self,
        todo: deque[Item],
        spec: AgentSpec,
        full: dict[str, Task],
        sessions: SessionFactory,
        executor: ThreadPoolExecutor,
    ) -> None:
        while todo and not self.cancel.is_set():
            item = todo.popleft()
            self.in_flight += 1
            try:
                result = await self._episode(item, spec, full, sessions, executor)
            finally:
                self.in_flight -= 1
            assert self.store is not None
            before = self.store.results.get(result.key)
            if before is not None:
                self._tally(before, -1)  # an errored episode played again
            self.store.append(result)
            self._tally(result, 1)
            self.finished_now += result.status != "skipped"
            self._emit(result)

    def _tally(self, r: EpisodeResult, sign: int) -> None:
        """Running counts for progress events (recounting every episode each time would make
        a long run quadratic)."""
        t = self.counts
        t["done"] += sign
        t[r.status] += sign
        t["succeeded"] += sign * (r.status == "ok" and r.success)

    def _emit(self, last: EpisodeResult | None) -> None:
        if self.progress is None or self.store is None:
            return
        elapsed = time.monotonic() - self.started
        t = self.counts
        self.progress(
            ProgressEvent(
                done=t["done"],
                total=len(self.items),
                succeeded=t["succeeded"],
                scored=t["ok"],
                errors=t["error"],
                skipped=t["skipped"],
                in_flight=self.in_flight,
                episodes_per_min=self.finished_now / elapsed * 60 if elapsed > 0 else 0.0,
                elapsed_s=elapsed,
                last=last,
            )
        )

    def finish(self, cancelled: bool = False) -> EvalSummary:
        """The summary of everything in the results file, written beside it."""
        c = self.config
        if self.store is None:
            raise InvalidRequest("the evaluation stopped before it started", field="suite")
        keys = {i.key for i in self.items}
        results = [r for k, r in self.store.results.items() if k in keys]
        summary = report.summarize(
            results,
            c.suite,
            c.agent,
            run=next((r.run for r in results if r.run), None),  # a run some episode is in
            stochastic=self.spec.stochastic if self.spec is not None else True,
            gateway=c.viewer_url or c.url,
            wall_s=sum(r.wall_s for r in results) / max(1, c.parallel)
            if not self.finished_now
            else time.monotonic() - self.started,
            expected=len(self.items),
            cancelled=cancelled,
        )
        report.write(self.store.out, summary, results)
        self.store.close()
        self.summary = summary
        return summary

    # ----- one episode ------------------------------------------------------------------------
    async def _episode(
        self,
        item: Item,
        spec: AgentSpec,
        full: dict[str, Task],
        sessions: SessionFactory,
        executor: ThreadPoolExecutor,
    ) -> EpisodeResult:
        view = item.task
        meta = view.get("metadata") or {}
        base = EpisodeResult(
            suite=self.config.suite,
            task=view["id"],
            seed=item.seed,
            attempt=item.attempt,
            agent=self.config.agent,
            family=view.get("family", ""),
            kind=str(next((meta[k] for k in KIND_KEYS if meta.get(k)), "")),
            difficulty=str(meta.get("difficulty") or ""),
            started=time.time(),
        )
        task = full.get(view["id"])
        if spec.privileged and (task is None or (spec.name == "oracle" and task.oracle is None)):
            return base.model_copy(
                update={"status": "skipped", "error": "this task has no oracle", "ended": ""}
            )
        retries = 0
        while True:
            t0 = time.monotonic()
            try:
                result = await self._play(base, item, spec, task, sessions, executor)
            except ModelUnavailable as exc:
                return self._failed(base, "model", str(exc), retries, t0)
            except InfraError as exc:
                if not exc.retry or retries >= self.config.infra_retries:
                    return self._failed(base, "infra", str(exc), retries, t0)
                retries += 1
                await asyncio.sleep(min(0.5 * 2**retries, 10.0))
                continue
            except Exception as exc:  # anything else unforeseen: this episode's error
                detail = f"{type(exc).__name__}: {exc}"
                return self._failed(base, "infra", detail, retries, t0, short_traceback(exc))
            result.retries = retries
            return result

    def _failed(
        self,
        base: EpisodeResult,
        kind: str,
        detail: str,
        retries: int,
        t0: float,
        trace: str | None = None,
    ) -> EpisodeResult:
        return base.model_copy(
            update={
                "status": "error",
                "error_kind": kind,
                "error": detail[:2000],
                "traceback": trace,
                "ended": "error",
                "retries": retries,
                "wall_s": round(time.monotonic() - t0, 4),
            }
        )

    async def _play(
        self,
        base: EpisodeResult,
        item: Item,
        spec: AgentSpec,
        task: Task | None,
        sessions: SessionFactory,
        executor: ThreadPoolExecutor,
    ) -> EpisodeResult:
        c = self.config
        view = item.task
        budget = int(view.get("max_steps") or 50)
        options: dict[str, Any] = {}
        if c.max_steps is not None and c.max_steps < budget:
            budget = options["max_steps"] = c.max_steps
        t0 = time.monotonic()
        session: EvalSession | None = None
        driver: Driver | None = None
        r = base.model_copy()
        try:
            session = await _infra(
                sessions.open(f"{c.suite}/{view['id']}", options=options, record=c.record)
            )
            r.session_id = session.session_id
            reset = await _infra(session.reset(item.seed))
            ctx = EpisodeContext(
                view.get("family", ""),
                view,
                item.seed,
                session.action_set,
                task,
                episode=f"{view['id']}/{item.seed}/{item.attempt}",
                attempt=item.attempt,
            )
            episode = Episode.start(reset["observation"], reset["info"])
            action_set = session.action_set

            async def act(observation: dict[str, Any], info: dict[str, Any]) -> Any:
                assert driver is not None
                shown = observation if spec.raw_observations else codec.decode(observation)
                return await _agent(driver.act(shown, info))

            async def step(action: Any) -> tuple[Any, ...]:
                assert session is not None
                reply = await _infra(session.step(_jsonable(action)))
                return _gym(reply)

            try:
                driver = await _agent(_build(spec, ctx, executor))
                await _agent(driver.reset())
                # a scripted plan that runs out ends with the family's finishing action, so the
                # state is scored as validation scores it; one step past the budget, so the
                # session's env (which has the budget) is the one that truncates
                loop = episode_loop(episode, budget + 1, finish=_finisher(action_set))
                _ended(r, await adrive(loop, act, step))
            except (AgentCrashed, ModelUnavailable) as exc:
                _crashed(r, exc)
                _played(r, episode)
        finally:
            if driver is not None:
                r.tokens, r.model_calls = driver.usage()
                with contextlib.suppress(Exception):
                    await driver.close()
            if session is not None:
                sid = session.session_id
                await asyncio.shield(session.close())
                if sid is not None and c.record:
                    with contextlib.suppress(Exception):
                        r.trajectory = await sessions.trajectory(sid)
                        r.run = _run_of(r.trajectory)
        r.wall_s = round(time.monotonic() - t0, 4)
        return r


def _run_of(trajectory: str | None) -> str | None:
    """The run named in a trajectory route ``/v1/runs/<run>/sessions/<sid>``."""
    parts = (trajectory or "").split("/")
    return parts[3] if len(parts) > 5 and parts[2] == "runs" else None


async def _infra(awaitable: Any) -> Any:
    """A gateway call; the platform's failures become :class:`InfraError` (retried unless the
    request itself was wrong, which a new session would not fix)."""
    try:
        return await awaitable
    except TransportError as exc:
        raise InfraError(exc.detail) from None
    except PalaestraError as exc:
        retry = exc.status >= 500 or exc.status in RETRY_STATUS
        raise InfraError(f"{type(exc).__name__}: {exc.detail}", retry=retry) from None
    except (OSError, TimeoutError) as exc:
        raise InfraError(f"{type(exc).__name__}: {exc}") from None


async def _agent(awaitable: Any) -> Any:
    """An agent call: the model endpoint's failures pass, the agent's own errors are its."""
    try:
        return await awaitable
    except (ModelUnavailable, asyncio.CancelledError):
        raise
    except StopIteration:
        return STOP
    except Exception as exc:
        raise AgentCrashed(f"{type(exc).__name__}: {exc}", short_traceback(exc)) from None


def _gym(reply: dict[str, Any]) -> tuple[Any, ...]:
    """A session's step reply as gymnasium's (observation, reward, terminated, truncated, info)."""
    keys = ("observation", "reward", "terminated", "truncated", "info")
    return tuple(reply[k] for k in keys)


def _played(r: EpisodeResult, episode: Episode) -> None:
    r.steps, r.reward, r.action_errors = episode.steps, episode.reward, episode.action_errors


def _ended(r: EpisodeResult, episode: Episode) -> None:
    """How the episode ended, and the verifier's score and verdict when the env ended it."""
    _played(r, episode)
    if episode.terminated or episode.truncated:
        r.terminated, r.truncated = episode.terminated, episode.truncated
        r.ended = "terminated" if r.terminated else "truncated"
        verdict = episode.info.get("verifier") or {}
        r.score = float(verdict.get("score", r.reward) or 0.0)
        r.success = bool(verdict.get("success", False))
        if verdict.get("error"):
            r.error = f"verifier: {verdict['error']}"
    else:  # the agent stopped without a finishing action, or the loop's limit was reached
        r.ended = "agent_stopped" if episode.stopped else "truncated"


def _crashed(r: EpisodeResult, exc: AgentCrashed | ModelUnavailable) -> None:
    """The agent's code raised, or its model endpoint failed, mid-episode: an error of the
    episode (not a failure of its skill) that keeps its session, so its recording is found."""
    model = isinstance(exc, ModelUnavailable)
    r.status, r.error_kind = "error", "model" if model else "agent"
    r.ended = "error" if model else "agent_error"
    r.error = str(exc)[:2000]
    r.traceback = None if model else getattr(exc, "trace", None)


#: actions that end an episode without arguments, in the families that have them
FINISHERS = ("done", "submit", "end_conversation", "finish")


def _finisher(action_set: Any) -> str | None:
    if action_set is None:
        return None
    for name in FINISHERS:
        primitive = action_set.primitives.get(name)
        if primitive is not None and not any(p.required for p in primitive.params):
            return f"{name}()"
    return None


async def _build(spec: AgentSpec, ctx: EpisodeContext, executor: ThreadPoolExecutor) -> Driver:
    return Driver(spec, ctx, executor)


def _jsonable(action: Any) -> Any:
    if hasattr(action, "to_json"):
        return action.to_json()
    if hasattr(action, "item") and not isinstance(action, dict | list | str):
        return action.item()
    return action


async def _close_shared(spec: AgentSpec | None) -> None:
    if spec is None:
        return
    client = spec.shared.get("client")
    if client is not None:
        with contextlib.suppress(Exception):
            await client.close()
