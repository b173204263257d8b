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

Phrasings come from two banks written apart: ``seen`` and ``heldout``. The reader's lexicon
(:mod:`palaestra.envs.runtimes.simuser.lexicon`) was written from neither, and the held-out bank
was written after it, so its success rate says how the reader does on words nobody tuned it for.
Every choice is drawn from a generator seeded by the episode seed: same seed, same words.

When the user asks what was meant (its request for clarification), the assistant does what an
LLM agent does: it says the same thing once more in other words, from the next bank and another
style (``rephrase=False`` turns this off). It counts its first tries and how many of them the
user could not read, so the first-try read rate is reported apart from the success rate.
"""

from __future__ import annotations

import calendar
import random
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from palaestra.envs.runtimes.simuser import wording
from palaestra.envs.usersim.policies import CLOSING, ScriptedAssistant, _say
from palaestra.envs.usersim.world import bind

STYLES = (
    "polite",
    "combined",
    "reports",
    "confirmations",
    "terse",
    "instructions",
    "formats",
    "mixed",
)
BANKS = ("seen", "heldout", "fresh")

# ----- how an assistant names each slot, and asks for it directly ---------------------------
NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "seen": {
        "reservation_id": ("reservation number", "confirmation code", "booking ref"),
        "user_id": ("user ID", "account username", "user id"),
        "flight_number": ("flight number", "new flight number", "number of the new flight"),
        "cabin": ("cabin class", "class of travel", "fare class"),
        "passengers": ("number of passengers", "number of travellers", "passenger count"),
        "bags": ("number of checked bags", "total number of bags"),
        "area": ("area", "part of town", "neighbourhood"),
        "food": ("cuisine", "type of food", "kind of food"),
        "pricerange": ("price range", "budget"),
        "restaurant": ("restaurant name", "name of the restaurant"),
        "hotel": ("hotel name", "name of the hotel"),
        "stars": ("star rating", "number of stars"),
        "parking": ("parking needs", "parking preference"),
        "people": ("number of people", "party size", "number of guests"),
        "day": ("date", "day", "date of the booking"),
        "time": ("time", "preferred time", "booking time"),
        "nights": ("number of nights", "length of your stay"),
        "reference": ("booking reference", "reference number", "booking ref"),
        "email": ("email address", "e-mail", "email on the account"),
        "order_id": ("order ID", "order number", "order #"),
        "product": ("product", "item", "product in question"),
        "option": ("colour or size", "variant", "new colour or size"),
        "reason": ("reason for cancelling", "reason for the cancellation"),
        "address": ("new shipping address", "new address", "delivery address"),
        "train": ("train code", "train number", "train"),
        "passenger": (
            "passenger's full name",
            "lead passenger's name",
            "name of the lead passenger",
        ),
        "seat_class": ("class", "travel class", "seat class"),
        "card": ("card number", "payment card", "credit card number"),
    },
    "heldout": {
        "reservation_id": ("six-character booking code", "record locator", "reservation reference"),
        "user_id": ("username", "account ID", "login"),
        "flight_number": ("flight you want to switch to", "flight code", "replacement flight"),
        "cabin": ("seating class", "ticket class"),
        "passengers": ("headcount", "number of seats"),
        "bags": ("checked luggage count", "number of suitcases"),
        "area": ("location", "district"),
        "food": ("type of cuisine", "food preference"),
        "pricerange": ("price bracket", "price level"),
        "restaurant": ("restaurant you have in mind", "name of the place"),
        "hotel": ("hotel you have in mind", "name of the property"),
        "stars": ("star category", "number of stars you want"),
        "parking": ("parking requirements",),
        "people": ("group size", "headcount"),
        "day": ("day you'd like", "arrival date"),
        "time": ("time slot", "reservation time"),
        "nights": ("duration of the stay", "how many nights you need"),
        "reference": ("booking code", "reservation code"),
        "email": ("email you signed up with", "contact email"),
        "order_id": ("order reference", "order code"),
        "product": ("item in question", "thing you ordered"),
        "option": ("replacement variant", "colour or size you'd prefer"),
        "reason": ("cause of the cancellation", "reason"),
        "address": ("address to ship to", "destination address"),
        "train": ("train ID", "service number"),
        "passenger": ("traveller's name", "name of the person travelling"),
        "seat_class": ("ticket class", "fare class"),
        "card": ("credit card", "card details"),
    },
    "fresh": {
        "reservation_id": ("reservation ID", "booking confirmation number"),
        "user_id": ("user ID on your account", "account user ID"),
        "flight_number": ("flight number you'd like to switch to", "new flight's number"),
        "cabin": ("cabin you'd prefer", "cabin type"),
        "passengers": ("number of people flying", "how many passengers"),
        "bags": ("number of bags you'd like to check", "bag count"),
        "area": ("area of the city", "part of the city"),
        "food": ("cuisine you're looking for", "style of food"),
        "pricerange": ("price range you have in mind", "budget you have in mind"),
        "restaurant": ("name of the restaurant you'd like", "restaurant you want to book"),
        "hotel": ("name of the hotel you'd like", "hotel you want to stay at"),
        "stars": ("minimum star rating", "star level"),
        "parking": ("parking preference",),
        "people": ("number of diners", "size of your party"),
        "day": ("date you'd like", "date for the reservation"),
        "time": ("time you'd like", "preferred time slot"),
        "nights": ("number of nights you'll stay", "length of the stay"),
        "reference": ("booking reference number", "reference code"),
        "email": ("email address linked to your account", "email associated with the account"),
        "order_id": ("order number (it starts with #W)", "order ID from your confirmation email"),
        "product": ("item you'd like to change", "product name"),
        "option": ("colour or size you'd like instead", "variant you'd prefer"),
        "reason": ("reason for the cancellation", "reason you'd like to cancel"),
        "address": ("new address you'd like it shipped to", "full shipping address"),
        "train": ("train code (for example IC 123)", "code of the train"),
        "passenger": ("full name of the lead passenger", "lead traveller's full name"),
        "seat_class": ("class you'd like to travel in", "seating class"),
        "card": ("card number you'd like to use", "16-digit card number"),
    },
}

QUESTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "seen": {
        "passengers": ("How many tickets?", "For how many?", "How many people are travelling?"),
        "people": ("For how many?", "How many people will be joining?", "How many guests?"),
        "nights": ("How long will you be staying?", "How many nights?"),
        "day": ("When would you like to go?", "What day works for you?", "Which date?"),
        "time": ("What time?", "What time would you like?", "At what time?"),
        "card": ("How would you like to pay?", "Which card will you be paying with?"),
        "seat_class": ("Which class would you like to travel in?",),
        "cabin": ("Which cabin would you like?",),
        "area": ("Which part of town?", "Where in town would you like to be?"),
        "food": ("What kind of food are you after?", "Any cuisine in mind?"),
        "pricerange": ("What's your budget?", "How much would you like to spend?"),
        "reason": ("Why would you like to cancel?", "What's the reason for cancelling?"),
        "product": ("Which item is it?", "Which product?"),
        "option": ("Which colour or size would you like instead?",),
        "stars": ("How many stars?", "What star rating?"),
        "parking": ("Do you need parking?",),
        "train": ("Which train?", "Which train is it?"),
        "passenger": ("Who's travelling?", "What's the name on the booking?"),
        "bags": ("How many bags?", "How many checked bags in total?"),
    },
    "heldout": {
        "passengers": ("How many seats should I book?", "How many of you are flying?"),
        "people": ("How big is your group?", "Table for how many?"),
        "nights": ("How long are you staying for?", "For how long?"),
        "day": ("What day are you thinking of?", "When do you want it for?"),
        "time": ("At what hour?", "What time suits you?"),
        "card": ("Which card should I charge?", "What card are you paying with?"),
        "seat_class": ("Standard or first?",),
        "cabin": ("Which seating class?",),
        "area": ("Any preferred location?",),
        "food": ("What are you in the mood for?",),
        "pricerange": ("What price bracket?",),
        "reason": ("May I ask why?", "What's prompting the cancellation?"),
        "product": ("What did you order?",),
        "option": ("What would you like it swapped to?",),
        "stars": ("Minimum number of stars?",),
        "parking": ("Will you need somewhere to park?",),
        "train": ("What train are you on?",),
        "passenger": ("Who will be travelling?", "Whose name should go on the ticket?"),
        "bags": ("How many suitcases will you check?",),
    },
    "fresh": {
        "passengers": ("How many people will be flying?", "How many tickets do you need?"),
        "people": ("How many people should I book for?", "How many will be dining?"),
        "nights": ("How many nights would you like to stay?", "How many nights is the stay?"),
        "day": ("Which date would you like to book?", "What date should I book it for?"),
        "time": ("What time should I book it for?", "What time works best for you?"),
        "card": ("Which card would you like to use?",),
        "seat_class": ("Would you prefer standard or first class?",),
        "cabin": ("What cabin would you like to fly in?",),
        "area": ("What area would you like?",),
        "food": ("What type of cuisine would you like?",),
        "pricerange": ("What price range are you looking for?",),
        "reason": ("Could you tell me why you'd like to cancel?",),
        "product": ("Which item is this about?",),
        "option": ("Which colour or size would you like?",),
        "stars": ("How many stars should the hotel have?",),
        "parking": ("Will you need parking?",),
        "train": ("Which train are you travelling on?",),
        "passenger": ("What is the lead passenger's full name?",),
        "bags": ("How many bags would you like to check in total?",),
    },
}

# ----- frames per style and bank: requests, combined requests, confirmations, offers ---------
ASK: dict[str, dict[str, tuple[str, ...]]] = {
    "seen": {
        "base": ("Could you please tell me the {name}?",),
        "polite": (
            "Could you please share your {name}?",
            "Would you mind telling me the {name}?",
            "May I please have your {name}?",
            "Could I get the {name}, please?",
            "Would you be able to provide the {name}?",
        ),
        "terse": ("{Name}?", "And the {name}?", "Your {name}?", "{Q}"),
        "instructions": (
            "Please provide the {name}.",
            "Please share your {name}.",
            "I'll need your {name}.",
            "Send me the {name}, please.",
            "Let me know the {name}.",
            "Tell me the {name}, please.",
        ),
        "combined": (
            "Could you give me your {list}?",
            "What are the {list}?",
            "I'll need the {list}.",
            "Please tell me your {list}.",
        ),
    },
    "heldout": {
        "base": ("What is the {name}?",),
        "polite": (
            "Would you kindly let me know the {name}?",
            "If you don't mind, what is the {name}?",
            "I'd be grateful if you could give me the {name}.",
        ),
        "terse": ("{Name}, please.", "Need the {name}.", "{Q}"),
        "instructions": (
            "Kindly send over the {name}.",
            "Go ahead and give me the {name}.",
            "I require the {name} to continue.",
            "Type in the {name}.",
        ),
        "combined": (
            "To proceed I need a few things: the {list}.",
            "Can you tell me the {list}?",
            "Next, the {list}, please.",
        ),
    },
    "fresh": {
        "base": ("Can you tell me the {name}?",),
        "polite": (
            "Could you kindly provide the {name}?",
            "Would you please share the {name} with me?",
            "Please could you let me know the {name}?",
        ),
        "terse": ("{Name}, please?", "What's the {name}?", "{Q}"),
        "instructions": (
            "Please send the {name}.",
            "Please enter the {name}.",
            "I'll need the {name} to look this up.",
            "Provide the {name}, please.",
        ),
        "combined": (
            "Could you please provide the {list}?",
            "Please share the {list}.",
            "What are your {list}?",
        ),
    },
}

CONFIRM: dict[str, dict[str, tuple[str, ...]]] = {
    "seen": {
        "polite": (
            "I can {vp}. Would you like me to go ahead?",
            "Would you like me to {vp}?",
            "If that's alright, I'll {vp}. Shall I go ahead?",
        ),
        "confirmations": (
            "I'll {vp}. Does that sound good?",
            "I'm going to {vp}. Please confirm that you'd like me to go ahead.",
            "I'll {vp}. Please reply 'yes' to confirm.",
            "I'll {vp}. Confirm?",
            "I'll {vp}, OK?",
            "Just to confirm, you'd like me to {vp}?",
            "I'm ready to {vp}. Is that alright with you?",
            "Can I go ahead and {vp}?",
            "Do you want me to {vp}?",
            "Okay to {vp}?",
        ),
        "terse": ("{Vp}. OK?", "{Vp}?", "{Vp}. Confirm?", "Will {vp}. Proceed?"),
        "instructions": (
            "I'll {vp}. Please confirm that you'd like me to go ahead.",
            "Please confirm that I should {vp}.",
            "Please reply 'yes' and I will {vp}.",
        ),
    },
    "heldout": {
        "polite": ("I'd be happy to {vp}. Is that what you'd like?", "May I {vp} for you?"),
        "confirmations": (
            "I'd {vp}. Happy for me to do that?",
            "My plan is to {vp}. Good to go?",
            "I'm about to {vp}. All good?",
            "Want me to {vp}?",
            "Is it okay if I {vp}?",
            "I'll {vp} once you give me the word.",
            "I can {vp} now. Agreed?",
        ),
        "terse": ("{Vp}. Good?", "{Vp}. Yes or no?", "{Vp}, right?"),
        "instructions": (
            "Give me the go-ahead and I'll {vp}.",
            "Say yes to {vp}.",
            "Confirm and I'll {vp}.",
        ),
    },
    "fresh": {
        "polite": (
            "I can {vp} for you. Would you like me to proceed?",
            "Shall I go ahead and {vp}?",
        ),
        "confirmations": (
            "Here's what I'll do: {vp}. Do I have your permission to proceed?",
            "I'm about to {vp}. Can you confirm?",
            "Before I {vp}, please confirm this is correct.",
            "I'll {vp}. Is that OK with you?",
            "Let me {vp}, is that all right?",
            "Do I have your go-ahead to {vp}?",
        ),
        "terse": ("{Vp}, proceed?", "{Vp}. Go ahead?", "{Vp}. Yes?"),
        "instructions": (
            "Please confirm and I'll {vp}.",
            "Reply 'yes' to {vp}.",
            "To {vp}, please confirm.",
        ),
    },
}

OFFER: dict[str, dict[str, tuple[str, ...]]] = {
    "seen": {
        "polite": (
            "I'd recommend {np}. Would that work for you?",
            "I found {np}. Does that suit you?",
        ),
        "confirmations": ("There's {np}. Would you like that one?", "I found {np}. Sound good?"),
        "terse": ("{Np}?", "{Np}. OK?"),
        "instructions": ("I suggest {np}. Please confirm it works for you.",),
    },
    "heldout": {
        "polite": ("What do you think of {np}?", "One option is {np}. Would you like it?"),
        "confirmations": ("{Np} could be a good fit. Shall we go with it?",),
        "terse": ("{Np}. Good?",),
        "instructions": ("Take a look at {np} and tell me if it works.",),
    },
    "fresh": {
        "polite": ("I found {np}. Would you like to go with that?", "May I suggest {np}?"),
        "confirmations": ("{Np} is available. Does that work?",),
        "terse": ("{Np}, OK?",),
        "instructions": ("I recommend {np}; let me know if that works.",),
    },
}

REFUSE: dict[str, tuple[str, ...]] = {
    "seen": (
        "Our policy doesn't let me {vp}: {why}.",
        "Sorry, it won't be possible to {vp}: {why}.",
        "I have to decline to {vp}: {why}.",
        "That's not something I'm able to do ({vp}): {why}.",
    ),
    "heldout": (
        "There's no way for me to {vp}: {why}.",
        "The system won't let me {vp}: {why}.",
        "I'm not in a position to {vp}: {why}.",
        "Regrettably I must turn this down, {vp}: {why}.",
    ),
    "fresh": (
        "I'm not able to {vp}, because {why}.",
        "Per our policy I can't {vp}: {why}.",
        "That request can't be processed ({vp}): {why}.",
        "Sorry, I'm unable to {vp}: {why}.",
    ),
}
TERSE_REFUSE = {
    "seen": ("Not possible: {why}.", "No can do: {why}."),
    "heldout": ("Denied: {why}.",),
    "fresh": ("Can't: {why}.", "Not allowed: {why}."),
}

#: report rewrites (pattern, replacements); "\1" etc. are the pattern's groups
REPORT: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "seen": [
        (r"has been (\w+ed)\b", (r"is \1", r"was \1", r"is now \1")),
        (
            r"(\$[\d,.]+) will be refunded(?: to your [\w ]+)?",
            (r"you'll get \1 back", r"you will receive \1 back", r"\1 is being refunded"),
        ),
        (r"The total price is (\$[\d,.]+)", (r"It comes to \1", r"That's \1 in total")),
        (r"The fee charged is (\$[\d,.]+)", (r"You were charged a fee of \1", r"That cost \1")),
        (r"Your booking reference is (HB-\d+)", (r"Your ref is \1", r"Reference: \1")),
        (r"Its phone number is", ("Their number is", "You can call them on")),
        (
            r"The phone number of the hotel is",
            ("The hotel's number is", "You can call the hotel on"),
        ),
        (r"and its address is", ("and they're at", "and you'll find them at")),
        (r"departs at", ("leaves at", "is scheduled to leave at")),
    ],
    "heldout": [
        (r"has been (\w+ed)\b", (r"got \1", r"was \1 just now")),
        (
            r"(\$[\d,.]+) will be refunded(?: to your [\w ]+)?",
            (r"\1 goes back to you", r"expect \1 back"),
        ),
        (r"The total price is (\$[\d,.]+)", (r"You'll pay \1 altogether", r"The cost is \1")),
        (r"The fee charged is (\$[\d,.]+)", (r"It cost you \1",)),
        (
            r"Your booking reference is (HB-\d+)",
            (r"Keep this code: \1", r"Quote \1 if you call us"),
        ),
        (r"Its phone number is", ("They can be reached at",)),
        (r"The phone number of the hotel is", ("The hotel can be reached at",)),
        (r"and its address is", ("and it sits at",)),
        (r"departs at", ("sets off at",)),
    ],
    "fresh": [
        (r"has been (\w+ed)\b", (r"has been successfully \1", r"is now \1")),
        (
            r"(\$[\d,.]+) will be refunded(?: to your [\w ]+)?",
            (r"a refund of \1 will be issued", r"you will be refunded \1"),
        ),
        (r"The total price is (\$[\d,.]+)", (r"The total comes to \1", r"Total charged: \1")),
        (r"The fee charged is (\$[\d,.]+)", (r"A fee of \1 was charged",)),
        (
            r"Your booking reference is (HB-\d+)",
            (r"Your confirmation number is \1", r"Booking reference: \1"),
        ),
        (r"Its phone number is", ("Phone:", "The phone number is")),
        (r"The phone number of the hotel is", ("The hotel's phone number is",)),
        (r"and its address is", ("and it's located at",)),
        (r"departs at", ("is scheduled to depart at",)),
    ],
}

CLOSE: dict[str, tuple[str, ...]] = {
    "seen": (
        "Anything else?",
        "Can I help with anything else?",
        "Is there something else you need?",
        "Will that be all?",
        "What else can I do for you?",
    ),
    "heldout": (
        "Need help with anything more?",
        "Is that everything for today?",
        "Anything more I can do?",
        "Let me know if I can help further.",
    ),
    "fresh": (
        "Is there anything else you'd like help with?",
        "Anything else I can do for you today?",
        "Can I assist you with anything else?",
        "Let me know if you need anything else!",
    ),
}
TERSE_CLOSE = {
    "seen": ("Anything else?", "Done. Anything else?"),
    "heldout": ("More?", "That it?"),
    "fresh": ("Anything else?", "Else?"),
}

_NUM = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]
_MONTHS = list(calendar.month_name)[1:]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# ----- value formats ------------------------------------------------------------------------
def _count(m: re.Match[str], r: random.Random) -> str:
    n, noun = int(m.group(1)), m.group(2)
    word = _NUM[n] if n < len(_NUM) else str(n)
    forms = [f"{word} {noun}"]
    if noun in ("people", "guests", "passengers"):
        forms += [f"a party of {n}", f"{word} {noun}"]
    return r.choice(forms)


def _date(m: re.Match[str], r: random.Random) -> str:
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    suffix = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
    month = _MONTHS[mo - 1]
    return r.choice(
        [f"{month} {d}", f"{month[:3]} {d}{suffix}", f"{d} {month} {y}", f"{mo:02d}/{d:02d}/{y}"]
    )


def _time(m: re.Match[str], r: random.Random) -> str:
    h, mi = int(m.group(1)), m.group(2)
    h12 = h % 12 or 12
    half = "PM" if h >= 12 else "AM"
    return r.choice([f"{h12}:{mi} {half}", f"{h12:02d}:{mi} {half}", f"{h12}:{mi}{half.lower()}"])


def _money(m: re.Match[str], r: random.Random) -> str:
    amount = m.group(1)
    whole = amount.removesuffix(".00")
    return r.choice([f"${whole}", f"{amount} dollars", f"USD {amount}", f"${amount} USD"])


FORMATS: list[tuple[str, Callable[[re.Match[str], random.Random], str]]] = [
    (r"\b(\d{1,2}) (people|passengers|guests|nights|checked bags|seats)\b", _count),
    (r"\b(20\d\d)-(\d\d)-(\d\d)\b", _date),
    (r"(?<![\d:])([01]\d|2[0-3]):([0-5]\d)\b", _time),
    (r"\$(\d[\d,]*\.\d\d)\b", _money),
]


def reformat(text: str, r: random.Random) -> str:
    """``text`` with its counts, dates, times and sums of money in other usual formats."""
    for pattern, fn in FORMATS:
        text = re.sub(pattern, lambda m, fn=fn: fn(m, r), text)
    return text


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
        return frame.format(name=name, Name=_cap(name), Q=self._pick(question) if question else "")

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
            return self._pick(frames).format(np=np, Np=_cap(np))
        m = _CONSENT_TAIL.match(text) or _SHALL.match(text)
        frames = CONFIRM[self.bank].get(style)
        if not m or not frames:
            return text
        vp = m.group(1)
        return self._pick(frames).format(vp=vp, Vp=_cap(vp))

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
            text = re.sub(pattern, lambda m, o=options: m.expand(self._pick(o)), text)
        text = ". ".join(_cap(s) for s in text.split(". "))
        return ("Done. " + text) if style == "terse" else text

    def _close(self) -> str:
        style = self._style("close")
        if style == "terse":
            return self._pick(TERSE_CLOSE[self.bank])
        if style in ("reports", "polite"):
            return self._pick(CLOSE[self.bank])
        return CLOSING
