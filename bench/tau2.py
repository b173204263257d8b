"""tau2-bench on palaestra: reset and step in-process and through the gateway, a full gold pass
over both suites, and the symbolic user's cost against the model calls an LLM user would make.

Every shipped task of ``tau2-retail`` and ``tau2-telecom`` is played by the gold assistant
talking to the deterministic symbolic user: a reset (the world copied, the task's
initialization actions applied, the user built and its opening said) and every step (a message
the user answers, in telecom often by acting on its phone; or a tool call). Through the gateway
the same episodes run over REST and over WebSocket on a sample.

The baseline is tau2's own user, an LLM: one model call per user reply, plus one more per tool
call the user makes on its phone (the model asks for the call, then reads the result). The
bench counts those calls on the very episodes it plays and prices them at ``--llm-ms`` per call
(1,000 ms by default: a small hosted model's typical latency; set your own), against the wall
time of the whole symbolic pass. The symbolic user makes no model call at all, and the same
seed gives the same conversation.

Run: ``palaestra bench tau2`` or ``python -m palaestra.bench.tau2``.
"""

from __future__ import annotations

import time
from typing import Any

from palaestra.bench import harness
from palaestra.bench.harness import console
from palaestra.bench.usersim import play_remote, play_tasks
from palaestra.envs.tau2.env import Tau2Env
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.server.runner import gateway_process
from palaestra.tasks import get_suite

DOMAINS = ("retail", "telecom")


def gold_pass(env: Tau2Env, tasks: list[Any]) -> dict[str, Any]:
    """Every task once with the gold assistant: wall time, success, and what an LLM user would
    have been asked (user replies and the user's own tool calls)."""
    started = time.perf_counter()
    solved = replies = user_calls = 0
    for task in tasks:
        run_episode(env, family("tau2").policy("tau2_gold", seed=0), task, seed=0)
        solved += bool(env.last_verification and env.last_verification.success)
        assert env.episode is not None
        replies += sum(m["role"] == "user" for m in env.episode.messages) - 1  # not the opening
        user_calls += sum(c.get("by") == "user" for c in env.episode.calls)
    return {
        "seconds": time.perf_counter() - started,
        "episodes": len(tasks),
        "solved": solved,
        "llm_calls": replies + user_calls + len(tasks),  # + the opening each episode
    }


def main(llm_ms: float = 1000.0, sample: int = 10) -> dict[str, Any]:
    suites = {d: get_suite(f"tau2-{d}").tasks for d in DOMAINS}  # validated outside the timing
    env = Tau2Env()
    for tasks in suites.values():
        play_tasks(env, tasks[:3], remote=False, policy_name="tau2_gold")  # warm the gold worlds
    local = {
        d: play_tasks(env, t, remote=False, policy_name="tau2_gold") for d, t in suites.items()
    }
    passes = {d: gold_pass(env, t) for d, t in suites.items()}
    env.close()
    remote: dict[str, dict[str, Any]] = {}
    with gateway_process("--workers", "1", "--no-record", "--log-level", "warning") as (url, _):
        for d, tasks in suites.items():
            chosen = tasks[:: max(1, len(tasks) // sample)][:sample]
            suite = f"tau2-{d}"
            play_remote(url, chosen[:1], "ws", suite, "tau2_gold")  # the worker loads the suite
            remote[d] = {
                "rest": play_remote(url, chosen, "http", suite, "tau2_gold"),
                "ws": play_remote(url, chosen, "ws", suite, "tau2_gold"),
            }

    p50 = harness.ms
    rows = []
    for d in DOMAINS:
        for key, label in (("reset", "reset"), ("message", "message + reply"), ("tool", "tool")):
            rows.append(
                (
                    f"{d}: {label}",
                    f"{p50(local[d][key]):.3f}",
                    f"{p50(remote[d]['rest'][key]):.2f}",
                    f"{p50(remote[d]['ws'][key]):.2f}",
                )
            )
    harness.print_table(
        "palaestra/tau2-v0, gold assistant + symbolic user, p50 in ms",
        ("operation", "in-process", "gateway REST", "gateway WS"),
        rows,
    )
    table = harness.table(
        f"a full gold pass vs an LLM user priced at {llm_ms:g} ms per model call",
        (
            "suite",
            "episodes",
            "solved",
            "wall s",
            "LLM calls",
            "calls/episode",
            "LLM-user s",
            "ratio",
        ),
    )
    for d, p in passes.items():
        llm_s = p["llm_calls"] * llm_ms / 1000
        table.add_row(
            f"tau2-{d}",
            str(p["episodes"]),
            f"{p['solved']}/{p['episodes']}",
            f"{p['seconds']:.2f}",
            str(p["llm_calls"]),
            f"{p['llm_calls'] / p['episodes']:.1f}",
            f"{llm_s:,.0f}",
            harness.ratio(llm_s, p["seconds"], 0),
        )
    console.print(table)
    return {"local": local, "remote": remote, "passes": passes, "llm_ms": llm_ms}


if __name__ == "__main__":
    main()
