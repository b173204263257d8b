"""MiniWoB's strategy space for adversary search, and the per-task report it makes.

MiniWoB keeps its own scoring and every task (it is the benchmark as published: success is a
raw reward above 0, partial credit included), so the search here does not decide what ships:
it measures, per task, how far a cheap strategy gets, and ``miniwob_search.json`` records it
beside the benchmark's verdict (raw > 0) and the strict one (raw == 1, the task fully done).

Every phase reads only what an agent sees: the goal and the accessibility tree of the latest
observation (the task's widgets are the elements after the utterance), and the page's layout as
the screenshot shows it (MiniWoB draws every task in a 160x160 area under a 50 px utterance).
The primitives, played with :mod:`palaestra.verifiers.search`'s engine:

- exploring: ``click_centre`` (a mouse click at the centre of the task area: it places a point
  on the geometry tasks), ``type_goal`` (a word of the goal, a quoted one first, typed into every
  field), ``click_all`` (every button and clickable widget once, the submit button left for
  last), ``click_random`` (one element picked by the phase's param);
- finishing: ``submit`` (the submit button as it stands, else ``done()``); stopping early is
  the engine's cut.

``python -m palaestra.envs.web.strategies`` searches every task of the ``miniwob`` suite and
writes the report (:func:`report`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.axtree import Node, action, click, fill, find, textboxes
from palaestra.envs.web.policies import CLICKABLE, quoted, submit_button, widgets
from palaestra.tasks import Task
from palaestra.verifiers.search import Memory, Search, StrategySpace, script

#: episodes searched per task (a MiniWoB episode is one page load and a few clicks)
BUDGET = 6
#: the centre of MiniWoB's task area (``#area``, 160x160 under the 50 px ``#query``)
CENTRE = (80, 130)
#: the most widgets ``click_all`` clicks (a task allows 30 steps)
MOST_CLICKS = 12
REPORT = Path(__file__).with_name("miniwob_search.json")
_SUBMIT_NAMES = ("Submit", "submit", "OK", "Ok", "Done", "Search", "Enter", "Go")
_RAW = re.compile(r"raw_reward=(-?[0-9.eE+-]+)")
_WORD = re.compile(r"[A-Za-z0-9][\w-]*")


def _submit(nodes: list[Node]) -> Node | None:
    return submit_button(nodes, *_SUBMIT_NAMES)


def _see(memory: Memory, observation: dict[str, Any], info: dict[str, Any]) -> None:
    goal = str(observation.get("goal") or "")
    if goal and memory.notes.get("goal") != goal:
        memory.notes["goal"] = goal
        memory.value(*quoted(goal), *_WORD.findall(goal))


def _centre(memory: Memory, param: int) -> list[str]:
    return [action("mouse_click", *CENTRE)]


def _type_goal(memory: Memory, param: int) -> list[str]:
    goal = memory.notes.get("goal", "")
    words = quoted(goal) or [w for w in _WORD.findall(goal) if len(w) > 2] or ["yes"]
    word = words[param % len(words)]
    return [fill(box, word) for box in textboxes(widgets(memory.observation))]


def _clickables(memory: Memory) -> list[Node]:
    nodes = widgets(memory.observation)
    last = _submit(nodes)
    return [n for n in find(nodes, CLICKABLE) if n.name and n != last and n.role != "textbox"]


def _click_all(memory: Memory, param: int) -> list[str]:
    return [click(n) for n in _clickables(memory)[:MOST_CLICKS]]


def _click_random(memory: Memory, param: int) -> list[str]:
    found = find(widgets(memory.observation), CLICKABLE)
    return [click(random.Random(param).choice(found))] if found else []


def _submit_phase(memory: Memory, param: int) -> list[str]:
    button = _submit(widgets(memory.observation))
    return [click(button)] if button is not None else [action("done")]


def space() -> StrategySpace:
    """The space, its exploring phases in the order they are played (place, type, click)."""
    return StrategySpace(
        [
            script("click_centre", _centre),
            script("type_goal", _type_goal),
            script("click_all", _click_all),
            script("click_random", _click_random),
            script("submit", _submit_phase, final=True),
        ],
        _see,
        cuts=(1, 2),
    )


def search_for(task: Task, play: Callable[[Any], Any], budget: int = BUDGET) -> Search:
    return Search.of(task, space(), play, budget)


# ----- the per-task report ------------------------------------------------------------------------


def raw_reward(result: Any) -> float:
    """MiniWoB's raw reward as the verifier read it (0 when MiniWoB did not end the episode)."""
    for check in result.checks:
        found = _RAW.search(check.detail)
        if check.kind == "miniwob_reward" and found:
            return float(found.group(1))
    raise ValueError(f"no MiniWoB verdict in {result!r}")


