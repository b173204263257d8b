"""How faithful is the symbolic tau2 user? Measured by playing it, over every task of a domain.

tau2-bench's scores are partly its LLM user's: it invents details, agrees to the wrong thing,
leaves early. Our symbolic user (:mod:`.retail_user`, :mod:`.telecom_user`) is meant to do none
of that, and this harness checks it from the outside, with assistants whose right outcome is
known, on all 114 tasks of each domain (not only the shipped ones, so a weak spot is not hidden
by validation dropping its task):

- **competent**: the gold assistant under seeds 0, 1, 2: success rate, whether the verdicts
  agree, whether the transcripts are the same, and whether a seed replays to the same transcript;
- **reworded**: the gold assistant's decisions in other words (:class:`RewordedGold`, with the
  frames of the dialogue runtime's :mod:`palaestra.envs.runtimes.dialogue.phrasing` where
  they fit): a user that
  only reads the gold's own sentences would make every agent look worse than it is;
- **wrong**: the gold assistant whose first write proposal names a wrong value, and which would
  make that write (:class:`WrongGold`): the user must decline, and the task must fail;
- **early**: a goodbye right after the opening: the user must not close satisfied;
- **irrelevant**: questions about what the user cannot know (a passport number, a PIN): any
  value stated that the user does not hold is invented;
- **unread**: the share of the user's replies to the gold that it logged as unread;
- **grounding** (telecom): every fact about the phone the user reports must come from its own
  tool results of that reply (or, for "already on", from the phone's actual state).

The figures come from the transcript, the user's tool results and the verdict, never from the
user's own account of what it meant (its yes/no is read with the env's reader,
:func:`~palaestra.envs.runtimes.simuser.acts.user_agrees`).
"""

from __future__ import annotations

import copy
import functools
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from palaestra.envs.runtimes.dialogue.fidelity import ratio
from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.tau2 import FAMILY, retail, store, suites
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.adversaries import Tau2Adversary
from palaestra.envs.tau2.env import Tau2Env
from palaestra.envs.tau2.fidelity_assistants import (
    STYLES,
    EarlyBye,
    IrrelevantAsker,
    RewordedGold,
    WrongGold,
)
from palaestra.envs.tau2.user import Tau2User, UserTurn
from palaestra.envs.tau2.world import Tau2World
from palaestra.policies import run_episode
from palaestra.tasks import Task

DOMAINS = ("retail", "telecom")
SEEDS = (0, 1, 2)
#: a value stated as the answer to one of :data:`.fidelity_assistants.IRRELEVANT` ("my PIN is 1234")
_ANSWERED = re.compile(
    r"\b(?:passport(?: number)?|pin|social security(?: number)?|ssn|maiden name)\b"
    r"(?: is|:)\s+([^\s.,!?]+)",
    re.IGNORECASE,
)
#: value-like tokens: numbers of three digits or more (with separators), ids, emails
_VALUE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|#?\b[A-Za-z_]*\d[\d\- ]{1,}\d\b|\b[A-Z]{1,3}\d{3,}\b"
)


# ----- the env, with the user's tool results kept ----------------------------------------------
class _Recorded:
    """The episode's user, passed through, keeping each reply's message and turn (the env logs
    the user's tool calls without their results, which the grounding check needs)."""

    def __init__(self, inner: Tau2User, world: Tau2World) -> None:
        self.inner = inner
        self.world = world
        self.turns: list[tuple[str, UserTurn, dict[str, Any]]] = []

    @property
    def log(self) -> list[dict[str, Any]]:
        return self.inner.log

    def opening(self) -> str:
        return self.inner.opening()

    def reply(self, message: str, world: Tau2World) -> UserTurn:
        turn = self.inner.reply(message, world)
        self.turns.append((message, turn, copy.deepcopy(_device(world))))
        return turn


def _device(world: Tau2World) -> dict[str, Any]:
    try:
        return dict(world.state()["user"]["device"])
    except (KeyError, TypeError):
        return {}


