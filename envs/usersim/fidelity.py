"""How good is the simulated user? Measured from transcripts, not from the simulator's own account.

Every task is played by each scripted assistant (competent, irrelevant, early, wrong) under
several seeds (so several personas). The transcript is then read back with the rule-based act
reader and the goal, and four behaviours are scored:

- **goal adherence**: after each assistant proposal (a confirmation or an offer), the user says
  yes exactly when the proposal matches its goal and no when it does not;
- **constraint consistency**: the user never states two different values for one slot in a
  conversation;
- **invented details**: user turns that state a value the goal does not hold (asked about
  something it does not know, a good user says so);
- **premature termination**: the user closes before the assistant has reported the request done
  or refused and told everything the user asked for.

The composite behaviour score is the mean of adherence, consistency, 1 - invented rate and
1 - premature rate. Beside it, task success per assistant: the competent one must solve at least
95% of the tasks and the bad ones must fail theirs, or the user is not discriminating.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from palaestra.envs.runtimes.dialogue.fidelity import ratio
from palaestra.envs.runtimes.dialogue.phrasing import BANKS, STYLES
from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.runtimes.simuser import lexicon
from palaestra.envs.runtimes.simuser.domain import Domain, same_value
from palaestra.envs.runtimes.simuser.user import Goal
from palaestra.envs.usersim import FAMILY
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.envs.usersim.policies import KINDS
from palaestra.envs.usersim.reworded import RewordedAssistant
from palaestra.envs.usersim.world import domain
from palaestra.policies import run_episode
from palaestra.tasks import Task


@dataclass
class Tally:
    decisions: int = 0
    right_decisions: int = 0
    conversations: int = 0
    consistent: int = 0
    user_turns: int = 0
    invented_turns: int = 0
    closed: int = 0
    premature: int = 0
    solved: dict[str, list[bool]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def add(self, other: Tally) -> None:
        for key, value in asdict(other).items():
            if key != "solved":
                setattr(self, key, getattr(self, key) + value)
        for kind, results in other.solved.items():
            self.solved[kind] += results


def score_conversation(dom: Domain, goal: Goal, messages: list[dict[str, Any]]) -> Tally:
    """The four behaviours of one transcript."""
    t = Tally(conversations=1)
    words = lexicon.of(dom)
    stated: dict[str, set[str]] = {}
    settled = False  # the assistant reported done or refused
    told: set[str] = set()
    last_assistant: list[A.Act] = []
    users = [m for m in messages if m["role"] in ("assistant", "user")]
    for i, m in enumerate(users):
        if m["role"] == "assistant":
            last_assistant = A.read(dom, m["content"])
            for act in last_assistant:
                settled |= act.kind in (A.DONE, A.REFUSE)
                told |= {
                    r
                    for r in goal.requests
                    if r in act.values and (r in words.unique or words.names(r, act.text))
                }
            continue
        t.user_turns += 1
        values = lexicon.of(dom).slot_values(m["content"])
        if any(
            slot not in goal.facts or not all(same_value(v, goal.facts[slot]) for v in found)
            for slot, found in values.items()
        ):
            t.invented_turns += 1
        for slot, found in values.items():
            stated.setdefault(slot, set()).update(v.lower() for v in found)
        if i > 0:
            for act in last_assistant:
                if act.kind not in (A.CONFIRM, A.OFFER):
                    continue
                mismatch = any(
                    slot in goal.facts and not any(same_value(v, goal.facts[slot]) for v in found)
                    for slot, found in act.values.items()
                )
                t.decisions += 1
                agrees = A.user_agrees(m["content"])
                t.right_decisions += agrees is (not mismatch)
            last_assistant = []
        if m.get("closed"):
            t.closed += 1
            complete = (settled or not goal.action) and (
                set(goal.requests) <= told or not goal.grantable
            )
            t.premature += not complete
    t.consistent = int(all(len(v) <= 1 for v in stated.values()))
    return t


@dataclass
class FidelityReport:
    episodes: int
    adherence: float
    consistency: float
    invented_rate: float
    premature_rate: float
    #: the mean of the four behaviours, worked out from them (not given)
    composite: float = field(init=False)
    success: dict[str, float]
    counts: dict[str, int]

    def __post_init__(self) -> None:
        rates = [self.adherence, self.consistency, 1 - self.invented_rate, 1 - self.premature_rate]
        self.composite = round(statistics.mean(rates), 4)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def report(t: Tally) -> FidelityReport:
    return FidelityReport(
        episodes=t.conversations,
        adherence=ratio(t.right_decisions, t.decisions),
        consistency=ratio(t.consistent, t.conversations),
        invented_rate=ratio(t.invented_turns, t.user_turns, 0.0),
        premature_rate=ratio(t.premature, t.closed, 0.0),
        success={k: ratio(sum(v), len(v), 0.0) for k, v in t.solved.items() if v},
        counts={
            "decisions": t.decisions,
            "user_turns": t.user_turns,
            "closed": t.closed,
        },
    )


def measure(
    tasks: Iterable[Task],
    seeds: int = 2,
    env_kwargs: dict[str, Any] | None = None,
    on_episode: Callable[[], None] | None = None,
) -> FidelityReport:
    """Play every task with every scripted assistant under ``seeds`` seeds; score the user."""
    env = UserSimEnv(**(env_kwargs or {}))
    total = Tally()
    try:
        for task in tasks:
            dom = domain(task.setup["domain"])
            goal = Goal.from_json(task.setup["goal"])
            for kind in KINDS:
                for seed in range(seeds):
                    result = run_episode(env, FAMILY.policy(kind, seed=seed), task, seed=seed)
                    assert env.episode is not None
                    messages = _with_close(env.episode.messages, env.episode.user.state.closed)
                    one = score_conversation(dom, goal, messages)
                    one.solved[kind].append(bool(result.info.get("verifier", {}).get("success")))
                    total.add(one)
                    if on_episode:
                        on_episode()
    finally:
        env.close()
    return report(total)


@dataclass
class StyleReport:
    """Task success of the competent assistant's decisions worded in each style (and of the
    wrong assistant's: it must stay 0), and how many assistant messages the user could not read."""

    episodes: int
    success: dict[str, dict[str, float]]  # bank -> style -> competent success
    wrong: dict[str, dict[str, float]]  # bank -> style -> wrong-assistant success
    unread: dict[str, dict[str, int]]  # bank -> style -> assistant messages left unread
    #: bank -> style -> share of the competent assistant's first tries the user read (a
    #: message it asked to have rephrased is a miss, however the rephrasing fared)
    first_try: dict[str, dict[str, float]] = field(default_factory=dict)
    rephrased: dict[str, dict[str, int]] = field(default_factory=dict)  # messages said again
    failures: list[str] = field(default_factory=list)  # "bank/style/task" of the failed ones

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def table(self) -> list[tuple[str, ...]]:
        """Rows (style, competent success per bank with its first-try read rate in brackets,
        the wrong assistant's highest success, unread messages over all banks) for printing,
        under :meth:`header`."""
        banks = list(self.success)
        return [
            (
                style,
                *(f"{self.success[b][style]:.2f} ({self.first_try[b][style]:.2f})" for b in banks),
                f"{max(self.wrong[b].get(style, 0.0) for b in banks):.2f}",
                str(sum(self.unread[b][style] for b in banks)),
            )
            for style in self.success[banks[0]]
        ]

    def header(self) -> tuple[str, ...]:
        return ("style", *(f"{b} (read)" for b in self.success), "wrong", "unread")


