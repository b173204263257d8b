"""Differential check of our tau2 port against tau2-bench's own code, on every task of a domain.

For each task, the same runs go to both sides: ours here, tau2's in a process of its own
(:mod:`.crosscheck_tau2`, in the venv ``scripts/setup-tau2.sh`` builds, on tau2's source at
``../shared/tau2/src``). The runs are:

- ``probe@init`` and ``probe@gold``: calls made straight on the task's world, from its initial
  state and after the gold actions: every tool the gold uses, each also with an argument left out
  and one too many, lookups of unknown ids, wrong argument types, unknown tools, and writes the
  world refuses or accepts (retail: cancel, return, exchange, modify on the task's orders;
  telecom: every read tool of both sides and wrong calls);
- an episode of the gold assistant (``tau2_gold``) and of each of the family's adversaries,
  played here against our symbolic user; tau2's side replays every tool call of the episode (both
  sides', in order) and grades the conversation with its own evaluator.

Compared, per run: every call's answer (the same text, or in retail the same JSON data, since
tau2 dumps its models in field order and we sort keys; and the same error flag); the world after
every call that writes (every call in telecom), as a digest of both sides' worlds reduced alike,
and the whole world at the end; our own read calls must leave our world untouched. Per episode:
the reward our verifier reports as tau2's (``tau2_reward``) equals the reward tau2's
``evaluate_simulation`` gives, and each term of our verdict equals tau2's, except where
``verifiers/tau2.py`` documents a difference: :data:`STRICTER` (ours may fail where tau2's
passes) and :data:`LENIENT` (ours may pass where tau2's fails); any other is a difference.

``python -m palaestra.envs.tau2.crosscheck [retail|telecom ...]`` prints the report;
``run(...)`` is what ``tests/envs/tau2/test_crosscheck.py`` asserts on.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palaestra.envs.tau2 import FAMILY, retail, store
from palaestra.envs.tau2 import suites as tau2_suites
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2 import world as worlds
from palaestra.envs.tau2.crosscheck_tau2 import digest, masked
from palaestra.envs.tau2.env import Tau2Env
from palaestra.envs.tau2.telecom_device import DeviceTools
from palaestra.envs.tau2.telecom_eval import Result
from palaestra.envs.tau2.telecom_world import tool_names
from palaestra.policies import run_episode
from palaestra.verifiers.base import CheckResult, VerifierResult, evaluate
from palaestra.verifiers.tau2 import differences

SIDE = Path(__file__).with_name("crosscheck_tau2.py")
#: where our term may fail while tau2's passes (or tau2 has none), and why: what
#: ``verifiers/tau2.py`` documents as stricter on purpose
STRICTER = {
    "RULES": "stricter: a write the user did not explicitly agree to fails the episode",
    "ACTION": "stricter: ACTION compares the arguments the gold action names",
    "COMMUNICATE": "stricter: COMMUNICATE counts also where the reward basis leaves it out",
    "DEVICE": "stricter: at most a couple of needless device actions (tau2 reads only the end "
    "state of the phone)",
}
#: where our term may pass while tau2's fails, and why (documented there too)
LENIENT = {
    "COMMUNICATE": "lenient: COMMUNICATE reads a value in any format (tau2: a substring)",
}
Call = tuple[str, str, Any]


@dataclass
class Run:
    """One run on our side: what each call answered and the world it left."""

    name: str
    calls: list[Call] = field(default_factory=list)
    answers: list[tuple[str, bool]] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)
    final: Any = None
    findings: list[str] = field(default_factory=list)
    #: an episode's conversation as tau2 messages, how it ended, and our verdict
    messages: list[dict[str, Any]] | None = None
    termination: str | None = None
    score: float | None = None
    tau2_reward: float | None = None
    #: our verdict's terms (``DB``, ``ACTION``, ``RULES``, ...) and whether each passed
    terms: dict[str, bool] = field(default_factory=dict)

    def request(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "calls": self.calls}
        if self.messages is not None:
            out.update(messages=self.messages, termination=self.termination)
        return out


@dataclass
class Report:
    """What differed, domain by domain, and how much was compared."""

    differences: list[str] = field(default_factory=list)
    #: terms where our verdict differs from tau2's as documented, each with the reason
    stricter: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] += n


# ----- our worlds, recorded -----------------------------------------------------------------
class _Recorder:
    """Wraps one world's ``call`` (the env's and the user's calls alike) to log each call, its
    answer and the world after it, in tau2's terms."""

    def __init__(self, world: worlds.Tau2World, run: Run, messages: list[Any] | None = None):
        self.world, self.run, self.messages = world, run, messages
        self.inner = world.call
        self._known: tuple[int, Any] | None = None  # (SQLite's change count, retail's state)
        self.log: list[tuple[int, str, str, Any, Result]] = []
        world.call = self.call  # type: ignore[method-assign]

    def call(self, requestor: str, name: str, arguments: Any) -> Result:
        conn = getattr(self.world, "conn", None)
        before = conn.total_changes if conn is not None else 0
        result = self.inner(requestor, name, arguments)
        i = len(self.run.calls)
        self.run.calls.append((requestor, name, arguments))
        content = result.content
        if self.world.domain == "telecom":
            state, content = masked(self.world.state(), content)
            self.run.states[str(i)] = digest(state)
        elif name in worlds.WRITES["retail"] or name not in retail.TOOLS:
            # tau2 takes a tool it does not know as one that may write
            self.run.states[str(i)] = digest(self.state())
        elif conn is not None and conn.total_changes != before:
            self.run.findings.append(f"call {i} {name}{arguments}: our read changed the world")
        self.run.answers.append((content, result.error))
        at = len(self.messages) if self.messages is not None else 0
        self.log.append((at, requestor, name, arguments, result))
        return result

    def state(self) -> Any:
        """:func:`world_state`; a retail world SQLite has not written since is not read again."""
        conn = getattr(self.world, "conn", None)
        if conn is None:
            return world_state(self.world)
        if self._known is None or self._known[0] != conn.total_changes:
            self._known = (conn.total_changes, world_state(self.world))
        return self._known[1]

    def close(self) -> None:
        self.run.final = self.state()
        del self.world.call


