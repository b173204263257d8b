"""The simulated user: a symbolic goal and agenda, with language generated from that state.

This is the design ARGUS argues for against free-running LLM users (tau-bench traced up to 30%
of failed trajectories to them: ending early, inventing details). Here the user's state is
explicit: a :class:`Goal` (facts it holds, information it wants, whether the request can be
granted) and an agenda of what it still has to say or get. Each assistant message is read into
dialogue acts; symbolic operations answer them (a request pushes an inform of the goal's value
or an honest "I don't have that"; an offer or confirmation is checked value by value against the
goal); the words come last. Three guards hold whatever the wording:

- **tracker**: every utterance is read back with the same slot reader, and each value in it must
  be the goal's value for that slot (no invented or contradicting detail);
- **stop guard**: the user closes only once its request is done (or refused, when the goal says it
  cannot be granted) and every piece of information it wanted was given;
- **consistency**: the user never states two values for one slot.

An optional LLM (any OpenAI-compatible endpoint) can read the assistant's messages and word the
user's replies; its reading must name known slots and its wording must pass the tracker, or the
rule-based reading or template is used. A dead endpoint is an error or a fallback to rules, as
configured by ``llm_fallback``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.runtimes.simuser import lexicon, wording
from palaestra.envs.runtimes.simuser.domain import Domain, same_value
from palaestra.errors import PalaestraError


@dataclass(frozen=True)
class Goal:
    """What the user wants. ``facts`` are what it knows and will say when asked (and checks in
    offers); ``requests`` the information it wants told; ``grantable`` False when the domain's
    rules forbid the request, so the right outcome is a clear refusal."""

    intent: str
    phrase: str
    facts: dict[str, str]
    requests: tuple[str, ...] = ()
    grantable: bool = True
    #: False for a question only (when does my train leave?): told is done
    action: bool = True

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Goal:
        return cls(
            intent=data["intent"],
            phrase=data["phrase"],
            facts={k: str(v) for k, v in data.get("facts", {}).items()},
            requests=tuple(data.get("requests", ())),
            grantable=bool(data.get("grantable", True)),
            action=bool(data.get("action", True)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "phrase": self.phrase,
            "facts": self.facts,
            "requests": list(self.requests),
            "grantable": self.grantable,
            "action": self.action,
        }


@dataclass
class Turn:
    text: str
    acts: list[tuple[str, dict[str, str]]]
    closed: bool = False


class UserSimError(PalaestraError):
    """The simulated user could not answer (its LLM endpoint failed and no fallback is set)."""


@dataclass
class UserState:
    said: dict[str, str] = field(default_factory=dict)  # slot -> value the user has stated
    answered: dict[str, str] = field(default_factory=dict)  # request slot -> value told
    outcome: str = "pending"  # pending | done | refused
    insisted: int = 0
    closed: bool = False


_CARRY_VALUES = ("inform", "say", "negate", "negate_say", "choose", "missing", "missing_say")
#: the verbs of a proposal to change something: only such a proposal can lack a fact
_WRITE = re.compile(
    r"\b(?:book|cancel|change|move|set|issue|return|exchange|update|modify|reserve|charge|"
    r"rebook|switch|add|refund|place|process)\w*"
)
MAX_INSIST = 2  # after this many refusals of a grantable request the user gives up


class SimulatedUser:
    def __init__(
        self,
        domain: Domain,
        goal: Goal,
        persona: str,
        seed: int,
        llm: Any | None = None,
        llm_fallback: str = "rules",
    ) -> None:
        if persona not in wording.PERSONAS:
            raise ValueError(f"unknown persona {persona!r}; personas: {list(wording.PERSONAS)}")
        self.domain = domain
        self.goal = goal
        self.persona = persona
        self.rng = random.Random(seed)
        self.llm = llm
        self.llm_fallback = llm_fallback
        self.state = UserState()
        self.log: list[dict[str, Any]] = []  # per turn: acts read, acts said, guards applied

    # ----- the conversation ---------------------------------------------------------------
    def opening(self) -> str:
        return wording.opening(self.persona, self.goal.phrase, self.rng)

    def reply(self, message: str) -> Turn:
        """The user's answer to one assistant message. A message it could not read at all is
        logged ``unread`` (the fidelity report counts those)."""
        heard = self._understand(message)
        parts = self._respond(heard)
        text = self._word(parts)
        closed = bool(parts) and parts[-1][0] == "close"
        self.state.closed = closed
        entry: dict[str, Any] = {
            "heard": [a.to_json() for a in heard],
            "said": [p[0] for p in parts],
            "text": text,
        }
        if any(a.kind == A.UNREAD for a in heard):
            entry["unread"] = True
        self.log.append(entry)
        return Turn(text, parts, closed)

    @property
    def goal_met(self) -> bool:
        """The stop guard: the request settled and everything wanted was told."""
        if self.state.outcome == "refused":
            return True
        return self.state.outcome == "done" and all(
            r in self.state.answered for r in self.goal.requests
        )

    # ----- symbolic operations ------------------------------------------------------------
    def _respond(self, heard: list[A.Act]) -> list[tuple[str, dict[str, str]]]:
        out: list[tuple[str, dict[str, str]]] = []
        goal, st = self.goal, self.state
        for act in heard:
            wrong = self._conflict(act.values)
            proposal = act.kind in (A.CONFIRM, A.OFFER)
            lacking = self._missing(act) if proposal and not wrong else None
            if act.kind == A.REQUEST:
                slot = self._resolve(act) if act.alternatives else act.slot
                out.append(self._inform(slot) if slot else ("not_needed", {}))
            elif act.kind in (A.CONFIRM, A.OFFER, A.DONE, A.INFORM) and wrong:
                kind, fields = self._inform(wrong)
                out.append(("negate_say" if kind == "say" else "negate", fields))
                if act.kind == A.DONE:
                    st.outcome = "pending"
            elif lacking:
                kind, fields = self._inform(lacking)
                out.append(("missing_say" if kind == "say" else "missing", fields))
            elif act.kind == A.CONFIRM:
                out.append(("affirm", {}))
            elif act.kind == A.OFFER:
                out.append(self._choose(act.values))
            elif act.kind == A.DONE:
                st.outcome = "done" if st.outcome != "refused" else st.outcome
            elif act.kind == A.REFUSE:
                if not goal.grantable or st.insisted >= MAX_INSIST:
                    st.outcome = "refused"
                    out.append(("accept_refusal", {}))
                else:
                    st.insisted += 1
                    out.append(("insist", {"phrase": goal.phrase}))
            self._note_answers(act)
        answered_all = all(r in st.answered for r in goal.requests)
        if not goal.action and st.outcome == "pending" and goal.requests and answered_all:
            st.outcome = "done"
        # what is left on the agenda once the assistant's acts are answered
        if out:
            return self._dedupe(out)
        missing = [r for r in goal.requests if r not in st.answered]
        if any(a.kind == A.UNREAD for a in heard):  # asked something it could not read
            return [("clarify", {})]
        if st.outcome == "pending":
            if any(a.kind in (A.ANYTHING_ELSE, A.BYE) for a in heard):
                return [("wait", {"phrase": goal.phrase})]
            if not goal.action and missing and not heard:
                return [("request", {"question": self.domain.requests[missing[0]]})]
            if any(a.kind == A.DONE for a in heard) or not heard:
                return [("restate", {"phrase": goal.phrase})]
            return [("ack", {})]
        if st.outcome == "done" and missing:
            return [("request", {"question": self.domain.requests[r]}) for r in missing[:1]]
        return [("close", {})]

    def _inform(self, slot: str) -> tuple[str, dict[str, str]]:
        if slot in self.goal.facts:
            value = self.goal.facts[slot]
            self.state.said[slot] = value
            fields = {"label": self._label(slot), "value": value}
            phrase = self.domain.phrases.get(slot)
            if phrase:
                return ("say", {**fields, "text": phrase.format(value=value)})
            return ("inform", fields)
        if slot in self.domain.slots:
            return ("dont_know", {"label": self._label(slot)})
        return ("not_needed", {})

    def _resolve(self, act: A.Act) -> str | None:
        """A guessed request's slot: the first candidate the goal holds and has not said yet
        (then one it has said), as a person reads an unfamiliar word by what is still open."""
        held = [s for s in act.alternatives if s in self.goal.facts]
        fresh = [s for s in held if s not in self.state.said]
        return next(iter(fresh or held), act.slot)

    def _choose(self, values: dict[str, list[str]]) -> tuple[str, dict[str, str]]:
        """An offer that names the goal's value among others: pick it by name."""
        for slot, found in values.items():
            if slot in self.goal.facts and len(found) > 1:
                return ("choose", {"value": self.goal.facts[slot]})
        return ("affirm", {})

    def _missing(self, act: A.Act) -> str | None:
        """The first fact a proposal to act lacks: one of the goal's that the user has not
        said and the proposal does not name (a booking "for " a passenger never asked for).
        Only a proposal to do something (a write verb) is checked: an offer of a restaurant
        before the party size was asked lacks nothing yet."""
        if not _WRITE.search(act.text.lower()):
            return None
        for slot, value in self.goal.facts.items():
            if slot in self.state.said or slot not in self.domain.slots:
                continue
            if not any(same_value(v, value) for v in act.values.get(slot, ())):
                return slot
        return None

    def _conflict(self, values: dict[str, list[str]]) -> str | None:
        """The first goal slot that the assistant's values name, none of them the goal's."""
        for slot, found in values.items():
            want = self.goal.facts.get(slot)
            if want is not None and not any(same_value(v, want) for v in found):
                return slot
        return None

    def _note_answers(self, act: A.Act) -> None:
        words = lexicon.of(self.domain)
        for request in self.goal.requests:
            if request in act.values and (
                request in words.unique or words.names(request, act.text)
            ):
                self.state.answered[request] = act.values[request][0]

    def _label(self, slot: str) -> str:
        spec = self.domain.slots.get(slot)
        return spec.label if spec else slot.replace("_", " ")

    @staticmethod
    def _dedupe(parts: list[tuple[str, dict[str, str]]]) -> list[tuple[str, dict[str, str]]]:
        out: list[tuple[str, dict[str, str]]] = []
        for part in parts:
            if part not in out:
                out.append(part)
        return out

    # ----- language: rules, or an LLM under the tracker -----------------------------------
    def _understand(self, message: str) -> list[A.Act]:
        if self.llm is None:
            return A.read(self.domain, message)
        try:
            return self._llm_read(self.llm, message)
        except Exception as exc:
            if self.llm_fallback != "rules":
                raise UserSimError(f"simulated user's LLM failed to read a message: {exc}") from exc
            return A.read(self.domain, message)

    def _word(self, parts: list[tuple[str, dict[str, str]]]) -> str:
        template = wording.say(self.persona, parts, self.rng)
        if self.llm is None:
            return template
        try:
            text = self._llm_word(self.llm, parts, template)
        except Exception as exc:
            if self.llm_fallback != "rules":
                raise UserSimError(f"simulated user's LLM failed to word a reply: {exc}") from exc
            return template
        return text if self.tracker_ok(text, parts) else template

    def tracker_ok(self, text: str, parts: list[tuple[str, dict[str, str]]]) -> bool:
        """Every value in ``text`` is the goal's; every value the acts carry is in ``text``."""
        for slot, found in lexicon.of(self.domain).slot_values(text).items():
            want = self.goal.facts.get(slot)
            if want is None or not all(same_value(v, want) for v in found):
                return False
        needed = [f["value"] for kind, f in parts if kind in _CARRY_VALUES]
        if not all(v.lower() in text.lower() for v in needed):
            return False
        agrees = A.user_agrees(text)
        kinds = {k for k, _ in parts}
        if "affirm" in kinds and agrees is not True:
            return False
        return not (
            kinds & {"negate", "negate_say", "missing", "missing_say"} and agrees is not False
        )

    def _llm_read(self, llm: Any, message: str) -> list[A.Act]:
        kinds = [A.REQUEST, A.CONFIRM, A.OFFER, A.DONE, A.REFUSE, A.ANYTHING_ELSE, A.BYE]
        answer = llm.chat(
            "You label a customer-service agent's message with dialogue acts. Answer JSON only: "
            '[{"kind": ..., "slot": ...}] with kind one of ' + ", ".join(kinds) + " and slot one "
            "of " + ", ".join(self.domain.slots) + " (only for request).",
            message,
            temperature=0.0,
        )
        items = json.loads(answer.strip().strip("`").removeprefix("json"))
        values = lexicon.of(self.domain).slot_values(message)
        out = []
        for item in items:
            kind, slot = item.get("kind"), item.get("slot")
            if kind not in kinds or (kind == A.REQUEST and slot not in self.domain.slots):
                raise ValueError(f"LLM gave an unknown act {item!r}")
            out.append(A.Act(kind, slot if kind == A.REQUEST else None, values, message))
        return out

    def _llm_word(self, llm: Any, parts: list[tuple[str, dict[str, str]]], template: str) -> str:
        return llm.chat(
            f"You are a customer talking to a support agent. Persona: {self.persona}. Rewrite "
            "the message in your own words. Keep every name, number, code and date exactly; "
            "add no new facts. Answer with the message only.",
            template,
        ).strip()
