"""``ask_user`` for the GUI families: a simulated user who holds a task's hidden details.

An under-specified GUI task ("book the train the customer wants") keeps some details out of
its instruction and in ``setup["user"]``, e.g. ``{"card number": "4929...", "class": "First"}``.
When the agent calls ``ask_user(question)``, the same agenda-driven user as in the usersim
family answers: each detail is a slot named by its key (its words are the key and the key's
last word), so "What card should I use?" gets the card number and nothing else, and a question
about something it does not hold gets an honest "I don't know", never an invented value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from palaestra.chat import QUESTION, USER
from palaestra.envs.runtimes.simuser.domain import Domain, Slot
from palaestra.envs.runtimes.simuser.user import Goal, SimulatedUser


def _details(facts: dict[str, str]) -> Domain:
    """A domain of one task's details: a slot per key (a class of its own, as every domain's
    slots are its class's)."""

    class Details(Domain):
        name = "ask_user"
        slots = {k: _slot(k, v) for k, v in facts.items()}

    return Details()


def _slot(key: str, value: str) -> Slot:
    words = {key.lower(), key.lower().split()[-1]}
    return Slot(key, key, tuple(sorted(words)), rf"(?<!\w){re.escape(value)}(?!\w)")


class AskUser:
    def __init__(
        self, details: Mapping[str, str], goal: str = "", persona: str = "terse", seed: int = 0
    ) -> None:
        facts = {str(k): str(v) for k, v in details.items()}
        self.user = SimulatedUser(
            _details(facts), Goal("ask", goal or "get this done", facts), persona, seed
        )

    def answer(self, question: str) -> str:
        question = question.strip()
        if not question.endswith("?"):
            question += "?"
        turn = self.user.reply(question)
        if any(kind in ("inform", "say") for kind, _ in turn.acts):
            return turn.text
        return "I don't know that; I've told you everything I know about it."


NO_USER = "(no user is available in this task; decide on your own)"


def exchange(user: AskUser | None, question: str) -> list[str]:
    """The chat lines of one ``ask_user``: the question, then the answer (or that no one is
    there: asking is never a mistake, the task just hides nothing)."""
    answer = user.answer(question) if user is not None else NO_USER
    return [f"{QUESTION}{question}", f"{USER}{answer}"]


def asker(task: object, seed: int = 0) -> AskUser | None:
    """The task's user, or None when the task hides nothing (``setup["user"]`` absent)."""
    setup = getattr(task, "setup", None) or {}
    details = setup.get("user")
    if not details:
        return None
    persona = setup.get("persona", "terse")
    return AskUser(details, getattr(task, "instruction", ""), persona, seed)