#: the address the probes write (an order's, a user's)
ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Austin",
    "state": "TX",
    "country": "USA",
    "zip": "78701",
}


def world_state(world: Any) -> Any:
    """As :mod:`.crosscheck_tau2` reduces tau2's: retail, the entities that differ from the
    initial world (table -> id -> entity, None where one is gone); telecom, both sides whole with
    draft bill ids masked."""
    if world.domain == "telecom":
        return json.loads(json.dumps(masked(world.state())[0], default=str))
    now, start = store.dump(world.conn), _initial_rows()
    out: dict[str, dict[str, Any]] = {}
    for table in store.TABLES:
        rows, first = now[table], start[table]
        if rows == first:
            continue
        changed: dict[str, str | None] = {k: v for k, v in rows.items() if first.get(k) != v}
        changed |= {k: None for k in first if k not in rows}
        out[table] = {k: None if v is None else json.loads(v) for k, v in changed.items()}
    return out


@functools.cache
def _initial_rows() -> dict[str, dict[str, str]]:
    return store.dump(store.initial())


class _RecordingEnv(Tau2Env):
    """The tau2 env with every call of the episode's world recorded, and the verdict kept whole
    (the env's own result keeps the terms only; the ``tau2`` check's detail names tau2's
    reward)."""

    recorder: _Recorder | None = None
    run: Run | None = None
    verdict: CheckResult | None = None

    def _setup(self, task: Any) -> None:
        super()._setup(task)
        ep = self._episode()
        assert self.run is not None
        self.recorder = _Recorder(ep.world, self.run, ep.messages)
        self.verdict = None

    def verify(self) -> VerifierResult:
        assert self.task is not None
        self.verdict = evaluate(self.task.verifier, self.state_probe())
        return VerifierResult(self.verdict.score, self.verdict.passed, [self.verdict])