def measure_styles(
    tasks: Iterable[Task],
    styles: Iterable[str] = STYLES,
    banks: Iterable[str] = BANKS,
    seeds: int = 1,
    wrong: bool = True,
    env_kwargs: dict[str, Any] | None = None,
    rephrase: bool = True,
) -> StyleReport:
    """Play every task with the competent assistant's decisions reworded in each style (and,
    with ``wrong``, the wrong assistant's, which must still fail): success per style and bank.
    With ``rephrase`` an assistant asked to rephrase says it once more in other words (as an
    LLM agent would); the first-try read rate is reported either way."""
    tasks, styles, banks = list(tasks), list(styles), list(banks)
    env = UserSimEnv(**(env_kwargs or {}))
    out = StyleReport(0, {}, {}, {})
    try:
        for bank in banks:
            for key in ("success", "wrong", "unread", "first_try", "rephrased"):
                getattr(out, key)[bank] = {}
            for style in styles:
                won: dict[str, list[bool]] = {"competent": [], "wrong": []}
                unread = tries = missed = again = 0
                for task in tasks:
                    for kind in ("competent", "wrong") if wrong else ("competent",):
                        for seed in range(seeds):
                            policy = RewordedAssistant(style, kind, seed, bank, rephrase)
                            result = run_episode(env, policy, task, seed=seed)
                            ok = bool(result.info.get("verifier", {}).get("success"))
                            won[kind].append(ok)
                            out.episodes += 1
                            assert env.episode is not None
                            if kind == "competent":
                                unread += sum(
                                    1 for turn in env.episode.user.log if turn.get("unread")
                                )
                                tries += policy.first_tries
                                missed += policy.first_unread
                                again += policy.rephrased
                                if not ok:
                                    out.failures.append(f"{bank}/{style}/{task.id}/{seed}")
                out.success[bank][style] = ratio(sum(won["competent"]), len(won["competent"]))
                if wrong:
                    out.wrong[bank][style] = ratio(sum(won["wrong"]), len(won["wrong"]), 0.0)
                out.unread[bank][style] = unread
                out.first_try[bank][style] = 1 - ratio(missed, tries, 0.0)
                out.rephrased[bank][style] = again
    finally:
        env.close()
    return out


