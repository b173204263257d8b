"""The phrase banks and value formats reworded assistants draw from (every dialogue family's).

An agent's score must measure its decisions, not how closely its wording matches a simulated
user's reader; a reworded assistant makes a scripted assistant's moves and words them in one of
:data:`STYLES`, drawing from one of :data:`BANKS`: ``seen`` and ``heldout`` were written apart,
and the reader's lexicon (:mod:`palaestra.envs.runtimes.simuser.lexicon`) from neither, so the
held-out bank's read rate says how a reader does on words nobody tuned it for. The banks hold
how slots are named and asked for (:data:`NAMES`, :data:`QUESTIONS`), request and consent frames
(:data:`ASK`, :data:`CONFIRM`, :data:`OFFER`), refusals, reports and closings; :func:`reformat`
writes counts, dates, times and money in other usual formats.
"""

from __future__ import annotations

import calendar
import random
import re
from collections.abc import Callable

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


def cap(text: str) -> str:
    """``text`` with its first letter capitalized (the rest as it is)."""
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


def _drawn(
    fn: Callable[[re.Match[str], random.Random], str], r: random.Random
) -> Callable[[re.Match[str]], str]:
    """``fn`` with its choices drawn from ``r``: a replacement for :func:`re.sub`."""
    return lambda m: fn(m, r)


def reformat(text: str, r: random.Random) -> str:
    """``text`` with its counts, dates, times and sums of money in other usual formats."""
    for pattern, fn in FORMATS:
        text = re.sub(pattern, _drawn(fn, r), text)
    return text