# ----- the runs -----------------------------------------------------------------------------
def probe_runs(domain: str, task: dict[str, Any]) -> list[Run]:
    gold = [
        (a.get("requestor", "assistant"), a["name"], a.get("arguments") or {})
        for a in tau2_tasks.gold_actions(task)
    ]
    probes = _retail_probes(task) if domain == "retail" else _telecom_probes()
    out = []
    for name, calls in (("probe@init", probes), ("probe@gold", gold + probes)):
        run = Run(name)
        recorder = _Recorder(worlds.open_world(domain, task), run)
        for requestor, tool, args in calls:
            recorder.call(requestor, tool, args)
        recorder.close()
        out.append(run)
    return out


def episode_runs(domain: str, task_id: str, env: _RecordingEnv) -> list[Run]:
    made = {t.setup["task_id"]: t for t in tau2_suites.tasks(domain)}[task_id]
    out = []
    for policy in ["tau2_gold", *FAMILY.adversary_names()]:
        run = Run(policy)
        env.run = run
        run_episode(env, FAMILY.policy(policy, seed=0), made, seed=0)
        assert env.recorder is not None and env.episode is not None
        env.recorder.close()
        ep = env.episode
        run.messages = _tau2_messages(ep.messages, env.recorder.log)
        run.termination = {"assistant": "agent_stop", "user": "user_stop"}.get(
            ep.ended_by or "", "max_steps"
        )
        verdict = env.verdict
        assert verdict is not None, f"{task_id} {policy}: the episode was never verified"
        run.score = verdict.score
        run.tau2_reward = _tau2_reward(verdict)
        run.terms = {c.kind.removeprefix("tau2_").upper(): c.passed for c in verdict.children}
        out.append(run)
    return out


def _tau2_reward(check: CheckResult) -> float:
    """The reward our verifier reports as tau2's (0 for a conversation that did not end)."""
    if "tau2_reward=" not in check.detail:
        return 0.0
    return float(check.detail.split("tau2_reward=")[1].split()[0])


def _tau2_messages(
    said: list[dict[str, Any]], log: list[tuple[int, str, str, Any, Result]]
) -> list[dict[str, Any]]:
    """The episode as tau2's messages: text turns, and each tool call (assistant's or user's)
    as a message carrying the call followed by the tool's answer."""
    out: list[dict[str, Any]] = []
    calls = iter(log)
    pending = next(calls, None)
    for j in range(len(said) + 1):
        while pending is not None and pending[0] == j:
            _, requestor, name, args, result = pending
            cid = f"c{len(out)}"
            call = {"id": cid, "name": name, "arguments": args, "requestor": requestor}
            out.append({"role": requestor, "content": None, "tool_calls": [call]})
            out.append(
                {
                    "role": "tool",
                    "id": cid,
                    "content": result.content,
                    "requestor": requestor,
                    "error": result.error,
                }
            )
            pending = next(calls, None)
        if j < len(said) and said[j]["role"] in ("assistant", "user"):
            out.append({"role": said[j]["role"], "content": said[j]["content"]})
    return out


