"""CAD env speed and economy: semantic actions against the ``run_code`` coding baseline.

Measured in one process on the built-in families (one task per family and reset, round-robin):

- step p50 for each action kind, with the full observation (properties, topology, the 2x2
  render) as an agent receives it; the verifier (IoU alone, and the full ``cad_part`` check);
  a render of a fresh solid (tessellation included); reset; memory per open session;
- reset-from-history (a fork replaying the oracle's semantic steps) against rebuilding the same
  part by ``run_code`` with its build123d script (warm sandbox child), as a ratio;
- the oracle solutions' size in characters, semantic action sequence against the equivalent
  build123d script, over the whole suite (DeciCAD reports 45-88% fewer output tokens);
- execution validation per task with the adversaries against without them, as a ratio (one
  task per family; targets and their envelopes built beforehand, as a worker caches them; the
  envelopes' one-off cost per target is given beside).

Run: ``palaestra bench cad`` or ``python -m palaestra.bench.cad``.
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from typing import Any

from palaestra.bench import harness
from palaestra.bench.harness import ms, ratio
from palaestra.envs.cad import render
from palaestra.envs.cad.env import CadEnv
from palaestra.envs.cad.families import FAMILIES
from palaestra.envs.cad.suites import all_tasks, build_target, make_task, script_for
from palaestra.tasks import Task
from palaestra.validation import validate_task
from palaestra.verifiers import geometry


def _oracle(task: Task) -> list[str]:
    """The task's oracle actions (every built-in CAD task has one, ending in ``submit()``)."""
    if task.oracle is None:
        raise ValueError(f"{task.id} has no oracle")
    return list(task.oracle.data)


def _semantic(task: Task) -> list[str]:
    return [a for a in _oracle(task) if a != "submit()"]