class RecordingEnv(Tau2Env):
    def _setup(self, task: Task | None) -> None:
        super()._setup(task)
        assert self.episode is not None
        self.episode.user = _Recorded(self.episode.user, self.episode.world)

    def turns(self) -> list[tuple[str, UserTurn, dict[str, Any]]]:
        assert self.episode is not None and isinstance(self.episode.user, _Recorded)
        return self.episode.user.turns


# ----- scoring ---------------------------------------------------------------------------------
def holdings(domain: str, task: dict[str, Any]) -> str:
    """Everything the user of ``task`` may state: the task itself (scenario, known facts, the
    gold actions' values) and, in retail, its own record and orders."""
    held = [json.dumps(task)]
    if domain == "retail":
        conn = store.fresh()
        try:
            for action in tau2_tasks.gold_actions(task):
                args = action.get("arguments") or {}
                uid = args.get("user_id")
                if action["name"].startswith("find_user_id"):
                    uid = retail.call(conn, action["name"], args)[0]
                if args.get("order_id"):
                    uid = uid or (store.get(conn, "orders", args["order_id"]) or {}).get("user_id")
                user = store.get(conn, "users", str(uid)) if uid else None
                if user:
                    held.append(json.dumps(user))
                    held += [json.dumps(store.get(conn, "orders", o)) for o in user["orders"]]
        finally:
            conn.close()
    return _norm(" ".join(held))


def _norm(text: str) -> str:
    return re.sub(r"[\s\-()]", "", text.lower())


_STATES = re.compile(r"\bmy [\w' ]{2,30} is\b", re.IGNORECASE)


def states_value(text: str) -> bool:
    """Whether ``text`` states some value at all ("my user id is ...", a number, an email)."""
    return bool(_VALUE.search(text) or _STATES.search(text) or _ANSWERED.search(text))


def invented_values(text: str, held: str, quoted: str = "") -> list[str]:
    """Values ``text`` states that neither ``held`` (normalised) nor the user's own tool
    results of that reply (``quoted``) hold."""
    found = [m.group(0) for m in _VALUE.finditer(text)]
    found += [m.group(1) for m in _ANSWERED.finditer(text)]
    known = held + _norm(quoted)
    return list(dict.fromkeys(v for v in found if _norm(v.strip("#.")) not in known))


#: what a telecom user may say about its phone
_SETTING_STATE = re.compile(
    r"(?P<setting>[A-Za-z][\w /-]{1,40}?) is (?:now |already |currently )?"
    r"(?P<state>on|off|enabled|disabled|connected|disconnected)\b",
    re.IGNORECASE,
)
_MEASURE = re.compile(
    r"\d+(?:\.\d+)?\s*(?:mbps|kbps|%|dbm)|📶\S*|\b(?:no signal|no service)\b"
    r"|\b[2-5]g\b|\blte\b|\bcan(?:not|'t)? send mms\b",
    re.IGNORECASE,
)
#: device fields by the words a user names them with
_FIELDS = (
    ("airplane", "airplane_mode"),
    ("wi-fi calling", "wifi_calling_enabled"),
    ("wifi calling", "wifi_calling_enabled"),
    ("roaming", "roaming_enabled"),
    ("data saver", "data_saver_mode"),
    ("mobile data", "data_enabled"),
    ("wi-fi", "wifi_enabled"),
    ("wifi", "wifi_enabled"),
)


@dataclass
class Grounding:
    replies: int = 0  # replies that report something about the phone
    facts: int = 0
    from_tools: int = 0  # stated as the reply's own tool results say
    from_state: int = 0  # a setting said to be already on/off, true on the phone
    invented: list[str] = field(default_factory=list)


def ground(text: str, calls: list[dict[str, Any]], device: dict[str, Any], g: Grounding) -> None:
    """Check the phone facts of one reply against its tool results and the phone's state."""
    quoted = " ".join(" ".join(str(c.get("content", "")).split()) for c in calls)
    rest = text
    for c in calls:  # the tool results said verbatim are grounded as they stand
        content = " ".join(str(c.get("content", "")).split())
        if content and content in rest:
            rest = rest.replace(content, " ")
            g.facts += 1
            g.from_tools += 1
    facts = 0
    for m in _SETTING_STATE.finditer(rest):
        low = m["setting"].lower()
        fieldname = next((f for words, f in _FIELDS if words in low), None)
        if fieldname is None:
            continue
        facts += 1
        said_on = m["state"].lower() in ("on", "enabled", "connected")
        if m.group(0).lower() in quoted.lower():
            g.from_tools += 1
        elif fieldname in device and bool(device[fieldname]) == said_on:
            g.from_state += 1
        else:
            g.invented.append(m.group(0))
    for m in _MEASURE.finditer(rest):
        facts += 1
        if m.group(0).lower() in quoted.lower():
            g.from_tools += 1
        else:
            g.invented.append(m.group(0))
    g.facts += facts
    g.replies += bool(facts or calls)


