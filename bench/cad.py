"""CAD env speed and economy: semantic actions against the ``run_code`` coding baseline.

Measured in one process on the built-in families (one task per family and reset, round-robin):

- step p50 for each action kind, with the full observation (properties, topology, the 2x2
  render) as an agent receives it; the verifier (IoU alone, and the full ``cad_part`` check);
  a render of a fresh solid (tessellation included); reset; memory per open session;
- reset-from-history (a fork replaying the oracle's semantic steps) against rebuilding the same
  part by ``run_code`` with its build123d script (warm sandbox child), as a ratio;
- the oracle solutions' size in characters, semantic action sequence against the equivalent
  build123d script, over the whole suite (DeciCAD reports 45-88% fewer output tokens).

Run: ``palaestra bench cad`` or ``python -m palaestra.bench.cad``.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table

from palaestra.bench.web import _pss_mb
from palaestra.envs.cad import measure, render
from palaestra.envs.cad.env import CadEnv
from palaestra.envs.cad.families import FAMILIES
from palaestra.envs.cad.suite import all_tasks, build_target, make_task, script_for

console = Console()


def _ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1e3 if xs else float("nan")


def _semantic(task: Any) -> list[str]:
    return [a for a in task.oracle if a != "submit()"]


def measure_steps(resets: int) -> dict[str, Any]:
    steps: dict[str, list[float]] = defaultdict(list)
    out: dict[str, list[float]] = defaultdict(list)
    families = list(FAMILIES)
    for i in range(resets):
        task = make_task(families[i % len(families)], i // len(families))
        build_target(task.setup)  # the target is cached per worker; time the episode's reset
        env = CadEnv(task)
        t = time.perf_counter()
        env.reset(seed=i)
        out["reset"].append(time.perf_counter() - t)
        for action in task.oracle[:-1]:
            name = action.split("(", 1)[0]
            t = time.perf_counter()
            obs, *_ = env.step(action)
            steps[name].append(time.perf_counter() - t)
            assert not obs["last_action_error"], obs["last_action_error"]
        part, target = env.model.state.part, env.target
        for _ in range(3):
            t = time.perf_counter()
            measure.iou(part, target)
            out["iou"].append(time.perf_counter() - t)
        t = time.perf_counter()
        env.verify()
        out["verify"].append(time.perf_counter() - t)
        fresh = part.moved(part.location)  # a new object: no cached mesh
        t = time.perf_counter()
        render.render(fresh)
        out["render"].append(time.perf_counter() - t)
        t = time.perf_counter()
        env.step("inspect('properties')")
        steps["inspect"].append(time.perf_counter() - t)
        t = time.perf_counter()
        env.step("undo()")
        steps["undo"].append(time.perf_counter() - t)
        env.close()
    return {"steps": steps, **out}


def measure_rebuild(resets: int) -> dict[str, list[float]]:
    """Fork (replay semantic history) vs run_code (sandboxed script), same part."""
    out: dict[str, list[float]] = defaultdict(list)
    families = list(FAMILIES)
    env = CadEnv(observe=("properties",))
    env.reset(seed=0)
    env.step("run_code('from build123d import *\\nresult = Box(1, 1, 1)')")  # warm the child
    for i in range(resets):
        task = make_task(families[i % len(families)], i // len(families))
        time.sleep(3.0)  # let the next warm child load the kernel, as between agent turns
        t = time.perf_counter()
        obs, *_ = env.step({"name": "run_code", "args": {"script": script_for(task)}})
        out["run_code"].append(time.perf_counter() - t)
        assert not obs["last_action_error"], obs["last_action_error"]
        t = time.perf_counter()
        env.reset(options={"history": _semantic(task)})
        out["fork"].append(time.perf_counter() - t)
    env.close()
    return out


def measure_memory(sessions: int = 8) -> float:
    gc.collect()
    base = _pss_mb(os.getpid())
    envs = []
    families = list(FAMILIES)
    for i in range(sessions):
        task = make_task(families[i % len(families)], 50 + i)  # targets not yet cached
        env = CadEnv(task)
        env.reset(options={"history": _semantic(task)})
        envs.append(env)
    grown = (_pss_mb(os.getpid()) - base) / sessions
    for env in envs:
        env.close()
    return grown


def measure_chars() -> dict[str, Any]:
    per: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for task in all_tasks():
        sem = sum(len(a) for a in _semantic(task))
        per[task.setup["part_family"]].append((sem, len(script_for(task))))
    return per


def main(resets: int = 8) -> dict[str, Any]:
    steps = measure_steps(resets)
    rebuild = measure_rebuild(resets)
    memory = measure_memory()
    chars = measure_chars()

    table = Table(title="palaestra/cad-v0 step p50 (ms), full observation incl. 2x2 render")
    for col in ("action", "p50 ms", "n"):
        table.add_column(col, justify="right")
    for name, xs in sorted(steps["steps"].items()):
        table.add_row(name, f"{_ms(xs):.1f}", str(len(xs)))
    console.print(table)

    ops = Table(title="verifier, render, reset, memory")
    for col in ("operation", "p50 ms", "note"):
        ops.add_column(col, justify="right")
    ops.add_row("IoU (kernel boolean)", f"{_ms(steps['iou']):.1f}", "target < 300 ms")
    ops.add_row("full verifier (cad_part)", f"{_ms(steps['verify']):.1f}", "IoU+bbox+dims+holes+CD")
    ops.add_row("render 2x2 (fresh mesh)", f"{_ms(steps['render']):.1f}", "256x256, CPU only")
    ops.add_row("reset (target cached)", f"{_ms(steps['reset']):.1f}", "incl. first observation")
    fork, code = _ms(rebuild["fork"]), _ms(rebuild["run_code"])
    ops.add_row(
        "reset-from-history (fork)",
        f"{fork:.1f}",
        f"run_code of the same part (warm sandbox) {code:.1f} ms: ratio {code / fork:.2f}x",
    )
    ops.add_row("memory per session", f"{memory:.1f} MB", "PSS growth, 8 sessions")
    console.print(ops)

    ratio = Table(title="oracle size in characters: semantic actions vs build123d script")
    for col in ("family", "semantic", "script", "semantic / script", "fewer"):
        ratio.add_column(col, justify="right")
    total_sem = total_code = 0
    for fam, pairs in chars.items():
        s = sum(p[0] for p in pairs) / len(pairs)
        c = sum(p[1] for p in pairs) / len(pairs)
        total_sem += sum(p[0] for p in pairs)
        total_code += sum(p[1] for p in pairs)
        ratio.add_row(fam, f"{s:.0f}", f"{c:.0f}", f"{s / c:.2f}", f"{1 - s / c:.0%}")
    ratio.add_row(
        "all",
        str(total_sem),
        str(total_code),
        f"{total_sem / total_code:.2f}",
        f"{1 - total_sem / total_code:.0%}",
    )
    console.print(ratio)
    return {"steps": steps, "rebuild": rebuild, "memory_mb": memory, "chars": chars}


if __name__ == "__main__":
    main()
