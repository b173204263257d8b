"""Office apps on the desktop: reset with the document open, GUI steps with and without the
tree, memory per session, sessions per 2 cores.

Measured in one process, for real (LibreOffice Calc, Writer and Impress in the computer
family's bubblewrap sandbox), on the first task of each app's templates
(``office.suite.app_tasks``):

- reset p50 per app with the task's document open (home restored, sandbox, WM, soffice on the
  worker's warmed profile, until the document has painted and the screen is still) against a
  fresh start of the app on an empty profile (the same reset with ``~/.config/libreoffice``
  removed by the task's setup, so soffice does its first-start work), as a ratio; OSWorld
  reverts a VM snapshot instead (tens of seconds);
- GUI step p50 in Calc (a key or a click, settle, screenshot, window list) with the
  accessibility tree (``a11y_tree``, a page of cells, menus and toolbars) against without it;
- memory per session: the PSS of the sandbox's processes (soffice, openbox, the buses) and its
  X server, with three office sessions open at once (PSS shares their common pages);
- sessions per 2-core machine: the lower of the CPU bound (each session stepping once a second,
  from the CPU seconds of a GUI step) and the memory bound (the machine's memory less 4 GB).

Run: ``palaestra bench office`` or ``python -m palaestra.bench.office``.
"""

from __future__ import annotations

from typing import Any

from palaestra.bench import harness
from palaestra.bench.computer import MACHINE_MB, OSWORLD_REVERT_MS, measure_tree_steps
from palaestra.bench.harness import ms
from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.office import suite
from palaestra.envs.computer.office.template import APPS
from palaestra.tasks import Task

#: a Calc step: move the cell cursor and back, click a cell
CALC_STEPS = ("key('Down')", "key('Up')", "click(300, 300)")


def first_task(app: str) -> Task:
    return suite.app_tasks(app)[0]


def cold(task: Task) -> Task:
    """The task with an empty LibreOffice profile: its setup removes the warmed one first."""
    setup = {**task.setup, "commands": ["rm -rf ~/.config/libreoffice"]}
    return task.model_copy(update={"id": task.id + "/cold", "setup": setup})


def measure_resets(resets: int) -> harness.Timings:
    out = harness.Timings(*(f"{kind}_{app}" for app in APPS for kind in ("warm", "cold")))
    env = ComputerEnv(first_task("calc"))
    try:
        env.reset(seed=0)  # the worker's profile is warmed here, once
        for i in range(resets):
            for app in APPS:
                task = first_task(app)
                for kind, t in (("warm", task), ("cold", cold(task))):
                    with out.timed(f"{kind}_{app}"):
                        env.reset(seed=i, options={"task": t})
    finally:
        env.close()
    return out


def _pids(env: ComputerEnv) -> list[int]:
    """The session's processes: everything in its sandbox (soffice, openbox, the buses) and
    its X server."""
    return [p["pid"] for p in env.sandbox.processes()] + env.display.server_pids()


def _cpu_s(env: ComputerEnv) -> float:
    return harness.cpu_s(*_pids(env))


def measure_steps(steps: int) -> tuple[harness.Timings, list[float], tuple[int, int]]:
    """Calc GUI step seconds without the tree and with it, the CPU seconds of a plain step
    (this process and the session's), and the tree's elements and characters."""
    task = first_task("calc")
    env = ComputerEnv(task)
    try:
        return measure_tree_steps(env, task, CALC_STEPS, steps, cpu_s=_cpu_s)
    finally:
        env.close()


def measure_memory(sessions: int = 3) -> float:
    """Mean PSS (MB) of one office session's sandboxed processes and X server, with
    ``sessions`` of them (one per app) open at once."""
    envs = []
    try:
        for i in range(sessions):
            task = first_task(APPS[i % len(APPS)])
            env = ComputerEnv(task)
            env.reset(seed=0)
            envs.append(env)
        total = 0.0
        for env in envs:
            total += sum(harness.pss_mb(pid, tree=False) for pid in _pids(env))
        return total / len(envs)
    finally:
        for env in envs:
            env.close()


def main(resets: int = 3) -> dict[str, Any]:
    resets_s = measure_resets(resets)
    p50 = {key: ms(xs) for key, xs in resets_s.items()}
    steps, cpu, (tree_nodes, tree_chars) = measure_steps(30)
    plain_ms, tree_ms = ms(steps["plain"]), ms(steps["tree"])
    cpu_ms = ms(cpu)
    memory = measure_memory()
    cpu_bound = int(2 * 1000 / cpu_ms) if cpu_ms > 0 else 0
    mem_bound = int(MACHINE_MB / memory) if memory > 0 else 0

    rows = []
    for app in APPS:
        warm, cold_ms = p50[f"warm_{app}"], p50[f"cold_{app}"]
        rows.append((app, f"{warm:.0f}", f"{cold_ms:.0f}", harness.ratio(cold_ms, warm, 2)))
    harness.print_table(
        "office reset with the document open (p50): warmed profile vs an empty one",
        ("app", "reset ms", "empty profile ms", "empty / warm"),
        rows,
    )
    calc = p50["warm_calc"]
    harness.print_table(
        "office sessions (LibreOffice in bubblewrap, 1024x768)",
        ("measure", "value", "note"),
        [
            ("GUI step p50 (Calc)", f"{plain_ms:.0f} ms", "key/click + settle + screenshot"),
            (
                "GUI step p50 with a11y_tree",
                f"{tree_ms:.0f} ms",
                f"{harness.ratio(tree_ms, plain_ms, 2)} the plain step; "
                f"{tree_nodes} elements, {tree_chars // 1000} kB",
            ),
            ("CPU per GUI step", f"{cpu_ms:.0f} ms", "this process, children, Xvfb"),
            ("memory per session", f"{memory:.0f} MB", "PSS: sandbox processes + Xvfb, 3 open"),
            (
                "sessions per 2-core machine",
                min(cpu_bound, mem_bound),
                f"CPU bound {cpu_bound} (1 step/s each), memory bound {mem_bound}",
            ),
            (
                "OSWorld VM snapshot revert",
                f"~{OSWORLD_REVERT_MS} ms",
                f"{harness.ratio(OSWORLD_REVERT_MS, calc, 0, prefix='~')} a Calc reset",
            ),
        ],
    )
    return {
        "reset_ms": p50,
        "gui_step_ms": {"plain": plain_ms, "tree": tree_ms},
        "tree": {"elements": tree_nodes, "chars": tree_chars},
        "cpu_per_step_ms": cpu_ms,
        "memory_mb_per_session": memory,
        "sessions_per_2_cores": min(cpu_bound, mem_bound),
    }


if __name__ == "__main__":
    main()