# ----- probes -----------------------------------------------------------------------------
def _retail_probes(task: dict[str, Any]) -> list[Call]:
    gold = tau2_tasks.gold_actions(task)
    args = [a.get("arguments") or {} for a in gold]
    orders = sorted({a["order_id"] for a in args if isinstance(a.get("order_id"), str)})
    users = sorted({a["user_id"] for a in args if isinstance(a.get("user_id"), str)})
    probes: list[Call] = []
    for action, given in zip(gold, args, strict=True):
        if given:
            first = next(iter(given))
            fewer = {k: v for k, v in given.items() if k != first}
            probes.append(("assistant", action["name"], fewer))
        probes.append(("assistant", action["name"], {**given, "nope": 1}))
    for order in orders:
        payment = (store.get(store.initial(), "orders", order) or {}).get("payment_history")
        method = payment[0]["payment_method_id"] if payment else "credit_card_0"
        probes += [
            ("assistant", "get_order_details", {"order_id": order}),
            ("assistant", "cancel_pending_order", {"order_id": order, "reason": "changed mind"}),
            (
                "assistant",
                "return_delivered_order_items",
                {"order_id": order, "item_ids": ["0"], "payment_method_id": method},
            ),
            (
                "assistant",
                "exchange_delivered_order_items",
                {
                    "order_id": order,
                    "item_ids": [],
                    "new_item_ids": ["0"],
                    "payment_method_id": method,
                },
            ),
            (
                "assistant",
                "modify_pending_order_items",
                {
                    "order_id": order,
                    "item_ids": ["0"],
                    "new_item_ids": ["0"],
                    "payment_method_id": method,
                },
            ),
            (
                "assistant",
                "modify_pending_order_payment",
                {"order_id": order, "payment_method_id": method},
            ),
            (
                "assistant",
                "modify_pending_order_address",
                {"order_id": order, **ADDRESS},
            ),
            (
                "assistant",
                "cancel_pending_order",
                {"order_id": order, "reason": "ordered by mistake"},
            ),
        ]
    for user in users:
        probes.append(("assistant", "get_user_details", {"user_id": user}))
    probes += [
        ("assistant", "get_order_details", {"order_id": "#W0000000"}),
        ("assistant", "get_order_details", {"order_id": 5}),
        ("assistant", "get_user_details", {"user_id": "nobody_0"}),
        ("assistant", "get_product_details", {"product_id": "0"}),
        ("assistant", "get_item_details", {"item_id": "0"}),
        ("assistant", "find_user_id_by_email", {"email": "NOBODY@NOWHERE.COM"}),
        (
            "assistant",
            "find_user_id_by_name_zip",
            {"first_name": "yusuf", "last_name": "ROSSI", "zip": "19122"},
        ),
        (
            "assistant",
            "find_user_id_by_name_zip",
            {"first_name": "Yusuf", "last_name": "Rossi", "zip": "00000"},
        ),
        ("assistant", "list_all_product_types", {}),
        ("assistant", "calculate", {"expression": "2 + 2 * 3"}),
        ("assistant", "calculate", {"expression": "(10 - 4) / 4"}),
        ("assistant", "calculate", {"expression": "1 / 3"}),
        ("assistant", "calculate", {"expression": "7 * ("}),
        ("assistant", "calculate", {"expression": "2 ^ 3"}),
        ("assistant", "calculate", {"expression": "1 / 0"}),
        ("assistant", "calculate", {"expression": " 1.5 / 0"}),
        ("assistant", "calculate", {"expression": ""}),
        ("assistant", "calculate", {"expression": 5}),
        ("assistant", "transfer_to_human_agents", {"summary": "probe"}),
        ("assistant", "nope", {}),
        ("user", "get_order_details", {"order_id": "#W0000000"}),
        (
            "assistant",
            "modify_user_address",
            {"user_id": "nobody_0", **ADDRESS},
        ),
    ]
    return probes


