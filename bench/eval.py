"""Evaluation runner speed: episodes per minute, overhead against a bare client loop, and how
many episodes a slow model keeps in flight.

1. **Throughput**: the MiniWoB oracle on 12 tasks (one episode each) through a gateway process
   with ``workers`` workers, at N = 1, 2, 4, 8 episodes in flight.
2. **Overhead**: the same episodes played by the runner at N = 1 and by a bare loop (one
   ``RemoteEnv`` per episode, reset, the same oracle policy, close), in interleaved rounds, so
   the difference is what the runner adds: asyncio, result files, progress, the summary (and
   against a loop of the fewest calls over one keep-alive ``Client``, which a ``RemoteEnv``
   per episode is not: it opens a connection per episode). On
   the 12 MiniWoB episodes, and on 60 of the counter fixture, whose env costs nothing, so the
   runner's own cost is as visible as it can be.
3. **In flight**: an ``openai:`` agent against a loopback OpenAI-compatible stub that takes
   ``model_s`` (1 s) per call, on the counter fixture at N = 32; the runner's in-flight count is
   sampled every 50 ms while episodes are still queued. A runner that let one slow call hold the
   others would show far fewer than 32.

4. **In process vs HTTP**: the runner at N = 4 on the 12 MiniWoB episodes and the 60 counter
   episodes, on a gateway in this process reached over HTTP (what ``palaestra eval`` without
   ``--url`` did) and on one played without HTTP (what it does now: ``local_sessions``), each
   with ``workers`` workers, in interleaved rounds.

Run: ``palaestra bench eval`` or ``python -m palaestra.bench.eval`` (``... in-process``: part 4
only).
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palaestra import codec
from palaestra.bench import harness
from palaestra.bench.fixtures import use_fixtures
from palaestra.bench.harness import console
from palaestra.client import Client, RemoteEnv
from palaestra.evals import EvalConfig, Runner, run_eval
from palaestra.evals.sessions import SessionFactory
from palaestra.family import family
from palaestra.policies import ReplayPolicy, run_episode
from palaestra.server.runner import free_port, gateway_process, gateway_thread, local_sessions
from palaestra.server.settings import Settings
from palaestra.tasks import get_task

TASKS = (
    "click-button", "click-link", "click-checkboxes", "click-dialog", "click-tab",
    "enter-text", "enter-password", "login-user", "focus-text", "choose-list",
    "use-spinner", "simple-arithmetic",
)  # fmt: skip
MAX_STEPS = 10


@dataclass(frozen=True)
class Episodes:
    """A fixed set of episodes both loops play: every task at every seed, one oracle each."""

    suite: str
    tasks: tuple[str, ...]
    seeds: tuple[int, ...]
    policy: Callable[[], Any]

    @property
    def count(self) -> int:
        return len(self.tasks) * len(self.seeds)


MINIWOB = Episodes("miniwob", TASKS, (0,), lambda: family("web").policy("oracle"))
#: the counter fixture: an env that costs nothing, so what is left is the platform and the loop
COUNTER = Episodes(
    "palaestra-bench", ("count-to-3", "count-to-5", "count-to-10"), tuple(range(20)), ReplayPolicy
)


def runner_round(
    url: str | None,
    parallel: int,
    eps: Episodes = MINIWOB,
    until_last: bool = False,
    sessions: SessionFactory | None = None,
) -> tuple[float, float]:
    """(seconds, success rate) of the episodes through the runner, in a fresh folder; with
    ``until_last``, the seconds to the last episode's end (without writing the summary, the
    report and its plot, a fixed ~0.2 s per run). ``sessions``: on those, not ``url``'s."""
    with tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(
            suite=eps.suite,
            tasks=list(eps.tasks),
            seeds=list(eps.seeds),
            agent="oracle",
            parallel=parallel,
            max_steps=MAX_STEPS,
            record=False,
            url=url,
            out=Path(tmp),
        )
        last = [0.0]
        t0 = time.perf_counter()
        summary = run_eval(
            config, progress=lambda e: last.__setitem__(0, time.perf_counter()), sessions=sessions
        )
        end = last[0] if until_last else time.perf_counter()
        return end - t0, summary.success_rate