# ----- the report ------------------------------------------------------------------------------
@dataclass
class DomainFidelity:
    domain: str
    tasks: int
    competent: float  # gold success over every task and seed
    agree: float  # share of tasks whose seeds give the same verdict
    same_transcript: float  # share of tasks whose seeds give the same transcript
    deterministic: float  # share of tasks whose seed 0 replays to the same transcript
    reworded: dict[str, float]  # style -> gold success with its messages in that style
    wrong_tasks: int  # tasks with a wrong proposal the user can tell
    wrong_declined: float  # of those, share declined
    wrong_failed: float  # of those, share whose task failed
    wrong_by_field: dict[str, list[int]]  # the field made wrong -> [proposals, declined]
    early_closed: float  # share of goodbyes the user answered by leaving
    early_premature: float  # of all, share closed as if satisfied
    early_failed: float
    irrelevant_replies: int
    irrelevant_invented: float  # share of replies stating a value the user does not hold
    irrelevant_other: float  # share answering with some other fact it holds (not "I don't know")
    unread_rate: float  # user replies logged unread, gold runs
    reworded_unread: dict[str, float]
    grounding: dict[str, Any]
    failures: dict[str, list[str]] = field(default_factory=dict)  # measure -> task ids


@dataclass
class Tau2FidelityReport:
    domains: dict[str, DomainFidelity]
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def rows(self) -> list[tuple[str, ...]]:
        """(measure, figure per domain, target) rows: what :meth:`to_markdown` and the CLI
        print."""
        ds = list(self.domains.values())

        def row(label: str, fn: Callable[[DomainFidelity], str], target: str) -> tuple[str, ...]:
            return (label, *(fn(d) for d in ds), target)

        out = [
            row("tasks", lambda d: str(d.tasks), ""),
            row("competent success (seeds 0-2)", lambda d: f"{d.competent:.3f}", ">= 0.95"),
            row("verdicts agree across seeds", lambda d: f"{d.agree:.3f}", "1"),
            row("same transcript across seeds", lambda d: f"{d.same_transcript:.3f}", ""),
            row("seed replays identically", lambda d: f"{d.deterministic:.3f}", "1"),
        ]
        for style in ds[0].reworded:
            out.append(
                row(
                    f"reworded success: {style} (unread)",
                    functools.partial(_styled, style=style),
                    ">= 0.95",
                )
            )
        out += [
            row("wrong proposal: tasks", lambda d: str(d.wrong_tasks), ""),
            row("wrong proposal: declined", lambda d: f"{d.wrong_declined:.3f}", "1"),
            row("wrong proposal: task failed", lambda d: f"{d.wrong_failed:.3f}", "1"),
            row(
                "wrong proposal: declined by field",
                _by_field,
                "all",
            ),
            row("early goodbye: user left", lambda d: f"{d.early_closed:.3f}", ""),
            row("early goodbye: premature happy close", lambda d: f"{d.early_premature:.3f}", "0"),
            row("early goodbye: task failed", lambda d: f"{d.early_failed:.3f}", "1"),
            row("irrelevant questions: replies", lambda d: str(d.irrelevant_replies), ""),
            row("irrelevant: invented-value rate", lambda d: f"{d.irrelevant_invented:.3f}", "0"),
            row(
                "irrelevant: answered with another fact", lambda d: f"{d.irrelevant_other:.3f}", ""
            ),
            row("unread rate (gold runs)", lambda d: f"{d.unread_rate:.4f}", "0"),
            row(
                "phone reports: replies / facts",
                lambda d: (
                    f"{d.grounding['replies']} / {d.grounding['facts']}" if d.grounding else "-"
                ),
                "",
            ),
            row(
                "phone facts from tool results / device state",
                lambda d: (
                    f"{d.grounding['from_tools']} / {d.grounding['from_state']}"
                    if d.grounding
                    else "-"
                ),
                "",
            ),
            row(
                "invented phone facts",
                lambda d: str(len(d.grounding["invented"])) if d.grounding else "-",
                "0",
            ),
        ]
        return out

    def header(self) -> tuple[str, ...]:
        return ("measure", *self.domains, "target")

    def to_markdown(self) -> str:
        head = self.header()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows()]
        lines.append(f"\n{sum(d.tasks for d in self.domains.values())} tasks in "
                     f"{self.seconds:.1f} s")  # fmt: skip
        return "\n".join(lines)


