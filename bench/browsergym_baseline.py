"""BrowserGym baseline for the web benchmark.

Why this exists: to put our web envs' reset/step latency next to a reference point measured in
the same run, on the same machine: ServiceNow's BrowserGym running its own MiniWoB envs
(``browsergym-miniwob``) exactly as its users run them -- ``gymnasium.make("browsergym/miniwob.X")``
with the default observation (screenshot + AXTree + DOM snapshot, extracted on every step).

Facts about browsergym-core/-miniwob 0.14.3 that shape this file:

* It pins ``playwright==1.44.0`` (and greenlet 3.0.3, pyee 11), which would downgrade our
  playwright 1.65. So it lives in its own venv, ``.venv-browsergym`` (built on demand by
  :func:`ensure_browsergym_venv`), and :func:`measure_browsergym` runs this file as a script with
  that venv's python (``python bench/browsergym_baseline.py --tasks a,b --json``).
* ``env.reset()`` closes and relaunches Chromium every time, and launches *two* browsers: the
  task browser (``pw.chromium.launch(..., **pw_chromium_kwargs)``) and a chat-box browser
  (``browsergym.core.chat.Chat``) that gets no user kwargs. So the ``pw_chromium_kwargs=
  {"executable_path": ...}`` kwarg cannot redirect the binary (the chat browser would still look
  for Playwright's own download, which cannot be fetched here) and cannot add flags either
  (``args=`` collides with BrowserGym's own). Nothing is monkeypatched instead: we use
  Playwright's documented ``PLAYWRIGHT_BROWSERS_PATH`` env var pointing at a temporary folder laid
  out like a Playwright install (``chromium-<rev>/chrome-linux/chrome``, revision read from the
  installed Playwright's ``browsers.json``), whose ``chrome`` is a two-line shell script that
  execs the system Chromium (the headless shell when installed, as palaestra uses) with our
  flags. An empty ``DEPENDENCIES_VALIDATED`` marker skips
  Playwright's ldd-based host check, which cannot inspect a shell script.
* Playwright 1.44 was built for Chromium 125 and passes ``--headless``. With Debian's
  ``chromium-headless-shell`` (installed by ``make setup``) that is the lean headless build, as
  BrowserGym's users get from ``playwright install``; on the full ``/usr/bin/chromium`` (156) it
  would mean the heavier "new" headless mode.
* ``MINIWOB_URL`` (BrowserGym's convention) is a ``file://`` URL of the ``miniwob`` PyPI
  package's ``html/miniwob/`` folder, with a trailing slash.
* A step is ``noop(wait_ms=0)``: BrowserGym's no-op without the 1 s sleep that bare ``noop()``
  does by default. The step still includes BrowserGym's default 0.5 s ``pre_observation_delay``,
  task validation and the full observation extraction: that is BrowserGym's per-step cost.
* Memory per env is the summed PSS (proportional set size; RSS if PSS is unavailable) of every
  Chromium process under this process, sampled with one env open (both browsers).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    from palaestra.bench import harness
except ImportError:  # run as a script in the BrowserGym venv, which has no palaestra
    import harness  # type: ignore[no-redef]

#: the same browser build palaestra uses (envs/runtimes/browser.py:find_chromium), so the
#: comparison is of the platforms, not of two Chromium builds
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
CHROMIUM = HEADLESS_SHELL if os.access(HEADLESS_SHELL, os.X_OK) else "/usr/bin/chromium"
CHROMIUM_FLAGS = (
    "--no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
    "--disable-sync --no-first-run"
)
NOOP = "noop(wait_ms=0)"
PACKAGES = ("browsergym-miniwob",)
VENV = Path(__file__).resolve().parents[1] / ".venv-browsergym"
TIMEOUT_S = 1800.0


def ensure_browsergym_venv(venv: Path = VENV) -> Path:
    """Create ``venv`` with browsergym-miniwob installed if missing; return its python."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import browsergym.miniwob"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", *PACKAGES]
        subprocess.run(pip, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"cannot build {venv}: {exc}\n{exc.stderr or ''}") from exc
    return python


def miniwob_url() -> str:
    """``MINIWOB_URL`` if set, else a file:// URL of the installed miniwob package's HTML."""
    if os.environ.get("MINIWOB_URL"):
        return os.environ["MINIWOB_URL"]
    try:
        import miniwob
    except ImportError as exc:
        raise RuntimeError("MINIWOB_URL is unset and the miniwob package is missing") from exc
    html = Path(miniwob.__file__).parent / "html" / "miniwob"
    return html.as_uri() + "/"


