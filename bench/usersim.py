"""User-simulator speed: reset and rule-based steps, in-process and through the gateway.

Each domain's tasks are played by the competent scripted assistant (its moves are prepared
outside the timing): a reset (the world copied from its seeded template, the simulated user
built, its opening said) and every step (a message the user answers, or a tool call on SQLite).
Beside the reset path, the baseline a simple env pays: building the seeded world again at each
reset. Through the gateway the same episodes run over REST and over WebSocket. Memory per
session is the growth of one worker's proportional set size per extra open session, and from it
how many sessions one worker holds in 1 GiB.

Run: ``palaestra bench usersim`` or ``python -m palaestra.bench.usersim``.
"""

from __future__ import annotations

import sqlite3
from typing import Any
from unittest import mock

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.client import RemoteEnv
from palaestra.envs.usersim import world
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.server.runner import gateway_process
from palaestra.tasks import get_suite


def play_tasks(
    env: Any, tasks: list[Any], remote: bool, policy_name: str = "competent"
) -> dict[str, list[float]]:
    """Each task played by ``policy_name`` in ``env``: reset, message and tool-call times."""
    out = harness.Timings("reset", "message", "tool")
    timed = harness.TimedEnv(env, out, lambda a: "tool" if a["name"] == "call_tool" else "message")
    for task in tasks:
        policy = family(task.family).policy(policy_name, seed=0)
        # a remote env is on its task already: reset it with no options
        run_episode(timed, policy, task, seed=0, reset_options={} if remote else None)
    return out


def _rebuild_resets(tasks: list[Any]) -> list[float]:
    """The baseline: seed the world from scratch at every reset."""
    out = harness.Timings("rebuild")
    for task in tasks:
        with out.timed("rebuild"):
            conn = sqlite3.connect(":memory:")
            world.domain(task.setup["domain"]).build(conn, task.setup["seed"])
            conn.close()
    return out["rebuild"]


def play_remote(
    url: str,
    tasks: list[Any],
    transport: str,
    suite: str = "usersim",
    policy_name: str = "competent",
) -> dict[str, list[float]]:
    total = harness.Timings("reset", "message", "tool")
    for task in tasks:
        env = RemoteEnv(task=f"{suite}/{task.id}", base_url=url, transport=transport)
        try:
            total.extend(play_tasks(env, [task], remote=True, policy_name=policy_name))
        finally:
            env.close()
    return total


def _memory(url: str, worker: int, task: Any, sessions: int = 60) -> float:
    def open_session(_: int) -> RemoteEnv:
        env = RemoteEnv(task=f"usersim/{task.id}", base_url=url, transport="http")
        env.reset(seed=0)
        return env

    return harness.SessionMemory(open_session, sessions, worker, warm=1).mb_per_session()


