"""Reworded assistants: the competent assistant's decisions in other words.

An agent's score must measure its decisions, not how closely its wording matches the simulated
user's reader. A :class:`RewordedAssistant` makes exactly the competent (or the wrong) scripted
assistant's moves, the same questions, tool calls, proposals and reports, and only words its
messages differently, in one of :data:`STYLES`:

- ``polite``: "Could you please share ...?", "Would you like me to go ahead?";
- ``combined``: the slots the plan asks in a row are asked in one message;
- ``reports``: other ways to report results, refusals and closings (any tense, no cue words);
- ``confirmations``: other ways to ask for consent ("Does that sound good?", "Confirm?");
- ``terse``: "Booking ref?", "... OK?", "Done.";
- ``instructions``: requests as instructions ("Please provide the order ID.");
- ``formats``: values in other formats ("three people", "8:30 PM", "December 31", "$968");
- ``mixed``: every message in a style drawn at random.

Phrasings come from the dialogue runtime's banks (:mod:`palaestra.envs.runtimes.dialogue.phrasing`),
two of them written apart: ``seen`` and ``heldout``. The reader's lexicon
(:mod:`palaestra.envs.runtimes.simuser.lexicon`) was written from neither, and the held-out bank
was written after it, so its success rate says how the reader does on words nobody tuned it for.
Every choice is drawn from a generator seeded by the episode seed: same seed, same words.

When the user asks what was meant (its request for clarification), the assistant does what an
LLM agent does: it says the same thing once more in other words, from the next bank and another
style (``rephrase=False`` turns this off). It counts its first tries and how many of them the
user could not read, so the first-try read rate is reported apart from the success rate.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from palaestra.envs.runtimes.dialogue.env import say as _say
from palaestra.envs.runtimes.dialogue.phrasing import (
    ASK,
    BANKS,
    CLOSE,
    CONFIRM,
    NAMES,
    OFFER,
    QUESTIONS,
    REFUSE,
    REPORT,
    STYLES,
    TERSE_CLOSE,
    TERSE_REFUSE,
    cap,
    reformat,
)
from palaestra.envs.runtimes.simuser import wording
from palaestra.envs.usersim.policies import CLOSING, ScriptedAssistant
from palaestra.envs.usersim.world import bind

# ----- the assistant ------------------------------------------------------------------------
_CONSENT_TAIL = re.compile(r"^(?:I will|I can) (.+?)\.\s*Shall I proceed\?$")
_SHALL = re.compile(r"^Shall I (.+)\?$")
_HOW_ABOUT = re.compile(r"^How about (.+)\?$")
_SORRY = re.compile(r"^I'm sorry, but (?:I cannot )?(.+?): (.+?)\.?$")


def _draw_key(task: Any) -> str:
    """What a task's words are drawn by: its id as it was before public ids stopped naming
    the intent (``domain-intent-digest``), so a task keeps its words, and the fidelity figures
    stay comparable, across that rename (the assistant is scripted and privileged: it may read
    the private intent)."""
    intent = task.metadata.get("intent") if task is not None else None
    domain, _, digest = task.id.partition("-") if task is not None else ("", "", "")
    return f"{domain}-{intent}-{digest}" if intent and digest and "-" not in digest else task.id


class RewordedAssistant(ScriptedAssistant):
    """The ``kind`` scripted assistant's moves, worded in ``style`` from phrasing ``bank``."""

    def __init__(
        self,
        style: str,
        kind: str = "competent",
        seed: int = 0,
        bank: str = "seen",
        rephrase: bool = True,
    ) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; styles: {list(STYLES)}")
        if bank not in BANKS:
            raise ValueError(f"unknown phrasing bank {bank!r}; banks: {list(BANKS)}")
        super().__init__(kind, seed)
        self.style, self.bank, self.rephrase = style, bank, rephrase

    def reset(self, task: Any) -> None:
        super().reset(task)
        self.words = random.Random(f"{self.seed}:{self.style}:{self.bank}:{_draw_key(task)}")
        self._asked: list[str] = []
        self._redo: Callable[[], str] | None = None  # the last message in other words
        self._first = False  # the last message was a first try (not a rephrasing)
        self.first_tries = 0  # messages said for the first time
        self.first_unread = 0  # of those, how many the user asked to have rephrased
        self.rephrased = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        reply = observation.get("user_message", "")
        unread = any(c.lower() in reply.lower() for c in wording.CORE["clarify"])
        self.first_unread += self._first and unread
        self._first = False
        if unread and self.rephrase and self._redo is not None:
            redo, self._redo = self._redo, None
            self.rephrased += 1
            return _say(redo())
        action = self._next(observation, info)
        if action["name"] == "send_message":
            self.first_tries += 1
            self._first = True
        else:
            self._redo = None
        return action

    def _next(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        reply = observation.get("user_message", "")
        for slot in self._asked:  # several slots may be asked at once: read each
            found = self.dom.slots[slot].find(reply)
            if found:
                self.heard[slot] = found[0]
        self._asked = []
        return super().act(observation, info)

    # the competent script, worded in the style
    def _script(self) -> Iterator[dict[str, Any]]:
        if self.kind not in ("competent", "wrong"):
            yield from super()._script()
            return
        plan = list(self.plan)
        i = 0
        while i < len(plan):
            step = plan[i]
            if "ask" in step:
                slots = [step["ask"]]
                if self._style("ask") == "combined":
                    while i + 1 < len(plan) and "ask" in plan[i + 1] and len(slots) < 3:
                        i += 1
                        slots.append(plan[i]["ask"])
                self._asked = slots
                yield self._worded(partial(self._ask, slots))
            elif "call" in step:
                args = bind(step["args"], self._value)
                yield {"name": "call_tool", "args": {"name": step["call"], "arguments": args}}
            elif "confirm" in step or "offer" in step:
                yield self._worded(partial(self._propose, step))
                if self.kind == "competent" and self._disagreed:
                    yield self._worded(partial(self._propose, step))
            elif "tell" in step:
                told = self._tell(step)
                yield self._worded(partial(self._report, told))
            i += 1
        yield self._worded(self._close)

    def _worded(self, word: Callable[[], str]) -> dict[str, Any]:
        """The message ``word`` says, remembering how to say it again in other words: from
        the next phrasing bank, in another style."""

        def again() -> str:
            kept = self.bank, self.style
            self.bank = BANKS[(BANKS.index(self.bank) + 1) % len(BANKS)]
            self.style = "instructions" if self.style == "polite" else "polite"
            try:
                return word()
            finally:
                self.bank, self.style = kept

        self._redo = again
        return _say(word())

    # ----- wording --------------------------------------------------------------------------
    def _style(self, move: str) -> str:
        """The style this message is worded in (``mixed`` draws one per message)."""
        style = self.style
        if style == "mixed":
            style = self.words.choice([s for s in STYLES if s != "mixed"])
        return style

    def _pick(self, options: tuple[str, ...]) -> str:
        return self.words.choice(options)

    def _expand(self, options: tuple[str, ...], match: re.Match[str]) -> str:
        """One of ``options`` with the match's groups filled in (a report's rewording)."""
        return match.expand(self._pick(options))

    def _name(self, slot: str, style: str) -> str:
        """What the message calls ``slot``: the domain's own label unless the style rewords
        requests."""
        names = NAMES[self.bank].get(slot)
        if not names or style not in ("polite", "terse", "instructions", "combined"):
            return self.dom.slots[slot].label
        return self._pick(names)

    def _ask(self, slots: list[str]) -> str:
        style = self._style("ask")
        frames = ASK[self.bank]
        if len(slots) > 1:
            names = [self._name(s, style) for s in slots]
            listed = ", ".join(names[:-1]) + " and " + names[-1]
            return self._pick(frames["combined"]).format(list=listed)
        slot = slots[0]
        question = QUESTIONS[self.bank].get(slot)
        if style in ("polite", "instructions", "terse"):
            frame = self._pick(frames[style])
            if frame == "{Q}" and not question:
                frame = "{Name}?"
        elif question and style == "combined":  # a lone ask among combined ones
            frame = self._pick((*frames["polite"], "{Q}"))
        else:
            frame = self._pick(frames["base"])
        name = self._name(slot, style)
        return frame.format(name=name, Name=cap(name), Q=self._pick(question) if question else "")

    def _propose(self, step: dict[str, Any]) -> str:
        text = self._fill(step.get("confirm") or step["offer"])
        style = self._style("confirm")
        if style == "formats":
            return reformat(text, self.words)
        if "offer" in step:
            m = _HOW_ABOUT.match(text)
            frames = OFFER[self.bank].get(style)
            if not m or not frames:
                return text
            np = m.group(1)
            return self._pick(frames).format(np=np, Np=cap(np))
        m = _CONSENT_TAIL.match(text) or _SHALL.match(text)
        frames = CONFIRM[self.bank].get(style)
        if not m or not frames:
            return text
        vp = m.group(1)
        return self._pick(frames).format(vp=vp, Vp=cap(vp))

    def _report(self, text: str) -> str:
        style = self._style("report")
        if style == "formats":
            return reformat(text, self.words)
        if style not in ("reports", "terse", "polite"):
            return text
        refusal = _SORRY.match(text)
        if refusal:
            vp, why = refusal.groups()
            if not text.startswith("I'm sorry, but I cannot "):  # "flight X cannot take ..."
                vp = "book that"
            frames = TERSE_REFUSE[self.bank] if style == "terse" else REFUSE[self.bank]
            return self._pick(frames).format(vp=vp, why=why.rstrip("."))
        for pattern, options in REPORT[self.bank]:
            text = re.sub(pattern, partial(self._expand, options), text)
        text = ". ".join(cap(s) for s in text.split(". "))
        return ("Done. " + text) if style == "terse" else text

    def _close(self) -> str:
        style = self._style("close")
        if style == "terse":
            return self._pick(TERSE_CLOSE[self.bank])
        if style in ("reports", "polite"):
            return self._pick(CLOSE[self.bank])
        return CLOSING