def search_task(env: Any, name: str, budget: int = BUDGET) -> dict[str, Any]:
    """Search one MiniWoB task in ``env``: each episode on the next seed, the best strategy's
    raw reward, the benchmark's success (raw > 0) and the strict one (raw == 1)."""
    from palaestra.policies import run_episode
    from palaestra.tasks import get_task
    from palaestra.verifiers.validation import Run

    task = get_task(f"miniwob/{name}")
    raws: dict[str, float] = {}
    seeds = iter(range(budget))

    def play(policy: Any) -> Run:
        options = {"task": f"miniwob/{name}"}
        episode = run_episode(env, policy, task, seed=next(seeds), reset_options=options)
        result = env.last_verification or env.verify()
        raws[policy.strategy.describe()] = raw_reward(result)
        return Run(result, {}, episode.total_reward, episode.actions)

    found = search_for(task, play, budget).run(ceiling=0.1)
    best = found.get("best")
    raw = raws[best["strategy"]] if best else None
    return {
        "budget": found["budget"],
        "played": found["played"],
        "errors": found["errors"],
        "best": best["strategy"] if best else None,
        "actions": best["actions"] if best else [],
        "raw_reward": raw,
        "success": raw is not None and raw > 0,
        "strict_success": raw is not None and raw >= 1.0,
        "seconds": found["seconds"],
    }


def report(
    names: list[str] | None = None, budget: int = BUDGET, out: Path | None = REPORT
) -> dict[str, Any]:
    """Search every named task (default: the whole suite); write the report to ``out``.
    Flight tasks get their own env (their viewport is larger)."""
    from palaestra import registry
    from palaestra.envs.web.suites import task_names

    names = list(names or task_names())
    envs: dict[bool, Any] = {}
    tasks: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        for name in names:
            flight = name.startswith("flight.")
            if flight not in envs:
                envs[flight] = registry.make(
                    "palaestra/web-v0", task=f"miniwob/{name}", observe=("axtree", "goal")
                )
            try:
                tasks[name] = search_task(envs[flight], name, budget)
            except Exception as exc:  # a task the search cannot play is reported, not hidden
                tasks[name] = {"error": f"{type(exc).__name__}: {exc}"[:300], "success": False}
                tasks[name]["strict_success"] = False
            print(name, tasks[name].get("raw_reward"), tasks[name].get("best"), file=sys.stderr)
    finally:
        for env in envs.values():
            env.close()
    data = summary(tasks, budget, time.perf_counter() - started)
    if out is not None:
        out.write_text(json.dumps(data, indent=1) + "\n")
    return data


def summary(tasks: dict[str, Any], budget: int, seconds: float) -> dict[str, Any]:
    """The report: the space, the budget, which tasks the best strategy wins by the
    benchmark's rule and strictly, and every task's search."""
    return {
        "suite": "miniwob",
        "budget": budget,
        "space": list(space().primitives),
        "tasks_searched": len(tasks),
        "benchmark_wins": sorted(n for n, t in tasks.items() if t["success"]),
        "strict_wins": sorted(n for n, t in tasks.items() if t["strict_success"]),
        "seconds": round(seconds, 1),
        "tasks": dict(sorted(tasks.items())),
    }


def combine(parts: list[Path], out: Path = REPORT) -> dict[str, Any]:
    """One report from reports made in parts (e.g. two halves of the suite, one per core)."""
    loaded = [json.loads(p.read_text()) for p in parts]
    budgets = {d["budget"] for d in loaded}
    if len(budgets) != 1:
        raise ValueError(f"the parts were searched with different budgets: {sorted(budgets)}")
    tasks = {name: t for d in loaded for name, t in d["tasks"].items()}
    data = summary(tasks, budgets.pop(), sum(d["seconds"] for d in loaded))
    out.write_text(json.dumps(data, indent=1) + "\n")
    return data


def _task_names() -> dict[str, str]:
    from palaestra.envs.web.suites import task_names

    return task_names()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="task names (default: every MiniWoB task)")
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument("--part", help="I/N: search only the I-th of N slices of the tasks")
    parser.add_argument("--combine", type=Path, nargs="+", help="merge reports made in parts")
    args = parser.parse_args(argv)
    if args.combine:
        data = combine(args.combine, args.out)
    else:
        names = args.tasks or list(_task_names())
        if args.part:
            i, n = (int(x) for x in args.part.split("/"))
            names = names[i - 1 :: n]
        data = report(names, args.budget, args.out)
    print(
        f"{data['tasks_searched']} tasks, budget {data['budget']}: best strategy wins "
        f"{len(data['benchmark_wins'])} by the benchmark's rule (raw > 0), "
        f"{len(data['strict_wins'])} strictly (raw == 1); {data['seconds']} s"
    )


if __name__ == "__main__":
    main()
