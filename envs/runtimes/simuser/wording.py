"""How the simulated user says things: templates per act, coloured by a persona.

Wording is the only thing a persona changes. Every template takes the act's values verbatim,
so a terse user and a chatty one state the same facts; what differs is the frame around them.
The choice among phrasings comes from the episode's seeded generator: same seed, same words.
"""

from __future__ import annotations

import random

PERSONAS = ("terse", "chatty", "confused", "impatient")

_FRAMES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # persona: (openers, closers) wrapped around the core sentence(s)
    "terse": (("",), ("",)),
    "chatty": (
        ("Oh, sure! ", "Of course! ", "Great question. "),
        (" Thanks so much for your help!", " I really appreciate it.", ""),
    ),
    "confused": (
        ("Hmm, let me see... ", "Sorry, I'm not great with this. ", "Um, okay. "),
        (" I think that's right.", " Is that what you needed?", ""),
    ),
    "impatient": (("", "Look, ", "Right. "), (" Can we hurry this up?", " Quickly, please.", "")),
}

_OPEN = {
    "terse": ("I need to {phrase}.",),
    "chatty": (
        "Hi there! I hope your day is going well. I'd like to {phrase}.",
        "Hello! Thanks for taking my call. I was hoping to {phrase}.",
    ),
    "confused": ("Hi, um, I think I need to {phrase}? I'm not sure how this works.",),
    "impatient": ("I need to {phrase}, and I don't have much time.",),
}

CORE = {
    "inform": ("My {label} is {value}.", "It's {value}.", "The {label} is {value}."),
    "say": ("{text}",),
    "choose": ("I'll take {value}.", "{value}, please."),
    "dont_know": ("I don't have a {label}.", "Sorry, I don't know my {label}."),
    "not_needed": ("I don't think that matters for what I need.",),
    "affirm": ("Yes, please go ahead.", "Yes, that's right, please do.", "Yes, go ahead."),
    "negate": ("No, that's not right: the {label} should be {value}.",),
    "negate_say": ("No, that's not right. {text}",),
    "missing": ("No, not yet: you don't have my {label}. It's {value}.",),
    "missing_say": ("No, not yet: you don't have that from me. {text}",),
    "clarify": (
        "Sorry, I'm not sure what you're asking. Could you put it another way?",
        "Sorry, I didn't follow that. What do you need from me?",
    ),
    "request": ("{question}",),
    "restate": ("I still need to {phrase}.", "What I need is to {phrase}."),
    "insist": ("Are you sure? I'd really like to {phrase}.",),
    "accept_refusal": ("I see. That's a pity, but I understand.", "Okay, I understand."),
    "wait": ("Not yet, we're not done: I still need to {phrase}.",),
    "ack": ("Okay.", "Alright.", "Okay, thanks."),
    "close": ("Great, that's all I needed. Thank you, goodbye!", "Thanks, that's everything. Bye!"),
}


_LOWER = {"My", "The", "It's", "We", "Yes,", "No,", "Sorry,"}


def opening(persona: str, phrase: str, rng: random.Random) -> str:
    return rng.choice(_OPEN[persona]).format(phrase=phrase)


def say(persona: str, parts: list[tuple[str, dict[str, str]]], rng: random.Random) -> str:
    """One user turn: each (act kind, fields) rendered, framed by the persona."""
    core = " ".join(rng.choice(CORE[kind]).format(**fields) for kind, fields in parts)
    if [kind for kind, _ in parts] == ["close"]:  # a goodbye needs no frame
        return core
    openers, closers = _FRAMES[persona]
    opener = rng.choice(openers)
    if opener.endswith(", ") and core.split(" ")[0] in _LOWER:  # "Look, my ..."; values intact
        core = core[0].lower() + core[1:]
    return (opener + core + rng.choice(closers)).strip()
