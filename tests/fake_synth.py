"""A stand-in for ``palaestra.synthesis.pipeline`` with the same API, for fast tests.

It writes a suite folder as the real pipeline does (``suite.json``, ``tasks/*.json``,
``report.json``) whose tasks are counting tasks on the benchmark fixture, so sessions on them
work without a browser. ``FAKE_SYNTH_DELAY`` (seconds per task) keeps a job running long enough
to be seen; ``FAKE_SYNTH_FAIL=1`` makes it raise, ``FAKE_SYNTH_FAIL=crash`` kills its own
process after the first task (the interpreter dying under the pipeline). ``FAKE_SYNTH_PROBE``
names a file where it writes what it sees of its process (pid, session, whether the gateway's
API keys are in its environment) and the pid of a "browser" it starts (a long ``sleep``), so a
test can check that stopping a job stops what the job started. :func:`install` puts it in
``sys.modules`` so ``from palaestra.synthesis import pipeline`` finds it; a
``sitecustomize.py`` calling it reaches child processes too (the gateway's synthesis jobs).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palaestra.synth_apps.spec import SpecError, domain_names

# the real report and progress types, so the fake's output has exactly the real shape
from palaestra.synthesis.events import Progress
from palaestra.synthesis.pipeline import SynthReport

CALLS: list[dict[str, Any]] = []


def synthesize(
    domains: list[str],
    *,
    variants: int,
    tasks: int,
    out: Path,
    seed: int = 0,
    layouts: tuple[str, ...] = ("desktop",),
    parallel: int = 2,
    name: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    author: Any = None,
    family: str = "web",
) -> SynthReport:
    CALLS.append(
        {
            "domains": domains,
            "variants": variants,
            "tasks": tasks,
            "layouts": layouts,
            "family": family,
        }
    )
    for d in domains:
        if d not in domain_names():
            raise SpecError(f"unknown domain {d!r}")
    if os.environ.get("FAKE_SYNTH_FAIL") == "1":
        raise RuntimeError("the fake pipeline exploded")
    if os.environ.get("FAKE_SYNTH_PROBE"):
        _probe(Path(os.environ["FAKE_SYNTH_PROBE"]))
    t0 = time.monotonic()
    name = name or f"fake-{'-'.join(domains)}"
    out = Path(out)
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(json.dumps({"name": name, "description": "fake synth"}))
    delay = float(os.environ.get("FAKE_SYNTH_DELAY", "0"))
    validated = 0
    for i in range(tasks):
        time.sleep(delay)
        if i % 3 == 2:  # every third task "fails validation", as real ones sometimes do
            if on_progress:
                on_progress(Progress("validate", i + 1, tasks, validated, i + 1 - validated))
            continue
        target = 1 + (seed + i) % 9
        task = {
            "id": f"count-{i}",
            "family": "bench",
            "env": "palaestra-bench/Overhead-v0",
            "instruction": f"Make the counter show {target}, then call done().",
            "setup": {"start": 0},
            "verifier": {"kind": "equals", "path": "count", "value": target},
            "oracle": [f"add({target})", "done()"],
            "public": {"domain": domains[0]},
            "metadata": {"source": "fake-synth", "domain": domains[0]},
        }
        (out / "tasks" / f"count-{i}.json").write_text(json.dumps(task))
        if os.environ.get("FAKE_SYNTH_FAIL") == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        validated += 1
        if on_progress:
            on_progress(Progress("validate", i + 1, tasks, validated, i + 1 - validated))
    dropped = {"oracle_failed": tasks - validated} if tasks > validated else {}
    seconds = time.monotonic() - t0
    report = SynthReport(
        suite=name,
        out=str(out),
        generated=tasks,
        validated=validated,
        dropped=dropped,
        seconds=round(seconds, 3),
        tasks_per_minute=round(60 * validated / seconds, 1) if seconds else 0.0,
        seconds_per_task=round(seconds / validated, 3) if validated else 0.0,
    )
    (out / "report.json").write_text(json.dumps(report.to_json()))
    return report


def _probe(path: Path) -> None:
    browser = subprocess.Popen(["sleep", "600"])  # what a pipeline starts: its browsers
    seen = {
        "pid": os.getpid(),
        "session_leader": os.getsid(0) == os.getpid(),
        "api_keys_seen": "PALAESTRA_API_KEYS" in os.environ,
        "browser": browser.pid,
    }
    path.write_text(json.dumps(seen))


def install() -> None:
    """Stand in for the pipeline: in ``sys.modules`` and as the package's attribute (which
    ``from palaestra.synthesis import pipeline`` reads once the real module was imported)."""
    import palaestra.synthesis

    sys.modules["palaestra.synthesis.pipeline"] = sys.modules[__name__]
    palaestra.synthesis.pipeline = sys.modules[__name__]