def _telecom_probes() -> list[Call]:
    reads = [n for n in tool_names(DeviceTools) if n.startswith(("check_", "run_", "can_"))]
    probes: list[Call] = [
        ("user", n, {}) for n in reads if n not in ("check_app_status", "check_app_permissions")
    ]
    for app in ("messaging", "browser", "maps"):
        probes += [("user", "check_app_status", {"app_name": app})]
        probes += [("user", "check_app_permissions", {"app_name": app})]
    for ident in ("L1002", "D1001", "B1002", "C1001", "P1003", "X1", "L99"):
        probes.append(("assistant", "get_details_by_id", {"id": ident}))
    for phone in ("555-123-2002", "555-123-2001", "000"):
        probes.append(("assistant", "get_customer_by_phone", {"phone_number": phone}))
    line = {"customer_id": "C1001", "line_id": "L1002"}
    probes += [
        ("assistant", "get_customer_by_id", {"customer_id": "C9"}),
        ("assistant", "get_customer_by_name", {"full_name": "john smith", "dob": "1985-06-15"}),
        ("assistant", "get_bills_for_customer", {"customer_id": "C1001", "limit": 1}),
        ("assistant", "get_data_usage", line),
        ("assistant", "get_data_usage", {"customer_id": "C1002", "line_id": "L1002"}),
        ("assistant", "refuel_data", {**line, "gb_amount": -1.0}),
        ("assistant", "refuel_data", line),
        ("assistant", "refuel_data", {**line, "gb": 1.0}),
        ("assistant", "resume_line", line),
        ("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B9"}),
        ("assistant", "nope", {}),
        ("user", "toggle_data", {"on": True}),
        ("user", "set_network_mode_preference", {"mode": "5g"}),
        ("user", "grant_app_permission", {"app_name": "browser", "permission": "camera"}),
        ("user", "make_payment", {}),
        ("user", "turn_data_off", {}),
    ]
    return probes


