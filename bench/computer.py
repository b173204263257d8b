"""Computer env speed: reset, GUI and code steps, memory, and fresh sandbox vs the reset path.

Measured in one process, for real (Xvfb, openbox, xterm/mousepad in bubblewrap):

- reset p50 on a terminal task and an editor task (home restored, sandbox, WM and app started,
  first observation with a still screen);
- GUI step p50 (a click or a key, the settle pause, screenshot and window list) and code step
  p50 (``run_shell`` through the sandbox, with its observation);
- a fresh session (new env: Xvfb, uid, template home, then the first reset) against the reset
  path, as a ratio; OSWorld's VM snapshot revert takes tens of seconds;
- memory per session (PSS growth of this process and its children, Xvfb and the apps included)
  and the sessions a 2-core machine holds: the lower of the CPU bound (each session stepping
  once a second) and the memory bound (the machine's memory less 4 GB).

Run: ``palaestra bench computer`` or ``python -m palaestra.bench.computer``.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from palaestra.bench.web import _pss_mb
from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.tasks import all_tasks

console = Console()
#: memory left for sessions: this machine's, less 4 GB for the system, gateway and workers
MACHINE_MB = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20 - 4096
OSWORLD_REVERT_MS = 20_000  # a VM snapshot revert: "tens of seconds" (issue 5)


def _ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1e3 if xs else float("nan")


def _cpu_s(env: ComputerEnv) -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    xvfb = 0.0
    if env.display.proc is not None:
        with open(f"/proc/{env.display.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        xvfb = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + xvfb


def measure(resets: int) -> dict[str, Any]:
    tasks = {t.id: t for t in all_tasks()}
    term, editor = tasks["terminal-mkdir"], tasks["append-line-in-editor"]
    out: dict[str, list[float]] = {k: [] for k in ("reset_term", "reset_editor", "gui", "code")}
    out["fresh"], out["cpu_step"] = [], []
    env = ComputerEnv(term)
    env.reset(seed=0)
    try:
        for i in range(resets):
            for key, task in (("reset_term", term), ("reset_editor", editor)):
                t = time.perf_counter()
                env.reset(seed=i, options={"task": task})
                out[key].append(time.perf_counter() - t)
            for action in ("click(500, 300)", "key('End')", "move(200, 200)"):
                cpu = _cpu_s(env)
                t = time.perf_counter()
                obs, *_ = env.step(action)
                out["gui"].append(time.perf_counter() - t)
                out["cpu_step"].append(_cpu_s(env) - cpu)
                assert not obs["last_action_error"], obs["last_action_error"]
            for cmd in ("echo hi", "ls -la ~"):
                t = time.perf_counter()
                obs, *_ = env.step({"name": "run_shell", "args": {"cmd": cmd}})
                out["code"].append(time.perf_counter() - t)
    finally:
        env.close()
    for i in range(max(3, resets // 3)):
        t = time.perf_counter()
        fresh = ComputerEnv(term)
        fresh.reset(seed=i)
        out["fresh"].append(time.perf_counter() - t)
        fresh.close()
    return out


def measure_memory(sessions: int = 4) -> float:
    base = _pss_mb(os.getpid())
    envs = []
    tasks = {t.id: t for t in all_tasks()}
    for i in range(sessions):
        env = ComputerEnv(tasks["append-line-in-editor" if i % 2 else "terminal-mkdir"])
        env.reset(seed=i)
        envs.append(env)
    time.sleep(0.5)
    grown = (_pss_mb(os.getpid()) - base) / sessions
    for env in envs:
        env.close()
    return grown


def main(resets: int = 10) -> dict[str, Any]:
    out = measure(resets)
    memory = measure_memory()
    reset = _ms(out["reset_term"])
    fresh = _ms(out["fresh"])
    cpu_ms = _ms(out["cpu_step"])
    cpu_bound = int(2 * 1000 / cpu_ms) if cpu_ms > 0 else 0
    mem_bound = int(MACHINE_MB / memory) if memory > 0 else 0

    table = Table(title="palaestra/computer-v0 (1024x768, Xvfb + openbox + apps in bubblewrap)")
    for col in ("measure", "value", "note"):
        table.add_column(col, justify="right")
    table.add_row("reset p50 (terminal task)", f"{reset:.0f} ms", "target < 500 ms")
    table.add_row("reset p50 (editor task)", f"{_ms(out['reset_editor']):.0f} ms", "mousepad")
    table.add_row("GUI step p50", f"{_ms(out['gui']):.0f} ms", "action + settle + screenshot")
    table.add_row("code step p50", f"{_ms(out['code']):.0f} ms", "run_shell + observation")
    table.add_row("CPU per GUI step", f"{cpu_ms:.0f} ms", "this process, children, Xvfb")
    table.add_row("memory per session", f"{memory:.0f} MB", "PSS growth, 4 sessions")
    table.add_row(
        "sessions per 2-core machine",
        str(min(cpu_bound, mem_bound)),
        f"CPU bound {cpu_bound} (1 step/s each), memory bound {mem_bound} "
        f"({MACHINE_MB / 1024:.0f} GB for sessions)",
    )
    console.print(table)

    ratio = Table(title="starting a fresh sandbox vs the reset path")
    for col in ("path", "p50 ms", "ratio to reset"):
        ratio.add_column(col, justify="right")
    ratio.add_row("reset (Xvfb kept, home restored)", f"{reset:.0f}", "1.0x")
    ratio.add_row("fresh session (Xvfb, uid, home)", f"{fresh:.0f}", f"{fresh / reset:.1f}x")
    ratio.add_row(
        "OSWorld VM snapshot revert", f"~{OSWORLD_REVERT_MS}", f"~{OSWORLD_REVERT_MS / reset:.0f}x"
    )
    console.print(ratio)
    return {
        "reset_ms": reset,
        "reset_editor_ms": _ms(out["reset_editor"]),
        "gui_step_ms": _ms(out["gui"]),
        "code_step_ms": _ms(out["code"]),
        "fresh_ms": fresh,
        "fresh_over_reset": fresh / reset,
        "memory_mb": memory,
        "sessions_per_2_cores": min(cpu_bound, mem_bound),
    }


if __name__ == "__main__":
    main()
