"""Evaluation runner speed: episodes per minute, overhead against a bare client loop, and how
many episodes a slow model keeps in flight.

1. **Throughput**: the MiniWoB oracle on 12 tasks (one episode each) through a gateway process
   with ``workers`` workers, at N = 1, 2, 4, 8 episodes in flight.
2. **Overhead**: the same 12 episodes played by the runner at N = 1 and by a bare loop (one
   ``RemoteEnv`` per episode, reset, the same oracle policy, close), in interleaved rounds, so
   the difference is what the runner adds: asyncio, result files, progress, the summary.
3. **In flight**: an ``openai:`` agent against a loopback OpenAI-compatible stub that takes
   ``model_s`` (1 s) per call, on the counter fixture at N = 32; the runner's in-flight count is
   sampled every 50 ms while episodes are still queued. A runner that let one slow call hold the
   others would show far fewer than 32.

Run: ``palaestra bench eval`` or ``python -m palaestra.bench.eval``.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.client import RemoteEnv
from palaestra.evals import EvalConfig, Runner, run_eval
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.server.runner import free_port, gateway_process
from palaestra.tasks import get_task

TASKS = (
    "click-button", "click-link", "click-checkboxes", "click-dialog", "click-tab",
    "enter-text", "enter-password", "login-user", "focus-text", "choose-list",
    "use-spinner", "simple-arithmetic",
)  # fmt: skip
MAX_STEPS = 10


def _config(url: str, out: Path, parallel: int, **kw: Any) -> EvalConfig:
    return EvalConfig(
        **{
            "suite": "miniwob",
            "tasks": list(TASKS),
            "agent": "oracle",
            "parallel": parallel,
            "max_steps": MAX_STEPS,
            "record": False,
            "url": url,
            "out": out,
            **kw,
        }
    )


def runner_round(url: str, parallel: int) -> tuple[float, float]:
    """(seconds, success rate) of the 12 episodes through the runner, in a fresh folder."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = run_eval(_config(url, Path(tmp), parallel))
        return time.perf_counter() - t0, summary.success_rate


def bare_round(url: str) -> float:
    """The same episodes, one after another, with nothing but ``RemoteEnv`` and the policy."""
    web = family("web")
    t0 = time.perf_counter()
    for name in TASKS:
        task = get_task(f"miniwob/{name}")
        env = RemoteEnv(
            task=f"miniwob/{name}", base_url=url, record=False, options={"max_steps": MAX_STEPS}
        )
        try:
            run_episode(env, web.policy("oracle"), task, seed=0, reset_options={})
        finally:
            env.close()
    return time.perf_counter() - t0


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
        timed = harness.interleave(
            {
                "bare RemoteEnv loop": lambda: [bare_round(url)],
                "runner, N = 1": lambda: [runner_round(url, 1)[0]],
            },
            rounds,
            "runner vs bare loop",
        )
        bare = min(timed["bare RemoteEnv loop"])
        mine = min(timed["runner, N = 1"])
        results["overhead_pct"] = (mine - bare) / bare * 100
        harness.print_table(
            f"Runner overhead on the same {len(TASKS)} episodes (best of {rounds})",
            ["loop", "seconds", "vs bare"],
            [
                ("bare RemoteEnv loop", f"{bare:.3f}", "1.00x"),
                ("runner, N = 1", f"{mine:.3f}", harness.ratio(mine, bare)),
                ("overhead", f"{results['overhead_pct']:+.1f}%", "target < 5%"),
            ],
        )
        flight = in_flight(url, parallel_model, model_s, steps=4)
        results["in_flight"] = flight
        harness.print_table(
            f"A {model_s:g} s model at N = {parallel_model} (counter fixture, 4 calls/episode)",
            ["figure", "value"],
            [(k.replace("_", " "), f"{v:.1f}") for k, v in flight.items()],
        )
    return results


if __name__ == "__main__":
    main()
