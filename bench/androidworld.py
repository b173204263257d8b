"""AndroidWorld replicas on the embedded phone: what a replica task costs beside the phone's own.

- reset and step p50 (in-process, full observation: screenshot and element list) on an
  ``androidworld-replica`` task against a task of the built-in ``phone`` suite (the five
  domains' apps) in the same process: the ratio says what installing every replica app and
  planting a task's rows add to a reset, and what the replicas' richer pages add to a step;
- the step p50 of our Appium path with Appium's fake driver on loopback (a tap, a screenshot
  and a page source over Appium's HTTP protocol: the floor of any real device or emulator
  before the device itself does anything) against the replica phone's step. No Android
  emulator runs here, and AndroidWorld's documentation states no reset/step figure to quote,
  so no emulator number is printed;
- validated replica tasks per minute, from the committed record (every entry's validation time:
  the oracle three times, doing nothing, the mutants, the adversaries and the search).

Run: ``palaestra bench androidworld`` or ``python -m palaestra.bench.androidworld``.
"""

from __future__ import annotations

import json
from typing import Any

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.bench.mobile import measure_appium
from palaestra.envs.mobile.env import MobileEnv
from palaestra.envs.mobile.suites import REPLICA, REPLICA_FILES
from palaestra.synth_apps.driver import spec_for
from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synthesis.pipeline import on_phone
from palaestra.tasks import Task, get_suite

#: the template timed when the suite has no validated task
TEMPLATE = "SimpleCalendarAddOneEvent"


def steps(task: Task) -> list[dict[str, Any]]:
    """The timed steps: open the task's app from the launcher, scroll it, wait, go home."""
    return [
        {"action_type": "open_app", "app_name": spec_for(task.setup["app"]).title},
        {"action_type": "scroll", "direction": "down"},
        {"action_type": "wait", "seconds": 0},
        {"action_type": "navigate_home"},
    ]


def measure(tasks: dict[str, Task], resets: int) -> dict[str, harness.Timings]:
    """Reset and step timings per named task, the tasks taking turns round by round on an env
    each (a load change on the shared machine hits both sides alike)."""
    envs = {name: MobileEnv() for name in tasks}
    out = {name: harness.Timings("reset", "step") for name in tasks}
    try:
        for name, env in envs.items():  # the browsers start outside the timing
            env.reset(seed=0, options={"task": tasks[name]})
        for i in range(resets):
            for name, env in envs.items():
                with out[name].timed("reset"):
                    env.reset(seed=i, options={"task": tasks[name]})
                for action in steps(tasks[name]):
                    with out[name].timed("step"):
                        env.step(action)
    finally:
        for env in envs.values():
            env.close()
    return out


def replica_task() -> Task:
    """The suite's first task, or (no record yet, or its keys went stale) the same template
    generated afresh: timing needs a replica task, not a validated one."""
    shipped = get_suite(REPLICA).tasks
    if shipped:
        return shipped[0]
    made = TaskGenerator.for_template(TEMPLATE, 0, layout="mobile").task
    return on_phone(made)


def record_speed() -> dict[str, Any]:
    """The committed record's totals (validated, seconds spent, validated per minute)."""
    path = REPLICA_FILES[REPLICA]
    return dict(json.loads(path.read_text()).get("report", {})) if path.exists() else {}


def main(resets: int = 8) -> dict[str, Any]:
    replica, builtin = replica_task(), get_suite("phone").tasks[0]
    timed = measure({"replica": replica, "builtin": builtin}, resets)
    ours, base = timed["replica"], timed["builtin"]
    appium = measure_appium(resets)
    p50 = harness.ms
    against = "Appium not installed"
    if appium:
        against = f"{p50(appium['step']):.0f} ms: " + harness.ratio(
            p50(appium["step"]), p50(ours["step"]), 2
        )
    harness.print_table(
        f"p50 in ms, in-process, full observation ({replica.id} vs phone/{builtin.id})",
        ("operation", "replica", "built-in", "replica / built-in", "Appium fake / replica"),
        [
            (
                "reset",
                f"{p50(ours['reset']):.0f}",
                f"{p50(base['reset']):.0f}",
                harness.ratio(p50(ours["reset"]), p50(base["reset"]), 2),
                "n/a",
            ),
            (
                "step",
                f"{p50(ours['step']):.0f}",
                f"{p50(base['step']):.0f}",
                harness.ratio(p50(ours["step"]), p50(base["step"]), 2),
                against,
            ),
        ],
    )
    speed = record_speed()
    console.print(
        f"record: {speed.get('validated', 0)} validated, {speed.get('dropped', 0)} dropped, "
        f"{speed.get('validated_per_minute', 0)} validated tasks per minute of validation "
        "(oracle x3, noop, mutants, adversaries, search); no emulator runs here and "
        "AndroidWorld documents no reset/step figure, so none is compared"
    )
    return {"replica": ours, "builtin": base, "appium": appium, "record": speed}


if __name__ == "__main__":
    main()
