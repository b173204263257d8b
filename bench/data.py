"""Data benchmarks: what recording costs a WebSocket step, and how fast a run exports.

- Recording overhead: the bench counter (with a 64x64 screenshot, so each step writes an image
  file too, and without) stepped over the gateway's WebSocket by ``RemoteEnv``, on a gateway
  recording every step and on one that records nothing (``--no-record``), in interleaved
  rounds; the ratio of the medians is the overhead (target: under 1.10).
- Export rate: a recorded run of short episodes (oracle play of ``count-to-3`` with
  screenshots) exported as chat JSONL, a Hugging Face dataset and Parquet, in episodes per
  second, against reading the same run back (parsing its events) in the same process.

Run: ``python -m palaestra.bench.data``.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from palaestra.bench import harness
from palaestra.bench.fixtures import ENV_ID, use_fixtures
from palaestra.client import RemoteEnv
from palaestra.server.runner import gateway_process

ADD = {"name": "add", "args": {"n": 0}}
TASK = "palaestra-bench/count-to-3"


def recording_overhead(steps: int = 1500, rounds: int = 5) -> dict[str, list[float]]:
    per_round = max(1, steps // rounds)
    warmup = max(20, per_round // 10)
    runners: dict[str, Callable[[], list[float]]] = {}
    runs = Path(tempfile.mkdtemp(prefix="palaestra-bench-runs-"))
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, runs, True)
        for record in (False, True):
            args = ["--workers", "1", "--log-level", "warning", "--runs-dir", str(runs)]
            url, _ = stack.enter_context(
                gateway_process(*args, *([] if record else ["--no-record"]))
            )
            for image in (0, 64):
                options = {"max_steps": 10**9, "image_size": image}
                env = RemoteEnv(ENV_ID, base_url=url, transport="ws", options=options)
                stack.callback(env.close)
                env.reset(seed=0)
                name = f"{'recorded' if record else 'unrecorded'}/{image or 'no'} image"
                step = functools.partial(env.step, ADD)
                runners[name] = functools.partial(harness.sample, step, per_round, warmup)
        return harness.interleave(runners, rounds, "recording overhead")


def record_run(runs: Path, episodes: int) -> Path:
    """A run of ``episodes`` oracle episodes with 64x64 screenshots, recorded by a gateway."""
    args = ["--workers", "1", "--log-level", "warning", "--runs-dir", str(runs)]
    with gateway_process(*args) as (url, _), httpx.Client(base_url=url, timeout=60) as http:
        body = {"task": TASK, "options": {"image_size": 64}, "run": "bench"}
        sid = http.post("/v1/sessions", json=body).json()["session_id"]
        for seed in range(episodes):
            http.post(f"/v1/sessions/{sid}/reset", json={"seed": seed})
            for action in ("add(3)", "done()"):
                http.post(f"/v1/sessions/{sid}/step", json={"action": action})
        http.delete(f"/v1/sessions/{sid}")
    return runs / "bench"


def export_rate(episodes: int = 200) -> dict[str, float]:
    import datasets  # noqa: F401  (imported before timing: its import is seconds, not export)

    from palaestra.data import episodes as reader
    from palaestra.data import export

    tmp = Path(tempfile.mkdtemp(prefix="palaestra-bench-export-"))
    try:
        run = record_run(tmp / "runs", episodes)
        rates = {}
        t0 = time.perf_counter()
        n = sum(1 for _ in reader.read_run(run))
        rates["read (baseline)"] = n / (time.perf_counter() - t0)
        for fmt in ("chat-jsonl", "hf", "parquet"):
            result = export.export(run, fmt, tmp / fmt)
            rates[fmt] = result.episodes / result.seconds
        return rates
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(steps: int = 1500, rounds: int = 5, episodes: int = 200) -> None:
    results = recording_overhead(steps, rounds)
    rows = []
    for image in ("no image", "64 image"):
        base = harness.ms(results[f"unrecorded/{image}"])
        rec = harness.ms(results[f"recorded/{image}"])
        rows.append([image, f"{base:.3f}", f"{rec:.3f}", harness.ratio(rec, base)])
    harness.print_table(
        f"recording overhead, WebSocket step on {ENV_ID} (target < 1.10x)",
        ["observation", "p50 ms unrecorded", "p50 ms recorded", "recorded / unrecorded"],
        rows,
    )
    rates = export_rate(episodes)
    base = rates["read (baseline)"]
    harness.print_table(
        f"export rate, {episodes} episodes of {TASK} with 64x64 screenshots",
        ["format", "episodes/s", "/ reading the run"],
        [[k, f"{v:.0f}", harness.ratio(v, base)] for k, v in rates.items()],
    )


if __name__ == "__main__":
    use_fixtures()  # the counter, here and in the gateway's workers
    main()