def measure_steps(resets: int) -> dict[str, Any]:
    steps = harness.Timings()
    out = harness.Timings()
    families = list(FAMILIES)
    for i in range(resets):
        task = make_task(families[i % len(families)], i // len(families))
        build_target(task.setup)  # the target is cached per worker; time the episode's reset
        env = CadEnv(task)
        with out.timed("reset"):
            env.reset(seed=i)
        for action in _oracle(task)[:-1]:
            with steps.timed(action.split("(", 1)[0]):
                obs, *_ = env.step(action)
            assert not obs["last_action_error"], obs["last_action_error"]
        part, target = env.model.state.part, env.target
        if part is None or target is None:
            raise RuntimeError(f"{task.id}: the oracle left no part to compare")
        out["iou"] += harness.sample(functools.partial(geometry.iou, part, target), 3)
        with out.timed("verify"):
            env.verify()
        fresh = part.moved(part.location)  # a new object: no cached mesh
        with out.timed("render"):
            render.render(fresh)
        with steps.timed("inspect"):
            env.step("inspect('properties')")
        with steps.timed("undo"):
            env.step("undo()")
        env.close()
    return {"steps": steps, **out}


def measure_rebuild(resets: int) -> dict[str, list[float]]:
    """Fork (replay semantic history) vs run_code (sandboxed script), same part."""
    out = harness.Timings("run_code", "fork")
    families = list(FAMILIES)
    env = CadEnv(observe=("properties",))
    env.reset(seed=0)
    env.step("run_code('from build123d import *\\nresult = Box(1, 1, 1)')")  # warm the child
    for i in range(resets):
        task = make_task(families[i % len(families)], i // len(families))
        time.sleep(3.0)  # let the next warm child load the kernel, as between agent turns
        with out.timed("run_code"):
            obs, *_ = env.step({"name": "run_code", "args": {"script": script_for(task)}})
        assert not obs["last_action_error"], obs["last_action_error"]
        with out.timed("fork"):
            env.reset(options={"history": _semantic(task)})
    env.close()
    return out


def measure_memory(sessions: int = 8) -> float:
    """PSS growth of this process (and its children) per open session."""
    families = list(FAMILIES)

    def open_session(i: int) -> CadEnv:
        task = make_task(families[i % len(families)], 50 + i)  # targets not yet cached
        env = CadEnv(task)
        env.reset(options={"history": _semantic(task)})
        return env

    return harness.SessionMemory(open_session, sessions).mb_per_session()


def measure_chars() -> dict[str, Any]:
    per: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for task in all_tasks():
        sem = sum(len(a) for a in _semantic(task))
        per[task.setup["part_family"]].append((sem, len(script_for(task))))
    return per


def measure_validation(index: int = 11) -> dict[str, Any]:
    """Seconds to validate one task of each family without and with the adversaries."""
    out: dict[str, Any] = {"without": [], "with": [], "envelopes": [], "adversaries": {}}
    for family in FAMILIES:
        task = make_task(family, index)
        target = build_target(task.setup)
        started = time.perf_counter()
        geometry.envelope_iou(target)  # once per target and worker, cached on the solid
        out["envelopes"].append(time.perf_counter() - started)
        for key, adversaries in (("without", False), ("with", True)):
            started = time.perf_counter()
            report = validate_task(task, adversaries=adversaries)
            out[key].append(time.perf_counter() - started)
            assert report.validated, (task.id, report.reason)
        for name, entry in report.adversaries.items():
            best = out["adversaries"].get(name, 0.0)
            out["adversaries"][name] = max(best, entry.get("reward", 0.0))
    return out


def main(resets: int = 8) -> dict[str, Any]:
    steps = measure_steps(resets)
    rebuild = measure_rebuild(resets)
    memory = measure_memory()
    chars = measure_chars()
    validation = measure_validation()

    harness.print_table(
        "palaestra/cad-v0 step p50 (ms), full observation incl. 2x2 render",
        ("action", "p50 ms", "n"),
        [(name, f"{ms(xs):.1f}", len(xs)) for name, xs in sorted(steps["steps"].items())],
    )

    operations = {
        "iou": ("IoU (kernel boolean)", "target < 300 ms"),
        "verify": ("full verifier (cad_part)", "IoU+bbox+dims+holes+CD"),
        "render": ("render 2x2 (fresh mesh)", "256x256, CPU only"),
        "reset": ("reset (target cached)", "incl. first observation"),
    }
    rows = [(label, f"{ms(steps[key]):.1f}", note) for key, (label, note) in operations.items()]
    fork, code = ms(rebuild["fork"]), ms(rebuild["run_code"])
    against = f"run_code of the same part (warm sandbox) {code:.1f} ms: ratio {ratio(code, fork)}"
    rows.append(("reset-from-history (fork)", f"{fork:.1f}", against))
    rows.append(("memory per session", f"{memory:.1f} MB", "PSS growth, 8 sessions"))
    harness.print_table("verifier, render, reset, memory", ("operation", "p50 ms", "note"), rows)

    sizes: list[tuple[object, ...]] = []
    total_sem = total_code = 0
    for fam, pairs in chars.items():
        s = sum(p[0] for p in pairs) / len(pairs)
        c = sum(p[1] for p in pairs) / len(pairs)
        total_sem += sum(p[0] for p in pairs)
        total_code += sum(p[1] for p in pairs)
        sizes.append((fam, f"{s:.0f}", f"{c:.0f}", f"{s / c:.2f}", f"{1 - s / c:.0%}"))
    share = total_sem / total_code
    sizes.append(("all", total_sem, total_code, f"{share:.2f}", f"{1 - share:.0%}"))
    harness.print_table(
        "oracle size in characters: semantic actions vs build123d script",
        ("family", "semantic", "script", "semantic / script", "fewer"),
        sizes,
    )
    print_validation(validation)
    return {
        "steps": steps,
        "rebuild": rebuild,
        "memory_mb": memory,
        "chars": chars,
        "validation": validation,
    }


def print_validation(v: dict[str, Any]) -> None:
    without, with_ = sum(v["without"]) / len(v["without"]), sum(v["with"]) / len(v["with"])
    envelopes = sum(v["envelopes"]) / len(v["envelopes"])
    highest = ", ".join(f"{k} {x:.3f}" for k, x in v["adversaries"].items())
    harness.print_table(
        f"execution validation per task ({len(v['with'])} tasks, one per family)",
        ("run", "s / task", "note"),
        [
            ("without adversaries", f"{without:.2f}", "oracle x2, do-nothing, mutant"),
            ("with adversaries", f"{with_:.2f}", f"ratio {ratio(with_, without)}"),
            ("envelopes of a target", f"{envelopes:.2f}", "once per target and worker"),
            ("highest adversary reward", "", highest),
        ],
    )


if __name__ == "__main__":
    main()
