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
  once a second) and the memory bound (the machine's memory less 4 GB);
- execution validation per task with the family's adversaries against without them (oracle
  twice and doing nothing), as a ratio, on a few tasks of each kind (GUI, code, window,
  process);
- GUI step p50 on the editor task with the accessibility tree (``observe`` with ``a11y_tree``,
  OSWorld's XML read over AT-SPI) against without it, as a ratio, and the tree's size.

Run: ``palaestra bench computer`` or ``python -m palaestra.bench.computer``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any

from palaestra.bench import harness
from palaestra.bench.harness import ms
from palaestra.envs.computer.env import DEFAULT_PARTS, PARTS, ComputerEnv
from palaestra.envs.computer.policies import ADVERSARIES
from palaestra.envs.computer.suites import all_tasks
from palaestra.tasks import Task
from palaestra.validation import validate_task

#: tasks whose validation is timed with and without adversaries: GUI, code, window, process
VALIDATED = ("append-line-in-editor", "csv-to-json", "open-plan-in-editor", "background-job")

#: memory left for sessions: this machine's, less 4 GB for the system, gateway and workers
MACHINE_MB = harness.machine_mb() - 4096
OSWORLD_REVERT_MS = 20_000  # a VM snapshot revert: "tens of seconds" (issue 5)


def _cpu_s(env: ComputerEnv) -> float:
    """CPU seconds of this process, its children and the env's Xvfb (the session's uid, in a
    sandbox: not a child of this process)."""
    return harness.cpu_s(*env.display.server_pids())


def measure(resets: int) -> dict[str, Any]:
    tasks = {t.id: t for t in all_tasks()}
    term, editor = tasks["terminal-mkdir"], tasks["append-line-in-editor"]
    out = harness.Timings("reset_term", "reset_editor", "gui", "code", "fresh", "cpu_step")
    env = ComputerEnv(term)
    env.reset(seed=0)
    try:
        for i in range(resets):
            for key, task in (("reset_term", term), ("reset_editor", editor)):
                with out.timed(key):
                    env.reset(seed=i, options={"task": task})
            for action in ("click(500, 300)", "key('End')", "move(200, 200)"):
                cpu = _cpu_s(env)
                with out.timed("gui"):
                    obs, *_ = env.step(action)
                out["cpu_step"].append(_cpu_s(env) - cpu)
                assert not obs["last_action_error"], obs["last_action_error"]
            for cmd in ("echo hi", "ls -la ~"):
                with out.timed("code"):
                    env.step({"name": "run_shell", "args": {"cmd": cmd}})
    finally:
        env.close()
    for i in range(max(3, resets // 3)):
        with out.timed("fresh"):
            fresh = ComputerEnv(term)
            fresh.reset(seed=i)
        fresh.close()
    return out


def measure_memory(sessions: int = 4) -> float:
    """PSS growth of this process and its children (Xvfb, the apps) per open session."""
    tasks = {t.id: t for t in all_tasks()}

    def open_session(i: int) -> ComputerEnv:
        env = ComputerEnv(tasks["append-line-in-editor" if i % 2 else "terminal-mkdir"])
        env.reset(seed=i)
        return env

    return harness.SessionMemory(open_session, sessions, settle_s=0.5).mb_per_session()


def measure_validation() -> tuple[float, float]:
    """Mean seconds to validate one task without adversaries and with them (same env)."""
    tasks = {t.id: t for t in all_tasks()}
    env = ComputerEnv()
    plain = with_adv = 0.0
    try:
        for tid in VALIDATED:
            for adversaries in (False, True):
                rep = validate_task(tasks[tid], env=env, adversaries=adversaries)
                assert rep.validated, (tid, rep.reason)
                if adversaries:
                    with_adv += rep.seconds
                else:
                    plain += rep.seconds
    finally:
        env.close()
    return plain / len(VALIDATED), with_adv / len(VALIDATED)


def measure_tree_steps(
    env: ComputerEnv,
    task: Task,
    actions: Sequence[str],
    steps: int,
    cpu_s: Callable[[ComputerEnv], float] | None = None,
) -> tuple[harness.Timings, list[float], tuple[int, int]]:
    """GUI step seconds on ``task`` without the accessibility tree ("plain") and with it
    ("tree"), ``steps`` in all, cycling through ``actions``; the parts are switched between
    resets of the one env, twice each way, so both sides see the same warm session. With
    ``cpu_s`` (the session's CPU seconds) also the CPU seconds of each plain step. Returns the
    timings, those CPU seconds and the last tree's elements and characters. The computer and
    office benches both measure the tree's cost this way."""
    out = harness.Timings("plain", "tree")
    cpu: list[float] = []
    size = (0, 0)
    for key, parts in (("plain", DEFAULT_PARTS), ("tree", PARTS)) * 2:
        env.set_parts(parts)
        env.reset(seed=0, options={"task": task})
        for i in range(steps // 2):
            before = cpu_s(env) if cpu_s is not None else 0.0
            with out.timed(key):
                obs, *_ = env.step(actions[i % len(actions)])
            if cpu_s is not None and key == "plain":
                cpu.append(cpu_s(env) - before)
            assert not obs["last_action_error"], obs["last_action_error"]
        if key == "tree":
            tree = obs["a11y_tree"]
            size = (len(list(ET.fromstring(tree).iter())), len(tree))
    return out, cpu, size


def measure_a11y(steps: int = 30) -> tuple[float, float, int, int]:
    """GUI step p50 (ms) on the editor task without the tree and with it, the tree's elements
    and characters."""
    editor = {t.id: t for t in all_tasks()}["append-line-in-editor"]
    env = ComputerEnv(editor)
    try:
        out, _, size = measure_tree_steps(
            env, editor, ("key('End')", "move(200, 200)", "click(500, 300)"), steps
        )
    finally:
        env.close()
    return ms(out["plain"]), ms(out["tree"]), *size


def main(resets: int = 10) -> dict[str, Any]:
    p50 = {key: ms(xs) for key, xs in measure(resets).items()}
    plain_ms, tree_ms, tree_nodes, tree_chars = measure_a11y()
    plain_s, adv_s = measure_validation()
    memory = measure_memory()
    reset, fresh, cpu_ms = p50["reset_term"], p50["fresh"], p50["cpu_step"]
    cpu_bound = int(2 * 1000 / cpu_ms) if cpu_ms > 0 else 0
    mem_bound = int(MACHINE_MB / memory) if memory > 0 else 0

    harness.print_table(
        "palaestra/computer-v0 (1024x768, Xvfb + openbox + apps in bubblewrap)",
        ("measure", "value", "note"),
        [
            ("reset p50 (terminal task)", f"{reset:.0f} ms", "target < 500 ms"),
            ("reset p50 (editor task)", f"{p50['reset_editor']:.0f} ms", "mousepad"),
            ("GUI step p50", f"{p50['gui']:.0f} ms", "action + settle + screenshot"),
            ("code step p50", f"{p50['code']:.0f} ms", "run_shell + observation"),
            ("CPU per GUI step", f"{cpu_ms:.0f} ms", "this process, children, Xvfb"),
            ("memory per session", f"{memory:.0f} MB", "PSS growth, 4 sessions"),
            (
                "sessions per 2-core machine",
                min(cpu_bound, mem_bound),
                f"CPU bound {cpu_bound} (1 step/s each), memory bound {mem_bound} "
                f"({MACHINE_MB / 1024:.0f} GB for sessions)",
            ),
        ],
    )
    harness.print_table(
        "starting a fresh sandbox vs the reset path",
        ("path", "p50 ms", "ratio to reset"),
        [
            ("reset (Xvfb kept, home restored)", f"{reset:.0f}", harness.ratio(reset, reset, 1)),
            ("fresh session (Xvfb, uid, home)", f"{fresh:.0f}", harness.ratio(fresh, reset, 1)),
            (
                "OSWorld VM snapshot revert",
                f"~{OSWORLD_REVERT_MS}",
                harness.ratio(OSWORLD_REVERT_MS, reset, 0, prefix="~"),
            ),
        ],
    )
    harness.print_table(
        "execution validation per task: with the adversaries vs without",
        ("validation", "s per task", "ratio"),
        [
            ("oracle x2 + doing nothing", f"{plain_s:.1f}", harness.ratio(plain_s, plain_s, 1)),
            (
                f"+ {len(ADVERSARIES)} adversaries",
                f"{adv_s:.1f}",
                harness.ratio(adv_s, plain_s, 1),
            ),
        ],
    )
    harness.print_table(
        "GUI step with the accessibility tree vs without (editor task, mousepad)",
        ("observation", "step p50 ms", "ratio"),
        [
            (
                "default (screenshot, windows, ...)",
                f"{plain_ms:.0f}",
                harness.ratio(plain_ms, plain_ms, 1),
            ),
            (
                f"+ a11y_tree ({tree_nodes} elements, {tree_chars // 1000} k chars)",
                f"{tree_ms:.0f}",
                harness.ratio(tree_ms, plain_ms, 1),
            ),
        ],
    )
    return {
        "gui_step_a11y_ms": tree_ms,
        "gui_step_plain_ms": plain_ms,
        "a11y_over_plain": tree_ms / plain_ms,
        "validation_s": plain_s,
        "validation_with_adversaries_s": adv_s,
        "adversaries_over_plain": adv_s / plain_s,
        "reset_ms": reset,
        "reset_editor_ms": p50["reset_editor"],
        "gui_step_ms": p50["gui"],
        "code_step_ms": p50["code"],
        "fresh_ms": fresh,
        "fresh_over_reset": fresh / reset,
        "memory_mb": memory,
        "sessions_per_2_cores": min(cpu_bound, mem_bound),
    }


if __name__ == "__main__":
    main()