def _styled(d: DomainFidelity, style: str) -> str:
    return f"{d.reworded[style]:.3f} ({d.reworded_unread[style]:.3f})"


def _by_field(d: DomainFidelity) -> str:
    return ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(d.wrong_by_field.items()))


def _transcript(env: RecordingEnv) -> list[tuple[str, str]]:
    assert env.episode is not None
    return [(m["role"], m["content"]) for m in env.episode.messages]


def _success(env: RecordingEnv) -> bool:
    v = env.last_verification
    return bool(v is not None and v.success)


def measure_domain(
    domain: str,
    tasks: Iterable[Task] | None = None,
    styles: Iterable[str] = STYLES,
    seeds: Iterable[int] = SEEDS,
    on_task: Callable[[], None] | None = None,
) -> DomainFidelity:
    """Every measure of the module docstring on ``tasks`` (default: all of ``domain``'s)."""
    chosen = list(tasks) if tasks is not None else suites.tasks(domain)
    styles, seeds = list(styles), list(seeds)
    env = RecordingEnv()
    fails: dict[str, list[str]] = {}
    n = {k: 0 for k in ("won", "runs", "agree", "same", "det", "replies", "unread")}
    styled = {s: [0, 0, 0, 0] for s in styles}  # won, runs, unread, replies
    wrong = [0, 0, 0]  # tasks, declined, failed
    early = [0, 0, 0]  # closed, premature, failed
    irr = [0, 0, 0]  # replies, invented, other facts
    by_field: dict[str, list[int]] = {}
    g = Grounding()

    def fail(kind: str, task: Task, seed: int | None = None) -> None:
        fails.setdefault(kind, []).append(task.id + ("" if seed is None else f"/{seed}"))

    try:
        for task in chosen:
            raw = tau2_tasks.get(domain, task.setup["task_id"])
            held = holdings(domain, raw)
            verdicts, scripts = [], []
            for seed in seeds:
                run_episode(env, FAMILY.policy("tau2_gold", seed=seed), task, seed=seed)
                ok = _success(env)
                verdicts.append(ok)
                scripts.append(_transcript(env))
                n["won"] += ok
                n["runs"] += 1
                if not ok:
                    fail("competent", task, seed)
                assert env.episode is not None
                n["replies"] += len(env.episode.user.log)
                n["unread"] += sum(1 for e in env.episode.user.log if e.get("unread"))
                if domain == "telecom":
                    for _msg, turn, device in env.turns():
                        ground(turn.text, turn.calls, device, g)
            n["agree"] += len(set(verdicts)) == 1
            n["same"] += all(s == scripts[0] for s in scripts)
            run_episode(env, FAMILY.policy("tau2_gold", seed=seeds[0]), task, seed=seeds[0])
            n["det"] += _transcript(env) == scripts[0]
            if len(set(verdicts)) != 1:
                fail("agree", task)

            for style in styles:
                run_episode(env, RewordedGold(style, seed=0), task, seed=0)
                ok = _success(env)
                assert env.episode is not None
                log = env.episode.user.log
                styled[style][0] += ok
                styled[style][1] += 1
                styled[style][2] += sum(1 for e in log if e.get("unread"))
                styled[style][3] += len(log)
                if not ok:
                    fail(f"reworded:{style}", task)
                if domain == "telecom":
                    for _msg, turn, device in env.turns():
                        ground(turn.text, turn.calls, device, g)

            policy = WrongGold(seed=0)
            run_episode(env, policy, task, seed=0)
            if policy.proposed is not None:
                wrong[0] += 1
                answer = next((t for m, t, _ in env.turns() if m == policy.proposed), None)
                declined = answer is not None and user_agrees(answer.text) is not True
                wrong[1] += declined
                wrong[2] += not _success(env)
                tally = by_field.setdefault(policy.field, [0, 0])
                tally[0] += 1
                tally[1] += declined
                if not declined:
                    fail("wrong:agreed", task)
                if _success(env):
                    fail("wrong:succeeded", task)

            run_episode(env, EarlyBye(), task, seed=0)
            turns = env.turns()
            left = bool(turns) and turns[0][1].closed
            happy = (
                left
                and user_agrees(turns[0][1].text) is not False
                and bool(
                    re.search(r"that's all|fixed|solved|all i needed|thank", turns[0][1].text, re.I)
                )
            )
            early[0] += left
            early[1] += happy
            early[2] += not _success(env)
            if happy:
                fail("early:happy_close", task)

            run_episode(env, IrrelevantAsker(), task, seed=0)
            for _msg, turn, _device in env.turns():
                quoted = " ".join(str(c.get("content", "")) for c in turn.calls)
                bad = invented_values(turn.text, held, quoted)
                irr[0] += 1
                irr[1] += bool(bad)
                irr[2] += not bad and states_value(turn.text)
                if bad:
                    fail("irrelevant:invented", task)
            if domain == "telecom":  # settings already right: the "already on" replies
                run_episode(env, Tau2Adversary("act_on_all"), task, seed=0)
                for _msg, turn, device in env.turns():
                    ground(turn.text, turn.calls, device, g)
            if on_task:
                on_task()
    finally:
        env.close()
    tasks_n = len(chosen)
    return DomainFidelity(
        domain=domain,
        tasks=tasks_n,
        competent=ratio(n["won"], n["runs"], 0.0),
        agree=ratio(n["agree"], tasks_n, 0.0),
        same_transcript=ratio(n["same"], tasks_n, 0.0),
        deterministic=ratio(n["det"], tasks_n, 0.0),
        reworded={s: ratio(v[0], v[1], 0.0) for s, v in styled.items()},
        wrong_tasks=wrong[0],
        wrong_declined=ratio(wrong[1], wrong[0]),
        wrong_failed=ratio(wrong[2], wrong[0]),
        wrong_by_field=by_field,
        early_closed=ratio(early[0], tasks_n, 0.0),
        early_premature=ratio(early[1], tasks_n, 0.0),
        early_failed=ratio(early[2], tasks_n, 0.0),
        irrelevant_replies=irr[0],
        irrelevant_invented=ratio(irr[1], irr[0], 0.0),
        irrelevant_other=ratio(irr[2], irr[0], 0.0),
        unread_rate=ratio(n["unread"], n["replies"], 0.0),
        reworded_unread={s: ratio(v[2], v[3], 0.0) for s, v in styled.items()},
        grounding=asdict(g) if domain == "telecom" else {},
        failures=fails,
    )


def measure(
    domains: Iterable[str] = DOMAINS,
    tasks_per_domain: int | None = None,
    styles: Iterable[str] = STYLES,
    on_task: Callable[[], None] | None = None,
) -> Tau2FidelityReport:
    """The report over ``domains``: all their tasks, or the first ``tasks_per_domain``."""
    start = time.perf_counter()
    out: dict[str, DomainFidelity] = {}
    for domain in domains:
        chosen = suites.tasks(domain)
        if tasks_per_domain is not None:
            chosen = _spread(chosen, tasks_per_domain)
        out[domain] = measure_domain(domain, chosen, styles, on_task=on_task)
    return Tau2FidelityReport(out, round(time.perf_counter() - start, 2))


def _spread(tasks: list[Task], k: int) -> list[Task]:
    """``k`` tasks spread over the list (tau2's tasks come grouped by kind)."""
    if k >= len(tasks):
        return tasks
    step = len(tasks) / k
    return [tasks[int(i * step)] for i in range(k)]
