"""The benchmark harness: its figures, timing, memory readings and table."""

import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from palaestra.bench import harness


def test_percentile_interpolates_and_p50_is_the_median():
    xs = [4.0, 1.0, 3.0, 2.0]
    assert harness.percentile(xs, 0.5) == statistics.median(xs) == 2.5
    assert harness.percentile(xs, 0.0) == 1.0
    assert harness.percentile(xs, 1.0) == 4.0
    assert harness.percentile([7.0], 0.99) == 7.0
    assert math.isnan(harness.percentile([], 0.5))
    assert harness.ms([0.001, 0.003]) == pytest.approx(2.0)
    assert harness.ms(list(range(101)), 0.9) == pytest.approx(90_000)


def test_ratio_and_describe():
    assert harness.ratio(6.0, 2.0) == "3.00x"
    assert harness.ratio(20_000, 190, 0, prefix="~") == "~105x"
    assert harness.ratio(None, 2.0) == harness.ratio(1.0, 0.0) == "n/a"
    assert harness.ratio(1.0, math.nan) == "n/a"
    line = harness.describe([0.001, 0.002, 0.003])
    assert line.startswith("n=3 p50=2.000 p90=") and line.endswith("max=3.000 ms")


def test_timings_sample_and_interleave():
    out = harness.Timings("reset")
    with out.timed("reset"):
        pass
    with out.timed("step"):
        pass
    with pytest.raises(ValueError), out.timed("step"):
        raise ValueError
    assert [len(out["reset"]), len(out["step"])] == [1, 1]
    out.extend({"step": [1.0]})
    assert out["step"][-1] == 1.0

    calls = []
    samples = harness.sample(lambda: calls.append(1), 5, warmup=3)
    assert len(samples) == 5 and len(calls) == 8 and min(samples) >= 0

    order: list[str] = []
    runners = {name: (lambda name=name: order.append(name) or [0.1]) for name in ("a", "b")}
    results = harness.interleave(runners, rounds=3)
    assert order == ["a", "b"] * 3
    assert results == {"a": [0.1] * 3, "b": [0.1] * 3}


def test_memory_of_a_process_tree():
    own = harness.pss_mb(tree=False)
    assert own > 1
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in harness.children(os.getpid())
        assert harness.pss_mb() > own
        assert harness.pss_mb(name="no-such-process-name") == 0
    finally:
        child.kill()
        child.wait()
    assert harness.cpu_s() > 0 and harness.machine_mb() > 0


def test_session_memory_opens_measures_and_closes():
    closed: list[int] = []

    class Session:
        def __init__(self, i: int) -> None:
            self.i, self.block = i, bytearray(8 * 2**20)  # touched: it counts in PSS
            self.block[::4096] = b"x" * len(self.block[::4096])

        def close(self) -> None:
            closed.append(self.i)

    memory = harness.SessionMemory(Session, 3, warm=1)
    with memory.opened() as grown:
        assert [s.i for s in grown.sessions] == [0, 1, 2, 3]
        assert grown.mb_per_session > 4
    assert closed == [0, 1, 2, 3]
    assert harness.SessionMemory(Session, 2).mb_per_session() > 4


def test_table_layout():
    table = harness.table("t", ("measure", "a", "b"), [("x", 1, "2.0x"), ("y", 3.5, "n/a")])
    assert table.row_count == 2
    assert [c.justify for c in table.columns] == ["left", "right", "right"]


def test_the_timing_half_imports_without_palaestra_or_rich(tmp_path: Path):
    """The BrowserGym baseline imports the harness as a sibling module in a venv without them."""
    bench = Path(harness.__file__).parent
    code = (
        "import sys; sys.modules['rich'] = None; sys.modules['palaestra'] = None\n"
        "import harness\n"
        "out = harness.Timings('step')\n"
        "with out.timed('step'): pass\n"
        "print(harness.describe(out['step']), harness.pss_mb() > 0)"
    )
    env = {**os.environ, "PYTHONPATH": str(bench)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("n=1 p50=") and done.stdout.strip().endswith("True")