def main(episodes: int = 20) -> dict[str, Any]:
    suite = get_suite("usersim").tasks
    tasks = []
    for name in world.domain_names():
        tasks += [t for t in suite if t.setup["domain"] == name][:episodes]
    env = UserSimEnv(persona="terse")
    play_tasks(env, tasks[:4], remote=False)  # warm the templates and imports
    local = play_tasks(env, tasks, remote=False)
    env.close()
    rebuild = _rebuild_resets(tasks)
    sample = tasks[:: max(1, len(tasks) // 20)]
    with gateway_process("--workers", "1", "--no-record", "--log-level", "warning") as (url, _):
        play_remote(url, sample[:2], "ws")  # the worker loads the suite outside the timing
        rest = play_remote(url, sample, "http")
        ws = play_remote(url, sample, "ws")
        memory = _memory(url, harness.worker_pid(url), sample[0])

    p50 = harness.ms
    labels = (("reset", "reset"), ("message", "step: message + reply"), ("tool", "step: tool call"))
    harness.print_table(
        f"palaestra/usersim-v0, rule-based user, p50 in ms ({len(tasks)} episodes)",
        ("operation", "in-process", "gateway REST", "gateway WS"),
        [
            (label, f"{p50(local[k]):.3f}", f"{p50(rest[k]):.2f}", f"{p50(ws[k]):.2f}")
            for k, label in labels
        ],
    )
    steps = local["message"] + local["tool"]
    per_core = len(steps) / sum(steps)
    ws_steps = ws["message"] + ws["tool"]
    console.print(
        f"reset from the template: {harness.ratio(p50(rebuild), p50(local['reset']), 1)} faster "
        f"than re-seeding the world ({p50(rebuild):.2f} ms)\n"
        f"WebSocket vs REST: {harness.ratio(p50(rest['message']), p50(ws['message']), 1)} faster "
        f"(message), {harness.ratio(p50(rest['tool']), p50(ws['tool']), 1)} (tool call)\n"
        f"steps/s on one core: {per_core:,.0f} in-process, {len(ws_steps) / sum(ws_steps):,.0f} "
        f"through the gateway (WS, one client)\n"
        f"memory per extra session: {memory * 1024:.0f} KB (worker PSS over 60 sessions): "
        f"one worker holds ~{1024 / max(memory, 1e-3):,.0f} sessions per GiB"
    )
    read = reader()
    console.print(
        f"the reader is {harness.ms(read['read']) / p50(local['message']):.0%} of an in-process "
        "message step (p50)"
    )
    return {
        "local": local,
        "rest": rest,
        "ws": ws,
        "rebuild": rebuild,
        "memory_mb": memory,
        "steps_per_s": per_core,
        "reader_per_s": read["messages_per_s"],
    }


def reader(per_domain: int = 10, rounds: int = 3) -> dict[str, Any]:
    """The simulated user's reader alone: every assistant message of reworded episodes (the
    competent decisions in each style and phrasing bank, over ``per_domain`` tasks a domain),
    read ``rounds`` times. Messages per second on one core, and the p50 per message; against
    a baseline in the same process, interleaved by round: the reader without its fallback for
    words outside the lexicon (:meth:`Lexicon.guess` returning nothing, as before it)."""
    from palaestra.envs.runtimes.simuser import acts, lexicon
    from palaestra.envs.usersim import suites
    from palaestra.envs.usersim.reworded import BANKS, STYLES, RewordedAssistant

    tasks = [t for name in world.domain_names() for t in suites.generate(name)[:per_domain]]
    env = UserSimEnv()
    messages: list[tuple[Any, str]] = []
    for task in tasks:
        dom = world.domain(task.setup["domain"])
        for style in STYLES:
            for bank in BANKS:
                run_episode(env, RewordedAssistant(style, "competent", 0, bank), task, seed=0)
                assert env.episode is not None
                said = [m["content"] for m in env.episode.messages if m["role"] == "assistant"]
                messages += [(dom, text) for text in said]
    env.close()
    out = harness.Timings("read", "baseline")

    def read_all(key: str) -> None:
        for dom, text in messages:
            with out.timed(key):
                acts.read(dom, text)

    for _ in range(rounds):
        # the baseline: the reader with its fallback for unknown words switched off
        with mock.patch.object(lexicon.Lexicon, "guess", lambda self, sentence: ()):
            read_all("baseline")
        read_all("read")
    per_s = len(out["read"]) / sum(out["read"])
    base_s = len(out["baseline"]) / sum(out["baseline"])
    console.print(
        f"reader: {per_s:,.0f} messages/s on one core, p50 {harness.ms(out['read']) * 1000:.0f} "
        f"us per message ({len(messages)} reworded assistant messages x {rounds}); without the "
        f"fallback for unknown words {base_s:,.0f}/s, p50 "
        f"{harness.ms(out['baseline']) * 1000:.0f} us (throughput ratio {per_s / base_s:.2f})"
    )
    return {"read": out["read"], "messages_per_s": per_s, "baseline_per_s": base_s}


def validation(per_domain: int = 8, rounds: int = 3) -> dict[str, Any]:
    """Execution validation per task with the family's adversaries against without them (the
    oracle thrice, doing nothing and the mutants either way), in interleaved rounds over the
    same generated tasks: what validating against adversaries costs at suite load. Wall time
    and this process's CPU time per task (the CPU figure holds on a shared machine)."""
    import time

    from palaestra.envs.usersim import suites
    from palaestra.validation import validate_task

    tasks = [t for name in world.domain_names() for t in suites.generate(name)[:per_domain]]
    env = UserSimEnv()
    cpu = {"without": 0.0, "with": 0.0}

    def timed(adversaries: bool) -> Any:
        def run() -> list[float]:
            out = harness.Timings("task")
            started = time.process_time()
            for task in tasks:
                with out.timed("task"):
                    validate_task(task, env=env, adversaries=adversaries)
            cpu["with" if adversaries else "without"] += time.process_time() - started
            return out["task"]

        return run

    timed(True)()  # warm the worlds, gold replays and imports outside the timing
    cpu["with"] = 0.0
    samples = harness.interleave(
        {"without": timed(False), "with": timed(True)}, rounds, "usersim validation"
    )
    env.close()
    p50, n = harness.ms, len(tasks) * rounds
    adversaries = family("usersim").adversary_names()
    harness.print_table(
        f"usersim execution validation per task ({len(tasks)} tasks x {rounds} rounds)",
        ("validation", "p50 wall ms", "CPU ms/task", "tasks/s of CPU"),
        [
            (label, f"{p50(samples[k]):.1f}", f"{cpu[k] / n * 1e3:.1f}", f"{n / cpu[k]:,.0f}")
            for k, label in (
                ("without", "without adversaries"),
                ("with", f"with {len(adversaries)} adversaries"),
            )
        ],
    )
    console.print(
        f"validation with adversaries costs {harness.ratio(cpu['with'], cpu['without'])} the "
        f"CPU time without them ({harness.ratio(sum(samples['with']), sum(samples['without']))} "
        "the wall time)"
    )
    return {**samples, "cpu": cpu, "ratio": cpu["with"] / cpu["without"]}


if __name__ == "__main__":
    main()
    validation()
