"""Words and people more than one domain has: amounts of money, refunds, counts of things,
customers' user ids."""

from __future__ import annotations

import random

from palaestra.envs.runtimes.simuser.domain import Slot

#: a sum of money as people write it ("$1,234.50"); the value is the number
MONEY = r"\$(\d[\d,]*(?:\.\d{1,2})?)"
REFUND = Slot("refund", "refund", ("refund", "refunded"), MONEY)


def number_of(name: str, words: tuple[str, ...], noun: str) -> Slot:
    """A number of things (people, nights, bags): asked for as the "number of" them, and read
    only where the number stands before ``noun`` (a regex), so "2 bags" is never a passenger
    count."""
    return Slot(name, f"number of {name}", words, rf"\b(\d+) {noun}\b")


# the customers of the worlds that keep accounts: their user ids read the same everywhere
FIRST = ("mia", "noah", "ava", "liam", "emma", "omar", "yara", "ivan", "lena", "raj", "sofia")
LAST = ("li", "khan", "smith", "garcia", "rossi", "kim", "novak", "silva", "ito", "berg")
USER_ID = Slot("user_id", "user id", ("user id", "account", "username"), r"\b[a-z]+_[a-z]+_\d{4}\b")


def customer(r: random.Random) -> tuple[str, str]:
    """A new customer's user id (the form :data:`USER_ID` reads) and the full name it is made
    from, so that a world's accounts look alike across domains."""
    first, last = r.choice(FIRST), r.choice(LAST)
    return f"{first}_{last}_{1000 + r.randrange(9000)}", f"{first.title()} {last.title()}"