def measure_browsergym(
    tasks: list[str],
    resets_per_task: int = 3,
    steps_per_reset: int = 3,
    pre_observation_delay: float | None = None,
) -> dict:
    """Run BrowserGym's own MiniWoB envs on ``tasks`` (e.g. ``["click-button"]``) with the system
    Chromium, in ``.venv-browsergym``; return per-operation latencies in seconds:
    ``{"reset": [...], "step": [...], "memory_mb_per_env": float | None}``.

    ``pre_observation_delay`` (seconds; None: BrowserGym's default 0.5 s sleep before each
    observation) is passed to ``gym.make``. Raises RuntimeError if BrowserGym cannot be
    installed or run.
    """
    python = ensure_browsergym_venv()
    env = {**os.environ, "MINIWOB_URL": miniwob_url()}
    script = str(Path(__file__).resolve())
    counts = ["--resets", str(resets_per_task), "--steps", str(steps_per_reset)]
    if pre_observation_delay is not None:
        counts += ["--pre-observation-delay", str(pre_observation_delay)]
    cmd = [str(python), script, "--tasks", ",".join(tasks), *counts, "--json"]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"BrowserGym baseline timed out after {TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        tail = proc.stderr[-4000:]
        raise RuntimeError(f"BrowserGym baseline failed (rc={proc.returncode}):\n{tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fake_playwright_browsers(root: Path) -> None:
    """Lay out ``root`` as a Playwright browsers folder whose chromium is the system one."""
    import playwright

    browsers = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    entries = json.loads(browsers.read_text())["browsers"]
    rev = next(b["revision"] for b in entries if b["name"] == "chromium")
    exe = root / f"chromium-{rev}" / "chrome-linux" / "chrome"
    exe.parent.mkdir(parents=True)
    exe.write_text(f'#!/bin/sh\nexec {CHROMIUM} {CHROMIUM_FLAGS} "$@"\n')
    exe.chmod(0o755)
    (exe.parents[1] / "DEPENDENCIES_VALIDATED").touch()


def _chromium_memory_mb() -> float | None:
    """Summed PSS (else RSS) in MB of the Chromium processes under this process."""
    return harness.pss_mb(name="chrom") or None


def _measure_here(tasks: list[str], resets: int, steps: int, delay: float | None = None) -> dict:
    """The measurement itself; runs inside the BrowserGym venv."""
    if not os.environ.get("MINIWOB_URL"):
        raise RuntimeError("MINIWOB_URL is not set")
    root = Path(tempfile.mkdtemp(prefix="bgym-browsers-"))
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(root)
    try:
        _fake_playwright_browsers(root)
        import browsergym.miniwob  # noqa: F401  (registers the gymnasium ids)
        import gymnasium as gym

        out = harness.Timings("reset", "step")
        memory: list[float] = []
        for task in tasks:
            kwargs: dict[str, Any] = {} if delay is None else {"pre_observation_delay": delay}
            env = gym.make(f"browsergym/miniwob.{task}", **kwargs)
            try:
                for seed in range(resets):
                    with out.timed("reset"):
                        env.reset(seed=seed)
                    out["step"] += harness.sample(functools.partial(env.step, NOOP), steps)
                    if seed == 0 and (mb := _chromium_memory_mb()) is not None:
                        memory.append(mb)
            finally:
                env.close()
        return {**out, "memory_mb_per_env": sum(memory) / len(memory) if memory else None}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="click-button,click-link,enter-text")
    parser.add_argument("--resets", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--pre-observation-delay", type=float, default=None)
    parser.add_argument("--json", action="store_true", help="print only the result as JSON")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    if _importable("browsergym.miniwob"):  # we are in the BrowserGym venv
        result = _measure_here(tasks, args.resets, args.steps, args.pre_observation_delay)
    else:  # run from our main venv: go through the BrowserGym venv
        result = measure_browsergym(tasks, args.resets, args.steps, args.pre_observation_delay)
    if args.json:
        print(json.dumps(result))
        return
    for op in ("reset", "step"):
        print(f"{op}: {harness.describe(result[op])}")
    print(f"memory_mb_per_env: {result['memory_mb_per_env']}")


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


if __name__ == "__main__":
    main()