def bare_round(url: str, eps: Episodes = MINIWOB) -> float:
    """The same episodes, one after another, with nothing but ``RemoteEnv`` and the policy."""
    t0 = time.perf_counter()
    for name in eps.tasks:
        ref = f"{eps.suite}/{name}"
        task = get_task(ref)
        for seed in eps.seeds:
            env = RemoteEnv(task=ref, base_url=url, record=False, options={"max_steps": MAX_STEPS})
            try:
                run_episode(env, eps.policy(), task, seed=seed, reset_options={})
            finally:
                env.close()
    return time.perf_counter() - t0


def client_round(url: str, eps: Episodes = MINIWOB) -> float:
    """The same episodes over one keep-alive ``Client``: the fewest calls that can play them
    (create, reset, steps, close), so only the runner's own machinery differs."""
    t0 = time.perf_counter()
    with Client(url) as client:
        for name in eps.tasks:
            ref = f"{eps.suite}/{name}"
            task = get_task(ref)
            for seed in eps.seeds:
                sid = client.create_session(
                    task=ref, options={"max_steps": MAX_STEPS}, record=False
                )["session_id"]
                policy = eps.policy()
                policy.reset(task)
                reply: Any = client.reset(sid, seed)
                while True:
                    action = policy.act(codec.decode(reply["observation"]), reply["info"])
                    reply = client.step(sid, action)
                    if reply["terminated"] or reply["truncated"]:
                        break
                client.close_session(sid)
    return time.perf_counter() - t0


def overhead(url: str, eps: Episodes, rounds: int) -> dict[str, float]:
    """Best-of-``rounds`` seconds of the two bare loops and of the runner at N = 1,
    interleaved."""
    timed = harness.interleave(
        {
            "bare": lambda: [bare_round(url, eps)],
            "client": lambda: [client_round(url, eps)],
            "runner": lambda: [runner_round(url, 1, eps, until_last=True)[0]],
        },
        rounds,
        f"runner vs bare loops, {eps.suite}",
    )
    bare, client, mine = min(timed["bare"]), min(timed["client"]), min(timed["runner"])
    return {
        "bare_s": bare,
        "client_s": client,
        "runner_s": mine,
        "overhead_pct": (mine - bare) / bare * 100,
        "overhead_vs_client_pct": (mine - client) / client * 100,
    }


# ----- a model that takes a second ------------------------------------------------------------


