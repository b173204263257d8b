"""What the simulated user knows of a domain: its slots, and how it asks for what it wants.

Slots are the vocabulary the simulated user and the dialogue-act reader share: a slot names a
fact ("reservation_id"), the words people use for it, and how its values look in text, so the
reader can find "ZFA04Y" in "your reservation ZFA04Y is cancelled" and tell which fact it is.
A :class:`Domain` here is only that language; the usersim family's domains extend it with a
seeded world and tools, and ``ask_user`` in the GUI families builds one from a task's hidden
details. Reading values in text is the reader's (``lexicon.of(domain).slot_values(text)``,
:mod:`.lexicon`): it is built from a domain, which does not know it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from palaestra.envs.runtimes.simuser import values


@dataclass(frozen=True)
class Slot:
    """A kind of fact. ``pattern`` finds its values in text; ``values`` lists a closed set."""

    name: str
    label: str
    words: tuple[str, ...]
    pattern: str | None = None
    values: tuple[str, ...] = ()

    def find(self, text: str) -> list[str]:
        """Values in ``text``; a pattern's first group is the value when it has one, and a
        longer listed value hides the shorter ones inside it ("basic economy", not "economy")."""
        found: list[str] = []
        if self.pattern:
            for m in re.finditer(self.pattern, text):
                found.append(m.group(1) if m.groups() else m.group(0))
        low = text.lower()
        for value in sorted(self.values, key=len, reverse=True):
            hit = re.search(rf"(?<![\w-]){re.escape(value.lower())}(?![\w-])", low)
            if hit:
                found.append(value)
                low = low[: hit.start()] + " " * len(value) + low[hit.end() :]
        return found

    def asked(self, text: str) -> bool:
        low = text.lower()
        return any(re.search(rf"\b{re.escape(w)}\b", low) for w in self.words)


def by_name(*slots: Slot) -> dict[str, Slot]:
    """A domain's slots keyed by their names, in the order given (the order the reader looks)."""
    return {slot.name: slot for slot in slots}


#: values as people say them: "$968" is 968.00, "--12-31" any year's December 31
same_value = values.same_value


class Domain:
    """A domain's language: its slots, how the user asks for what it wants and how it states
    what it knows."""

    name: ClassVar[str] = ""
    #: the class's slots, or one instance's (a domain read from data when it is made)
    slots: dict[str, Slot] = {}
    requests: ClassVar[dict[str, str]] = {}  # request slot -> how the user asks for it
    #: fact slot -> how the user states its value where a bare value would not be read as that
    #: slot ("We are {value} passengers."); the slot's pattern must find it there
    phrases: ClassVar[dict[str, str]] = {}
