"""tau2-bench's evaluation as a check kind (``tau2``), over what the tau2 env's probe records.

tau2 (``src/tau2/evaluator``) scores an episode as the product of the terms its task's
``reward_basis`` names: ``DB`` (the final world equals the gold actions' world), ``ENV_ASSERTION``
(the task's assertions hold on the final world), ``ACTION`` (every gold action appears among the
tool calls of either side), ``COMMUNICATE`` (each ``communicate_info`` string is in an assistant
message, case and thousands commas aside) and ``NL_ASSERTION`` (an LLM judge). A conversation
that did not end (cut at the turn limit) scores 0. The child results name each term and why.

Where we are stricter than tau2, on purpose (every term is still reported as tau2 computes it
in ``tau2_reward``, so a score is comparable with published ones):

- ``ACTION`` compares the arguments the gold action names; tau2 compares the keys of the agent's
  call, so a call with no arguments at all matched any gold action of that name.
- ``COMMUNICATE`` counts whenever the task lists information to tell, also where tau2's
  ``reward_basis`` leaves it out (retail's information-only tasks would otherwise be won by
  saying nothing: their world does not change).
- ``COMMUNICATE`` accepts a value in any format (``$1,000.00`` for ``1000``, ``2:05 PM`` for
  ``14:05``), read by :mod:`palaestra.verifiers.answers`: tau2's substring test fails a correct
  agent that formats a number its own way. ``tau2_reward`` keeps tau2's test.
- ``DEVICE`` (telecom, ours): the user made at most :data:`NEEDLESS_DEVICE_ACTIONS` device
  actions beyond the gold's. tau2's telecom terms read only the end state of the phone, so an
  agent that never diagnoses and has the user apply every fix of the manual (in one message or
  several) leaves the phone as the gold does and passed; a real user loses patience with such
  an agent, and so does this term (docs/verifiers.md, "tau2-bench").
- A write the user did not explicitly agree to (the env's ``violations``) fails the episode:
  both tau2 policies demand that confirmation and tau2's reward never checks it.
- ``NL_ASSERTION`` is judged only when a judge endpoint is configured (``PALAESTRA_JUDGE_URL``,
  ``PALAESTRA_JUDGE_MODEL``, ``PALAESTRA_JUDGE_KEY``: any OpenAI-compatible endpoint); without
  one the term is left out of both rewards and the report says it was skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from typing import Any

from palaestra.verifiers import answers
from palaestra.verifiers.base import CheckResult, StateProbe, check_kind

#: tau2's reward terms (``RewardType``); a task's ``reward_basis`` names some of them
REWARD_TYPES = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
#: how many differing fields a failed DB term names
SHOWN = 5
#: device actions beyond the gold's a user puts up with (telecom's dual control): a careful
#: agent may ask for one or two a diagnosis did not strictly need (a restart to be safe); a
#: blind fix-all asks for every fix the manual knows and fails (the ``DEVICE`` term)
NEEDLESS_DEVICE_ACTIONS = 2
#: the user's device tools that only look (they change nothing, so they are never needless)
_LOOKS = ("check_", "run_speed_test", "can_send_mms")


def needless_device_actions(
    calls: list[Mapping[str, Any]], gold: list[Mapping[str, Any]]
) -> dict[str, int]:
    """The user's device actions beyond the gold's, by tool: each made more often than the
    gold makes it (a toggle the gold does once, done three times, counts two). Looking
    (``check_*``, a speed test) is never needless."""
    done: dict[str, int] = {}
    for c in calls:
        if c.get("by") == "user" and c.get("ok", True) and not str(c["name"]).startswith(_LOOKS):
            done[c["name"]] = done.get(c["name"], 0) + 1
    wanted: dict[str, int] = {}
    for g in gold:
        if g.get("requestor") == "user":
            wanted[g["name"]] = wanted.get(g["name"], 0) + 1
    return {n: k - wanted.get(n, 0) for n, k in done.items() if k > wanted.get(n, 0)}


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Every field where two worlds (plain JSON data) differ, as ``path: got != want``. An
    entity held as JSON object text (retail's rows) is compared as data where it differs."""
    if got == want:
        return []
    if isinstance(got, str) and isinstance(want, str) and got[:1] == want[:1] == "{":
        with contextlib.suppress(ValueError):
            got, want = json.loads(got), json.loads(want)
    out: list[str] = []
    if isinstance(got, Mapping) and isinstance(want, Mapping):
        for key in sorted(set(got) | set(want), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in got or key not in want:
                side = "missing" if key not in got else "unexpected"
                out.append(f"{where}: {side}")
            else:
                out += differences(got[key], want[key], where)
    elif isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            out += differences(a, b, f"{path}[{i}]")
    elif got != want:
        out.append(
            f"{path}: {json.dumps(got, default=str)[:80]} != {json.dumps(want, default=str)[:80]}"
        )
    return out


def action_matches(gold: Mapping[str, Any], call: Mapping[str, Any], *, lenient: bool) -> bool:
    """tau2's ``Action.compare_with_tool_call``; ``lenient`` compares the call's own keys (as
    tau2 does) instead of the gold's."""
    if gold.get("name") != call.get("name"):
        return False
    args, wanted = call.get("args") or {}, gold.get("arguments") or {}
    keys = gold.get("compare_args")
    if keys is None:
        keys = list(args) if lenient else list(wanted)
    return all(args.get(k) == wanted.get(k) for k in keys)


def told(said: list[str], info: str) -> bool:
    """tau2's COMMUNICATE test for one string."""
    return any(info.lower() in text.lower().replace(",", "") for text in said)


def told_any_format(said: list[str], info: str) -> bool:
    """Our COMMUNICATE test: tau2's, or the value in any format (``$1,000.00`` for
    ``1000``, ``2:05 PM`` for ``14:05``), read as every family's answers are
    (:mod:`palaestra.verifiers.answers`); ``tau2_reward`` keeps tau2's own test."""
    return told(said, info) or any(answers.says(text, info) for text in said)


def _term(name: str, ok: bool, detail: str) -> CheckResult:
    return CheckResult(f"tau2_{name.lower()}", ok, 1.0 if ok else 0.0, detail)


@check_kind("tau2")
def _tau2(probe: StateProbe, spec: dict[str, Any]) -> CheckResult:
    basis = set(spec.get("reward_basis") or [])
    if not basis or basis - set(REWARD_TYPES):
        # an empty basis would score only the rules: any polite episode would pass
        raise ValueError(f"tau2 reward_basis must name some of {list(REWARD_TYPES)}, got {basis}")
    state = probe.read()
    terms: list[CheckResult] = []
    tau2_terms: list[bool] = []
    if state.get("ended_by") is None:
        return CheckResult(
            "tau2", False, 0.0, "the conversation did not end (tau2 scores a premature end 0)"
        )
    if "DB" in basis:
        diff = differences(state["world"], state["gold"]())
        shown = "; ".join(diff[:SHOWN]) + (
            f"; and {len(diff) - SHOWN} more" if len(diff) > SHOWN else ""
        )
        terms.append(_term("DB", not diff, shown or "the world equals the gold actions' world"))
        tau2_terms.append(not diff)
    if "ENV_ASSERTION" in basis:
        failed = [a["name"] for a in state["assertions"] if not a["ok"]]
        terms.append(
            _term(
                "ENV_ASSERTION",
                not failed,
                f"failed: {', '.join(failed)}" if failed else "every env assertion holds",
            )
        )
        tau2_terms.append(not failed)
    gold = spec.get("actions") or []
    if "ACTION" in basis:
        missing = [
            g["name"]
            for g in gold
            if not any(action_matches(g, c, lenient=False) for c in state["calls"])
        ]
        terms.append(
            _term(
                "ACTION",
                not missing,
                f"gold actions not made: {', '.join(missing)}"
                if missing
                else "every gold action made",
            )
        )
        tau2_terms.append(
            all(any(action_matches(g, c, lenient=True) for c in state["calls"]) for g in gold)
        )
    info = spec.get("communicate_info") or []
    if info:
        untold = [i for i in info if not told_any_format(state["said"], i)]
        terms.append(
            _term(
                "COMMUNICATE",
                not untold,
                f"not told: {', '.join(untold)}" if untold else "every required fact told",
            )
        )
        if "COMMUNICATE" in basis:
            tau2_terms.append(all(told(state["said"], i) for i in info))
    assertions = spec.get("nl_assertions") or []
    if "NL_ASSERTION" in basis and assertions:
        verdicts = judge(state["transcript"], assertions)
        if verdicts is None:
            terms.append(
                CheckResult(
                    "tau2_nl_assertion",
                    True,
                    1.0,
                    f"skipped: {len(assertions)} natural-language assertion(s) need an LLM judge "
                    "(PALAESTRA_JUDGE_URL is not set)",
                )
            )
        else:
            unmet = [a for a, ok in zip(assertions, verdicts, strict=True) if not ok]
            terms.append(
                _term(
                    "NL_ASSERTION",
                    not unmet,
                    f"unmet: {'; '.join(unmet)}" if unmet else "every assertion met (LLM judge)",
                )
            )
            tau2_terms.append(not unmet)
    if state.get("domain") == "telecom":
        extra = needless_device_actions(state["calls"], gold)
        count = sum(extra.values())
        terms.append(
            _term(
                "DEVICE",
                count <= NEEDLESS_DEVICE_ACTIONS,
                f"{count} device action(s) the fault did not need"
                + (f": {', '.join(f'{n} x{k}' for n, k in sorted(extra.items()))}" if extra else "")
                + f" (at most {NEEDLESS_DEVICE_ACTIONS})",
            )
        )
    violations = state.get("violations") or []
    terms.append(
        _term(
            "RULES",
            not violations,
            "; ".join(violations) if violations else "every write had the user's explicit yes",
        )
    )
    ok = all(t.passed for t in terms)
    tau2_reward = 1.0 if all(tau2_terms) else 0.0
    skipped = any(t.detail.startswith("skipped") for t in terms)
    detail = f"tau2_reward={tau2_reward:.1f}" + (" (NL assertions skipped)" if skipped else "")
    return CheckResult("tau2", ok, 1.0 if ok else 0.0, detail, terms)


def judge(transcript: list[Mapping[str, Any]], assertions: list[str]) -> list[bool] | None:
    """Each assertion's verdict from the configured LLM judge, or None with no judge set. A
    judge that fails or answers out of form is an error, never a pass."""
    url = os.environ.get("PALAESTRA_JUDGE_URL")
    if not url:
        return None
    import httpx

    lines = "\n".join(f"{m['role']}: {m['content']}" for m in transcript)
    listed = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(assertions))
    prompt = (
        "Here is a customer-service conversation between an assistant, a user and tools:\n"
        f"{lines}\n\nFor each numbered assertion about the assistant's behaviour, say whether "
        f"the conversation shows it holds.\n{listed}\n\nAnswer with JSON only: "
        '{"verdicts": [true or false, one per assertion, in order]}'
    )
    key = os.environ.get("PALAESTRA_JUDGE_KEY")
    response = httpx.post(
        url.rstrip("/") + "/chat/completions",
        json={
            "model": os.environ.get("PALAESTRA_JUDGE_MODEL", "gpt-4o-mini"),
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        },
        headers={"Authorization": f"Bearer {key}"} if key else {},
        timeout=60,
    )
    response.raise_for_status()
    text = response.json()["choices"][0]["message"]["content"]
    verdicts = json.loads(text[text.find("{") : text.rfind("}") + 1])["verdicts"]
    if not (isinstance(verdicts, list) and len(verdicts) == len(assertions)):
        raise ValueError(f"the judge answered {len(verdicts)} verdicts for {len(assertions)}")
    return [v is True for v in verdicts]