def _with_close(messages: list[dict[str, Any]], closed: bool) -> list[dict[str, Any]]:
    """Mark the user's closing turn (the env ends the episode on it)."""
    out = [dict(m) for m in messages]
    if closed:
        last_user = max(i for i, m in enumerate(out) if m["role"] == "user")
        out[last_user]["closed"] = True
    return out


def plot(report: FidelityReport, path: str | Path) -> None:
    """A bar per behaviour (higher is better) and per assistant's task success, as a PNG."""
    from PIL import Image, ImageDraw, ImageFont

    bars = [
        ("composite behaviour score", report.composite, "#2b6cb0"),
        ("goal adherence", report.adherence, "#4a90d9"),
        ("constraint consistency", report.consistency, "#4a90d9"),
        ("1 - invented-detail rate", 1 - report.invented_rate, "#4a90d9"),
        ("1 - premature-termination rate", 1 - report.premature_rate, "#4a90d9"),
    ]
    for kind, rate in report.success.items():
        colour = "#2f855a" if kind == "competent" else "#c53030"
        bars.append((f"task success, {kind} assistant", rate, colour))
    font = ImageFont.load_default(size=15)
    label_w, bar_w, row = 270, 360, 30
    image = Image.new("RGB", (label_w + bar_w + 70, row * len(bars) + 50), "white")
    draw = ImageDraw.Draw(image)
    draw.text((10, 10), f"Simulated-user fidelity ({report.episodes} conversations)", "black", font)
    for i, (label, value, colour) in enumerate(bars):
        y = 40 + i * row
        draw.text((10, y + 4), label, "black", font)
        draw.rectangle((label_w, y + 3, label_w + bar_w, y + row - 5), outline="#cbd5e0")
        draw.rectangle((label_w, y + 3, label_w + round(bar_w * value), y + row - 5), colour)
        draw.text((label_w + bar_w + 8, y + 4), f"{value:.3f}", "black", font)
    image.save(path)