def _slow_model(seconds: float) -> tuple[str, Any]:
    """An OpenAI-compatible endpoint whose every answer is ``add(1)`` after ``seconds``."""
    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(body: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(seconds)
        call = {"id": "c", "type": "function", "function": {"name": "add", "arguments": '{"n":1}'}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }  # fmt: skip

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return f"http://127.0.0.1:{port}/v1", server


def in_flight(url: str, parallel: int, model_s: float, steps: int) -> dict[str, float]:
    """Sample the runner's in-flight count while episodes are still waiting to start."""
    base_url, server = _slow_model(model_s)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = EvalConfig(
                suite="palaestra-bench",
                agent="openai:stub",
                agent_options={"base_url": base_url, "screenshots": False},
                seeds=list(range(2 * parallel)),  # 3 tasks each: 6 N episodes
                parallel=parallel,
                max_steps=steps,
                record=False,
                url=url,
                out=Path(tmp),
            )
            runner = Runner(config)
            samples: list[int] = []
            thread = threading.Thread(target=lambda: asyncio.run(runner.run()))
            t0 = time.perf_counter()
            thread.start()
            total = len(config.seeds) * 3
            while thread.is_alive():
                time.sleep(0.05)
                finished = runner.finished_now
                if runner.in_flight and finished + runner.in_flight < total:
                    samples.append(runner.in_flight)  # episodes still queued: all N should run
            thread.join()
            wall = time.perf_counter() - t0
            summary = runner.summary
    finally:
        server.should_exit = True
    steady = samples[len(samples) // 10 :] or [0]  # past the first sessions' start
    return {
        "episodes": float(total),
        "wall_s": wall,
        "mean_in_flight": sum(steady) / len(steady),
        "min_in_flight": float(min(steady)),
        "max_in_flight": float(max(samples or [0])),
        "episodes_per_min": total / wall * 60,
        "errors": float(summary.errors if summary else -1),
    }


def http_vs_local(
    url: str, sessions: SessionFactory, eps: Episodes, parallel: int, rounds: int
) -> tuple[float, float]:
    """Best-of-``rounds`` episodes per minute of the runner over HTTP and in process."""
    timed = harness.interleave(
        {
            "http": lambda: [runner_round(url, parallel, eps, True)[0]],
            "local": lambda: [runner_round(None, parallel, eps, True, sessions)[0]],
        },
        rounds,
        f"in process vs HTTP, {eps.suite}",
    )
    return eps.count / min(timed["http"]) * 60, eps.count / min(timed["local"]) * 60


def in_process(workers: int = 2, rounds: int = 3, parallel: int = 4) -> dict[str, float]:
    """Episodes per minute of the runner on a gateway in this process, over HTTP and not."""
    results: dict[str, float] = {}
    settings = Settings(workers=workers, record=False)
    with gateway_thread(settings) as url, local_sessions(settings) as sessions:
        console.print(f"warming up both gateways' {workers} workers ...")
        for eps in (MINIWOB, COUNTER):
            runner_round(url, parallel, eps)
            runner_round(None, parallel, eps, sessions=sessions)
        rows = []
        for eps in (MINIWOB, COUNTER):
            http, local = http_vs_local(url, sessions, eps, parallel, rounds)
            results[f"http_episodes_per_min_{eps.suite}"] = http
            results[f"in_process_episodes_per_min_{eps.suite}"] = local
            rows.append(
                (f"{eps.suite}: {eps.count} episodes", f"{http:.1f}", f"{local:.1f}",
                 harness.ratio(local, http))
            )  # fmt: skip
    harness.print_table(
        f"palaestra eval's own gateway at N = {parallel}, {workers} workers (best of {rounds})",
        ["episodes", "over HTTP ep/min", "in process ep/min", "in process vs HTTP"],
        rows,
    )
    return results


def main(
    workers: int = 2,
    rounds: int = 3,
    levels: tuple[int, ...] = (1, 2, 4, 8),
    parallel_model: int = 32,
    model_s: float = 1.0,
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with gateway_process("--workers", str(workers)) as (url, _proc):
        console.print(f"warming up {workers} workers' browsers ...")
        runner_round(url, max(levels))
        bare_round(url, COUNTER)  # every worker's first session (imports) out of the way
        rows = []
        for n in levels:
            times, rates = [], []
            for _ in range(rounds):
                seconds, rate = runner_round(url, n)
                times.append(seconds)
                rates.append(rate)
            best = min(times)
            results[f"episodes_per_min_n{n}"] = len(TASKS) / best * 60
            rows.append(
                (f"N = {n}", f"{len(TASKS) / best * 60:.1f}", f"{best:.2f}", f"{min(rates):.2f}")
            )
        base = results[f"episodes_per_min_n{levels[0]}"]
        harness.print_table(
            f"MiniWoB oracle, {len(TASKS)} tasks, {workers} workers (best of {rounds} rounds)",
            ["episodes in flight", "episodes/min", "seconds", "success", "vs N = 1"],
            [
                (*r, harness.ratio(results[f"episodes_per_min_n{n}"], base))
                for r, n in zip(rows, levels, strict=True)
            ],
        )
        overheads = []
        for eps in (MINIWOB, COUNTER):
            o = overhead(url, eps, rounds)
            results[f"overhead_pct_{eps.suite}"] = o["overhead_pct"]
            results[f"overhead_vs_client_pct_{eps.suite}"] = o["overhead_vs_client_pct"]
            overheads.append(
                (
                    f"{eps.suite}: {eps.count} episodes",
                    f"{o['bare_s']:.3f}",
                    f"{o['client_s']:.3f}",
                    f"{o['runner_s']:.3f}",
                    f"{o['overhead_pct']:+.1f}%",
                    f"{o['overhead_vs_client_pct']:+.1f}%",
                )
            )
        harness.print_table(
            f"Runner at N = 1 vs bare loops on the same episodes (best of {rounds})",
            [
                "episodes",
                "RemoteEnv loop s",
                "one-Client loop s",
                "runner s",
                "vs RemoteEnv (target < 5%)",
                "vs one Client",
            ],
            overheads,
        )
        flight = in_flight(url, parallel_model, model_s, steps=4)
        results["in_flight"] = flight
        harness.print_table(
            f"A {model_s:g} s model at N = {parallel_model} (counter fixture, 4 calls/episode)",
            ["figure", "value"],
            [(k.replace("_", " "), f"{v:.1f}") for k, v in flight.items()],
        )
    results["in_process"] = in_process(workers, rounds)
    return results


if __name__ == "__main__":
    import sys

    use_fixtures()  # the counter, here and in the gateway's workers
    in_process() if sys.argv[1:] == ["in-process"] else main()