# ----- both sides -----------------------------------------------------------------------------
class Tau2Side:
    """tau2's side in its own process: one request line per task, one answer line back."""

    def __init__(self, python: str | Path, src: str | Path) -> None:
        self.errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed in close())
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            [str(python), str(SIDE), str(src)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            env=env,
        )
        ready = self._line()
        if not ready.get("ready"):
            raise RuntimeError(f"tau2's side did not start: {ready}")

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            self.errors.seek(0)
            tail = self.errors.read()[-3000:]
            raise RuntimeError(f"tau2's side exited ({self.proc.returncode}): {tail}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def send(self, request: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.errors.close()


def run(
    src: str | Path,
    python: str | Path,
    domains: tuple[str, ...] = tau2_tasks.DOMAINS,
    limit: int | None = None,
) -> dict[str, Report]:
    """Every task of ``domains`` on both sides; tau2's side works on one task while ours plays
    the next (a writer thread feeds it)."""
    started = time.perf_counter()
    side = Tau2Side(python, src)
    ours: dict[tuple[str, str], list[Run]] = {}
    failure: list[BaseException] = []

    def feed() -> None:
        env = _RecordingEnv()
        try:
            for domain in domains:
                for tid, task in list(tau2_tasks.tasks(domain).items())[:limit]:
                    runs = probe_runs(domain, task) + episode_runs(domain, tid, env)
                    ours[domain, tid] = runs
                    side.send({"domain": domain, "task": tid, "runs": [r.request() for r in runs]})
        except BrokenPipeError:
            pass  # tau2's side was stopped: the reader says why
        except BaseException as exc:
            failure.append(exc)
        finally:
            env.close()
            assert side.proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                side.proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    reports = {d: Report() for d in domains}
    try:
        expected = sum(len(list(tau2_tasks.tasks(d))[:limit]) for d in domains)
        for _ in range(expected):
            if failure:
                break
            answer = side._line()
            domain, tid = answer["domain"], answer["task"]
            compare(domain, tid, ours.pop((domain, tid)), answer["runs"], reports[domain])
    except BaseException as exc:
        side.proc.kill()  # the writer may be blocked on a full pipe: free it, then join
        writer.join()
        if failure:  # our side failed first (tau2's then ran out of requests): that is the news
            raise failure[0] from exc
        raise
    finally:
        writer.join()
        side.proc.wait(timeout=60)
        side.errors.close()
    if failure:
        raise failure[0]
    for report in reports.values():
        report.seconds = time.perf_counter() - started
    return reports


def compare(
    domain: str, tid: str, runs: list[Run], theirs: list[dict[str, Any]], report: Report
) -> None:
    """Each of our runs of one task against tau2's answer to it (see the module docstring)."""
    report.add("tasks")
    for run_, their in zip(runs, theirs, strict=True):
        where = f"{tid} {run_.name}"
        if "failure" in their:
            report.differences.append(f"{where}: tau2's side failed: {their['failure']}")
            continue
        report.differences += [f"{where}: {f}" for f in run_.findings]
        for i, (mine, other) in enumerate(zip(run_.answers, their["answers"], strict=True)):
            report.add("answers")
            if not _same_answer(domain, mine, (other[0], other[1])):
                _, name, args = run_.calls[i]
                report.differences.append(
                    f"{where} call {i} {name}{args}:\n  ours {mine!r}\n  tau2 {tuple(other)!r}"
                )
        report.add("states", len(run_.states))
        if run_.states != their["states"]:
            bad = sorted(set(run_.states.items()) ^ set(their["states"].items()))
            first = min(int(i) for i, _ in bad)
            report.differences.append(
                f"{where}: the world differs after call {first} ({run_.calls[first][1]})"
            )
        diff = differences(run_.final, their["final"])
        if diff:
            report.differences.append(f"{where}: the final world differs: {diff[:5]}")
        if run_.messages is not None:
            _compare_rewards(where, run_, their, report)


def _same_answer(domain: str, mine: tuple[str, bool], theirs: tuple[str, bool]) -> bool:
    if mine == theirs:
        return True
    if domain != "retail" or mine[1] != theirs[1]:
        return False
    try:  # tau2 dumps its models in field order, we sort keys: compared as data, as tau2's
        return bool(json.loads(mine[0]) == json.loads(theirs[0]))  # own replay compares them
    except ValueError:
        return False


def _compare_rewards(where: str, ours: Run, theirs: dict[str, Any], report: Report) -> None:
    """tau2's reward equals the one we report as tau2's; term by term, ours equals tau2's but
    where ``verifiers/tau2.py`` documents a difference (:data:`STRICTER`, :data:`LENIENT`)."""
    report.add("episodes")
    reward, breakdown = theirs["reward"], theirs["breakdown"]
    if ours.tau2_reward != reward:
        report.differences.append(
            f"{where}: the reward we report as tau2's is {ours.tau2_reward}, tau2's own "
            f"evaluator gives {reward} ({breakdown})"
        )
    for term, passed in ours.terms.items():
        tau2_passed = breakdown.get(term, 1.0) == 1.0
        if passed == tau2_passed or term == "NL_ASSERTION":  # skipped on both sides
            continue
        why = (STRICTER if tau2_passed else LENIENT).get(term)
        if term == "COMMUNICATE" and tau2_passed and term in breakdown:
            why = None  # inside the basis our reading of a value only ever accepts more
        if why is None:
            side = "fails" if tau2_passed else "passes"
            report.differences.append(
                f"{where}: our {term} {side}, tau2's {'passes' if tau2_passed else 'fails'} "
                f"({breakdown})"
            )
        else:
            report.stricter.append(f"{where}: {term}: {why}")
    for term in breakdown:
        if term not in ours.terms and ours.terms:
            report.differences.append(f"{where}: tau2 scores {term}, our verdict has no such term")


def main(argv: list[str]) -> int:
    src = os.environ.get("PALAESTRA_TAU2_SRC") or str(
        Path(__file__).resolve().parents[3] / ".." / "shared" / "tau2" / "src"
    )
    python = os.environ.get("PALAESTRA_TAU2_PYTHON") or str(
        Path(__file__).resolve().parents[3] / ".venv-tau2" / "bin" / "python"
    )
    domains = tuple(argv) or tau2_tasks.DOMAINS
    reports = run(src, python, domains)
    bad = 0
    for domain, report in reports.items():
        print("\n".join(report.differences[:30]))
        print(
            f"{domain}: {dict(report.counts)} in {report.seconds:.0f} s; "
            f"{len(report.differences)} differences, {len(report.stricter)} episodes where "
            "we are stricter on purpose"
        )
        bad += len(report.differences)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
