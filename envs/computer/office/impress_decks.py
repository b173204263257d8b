"""The decks the Impress templates start from, and the three ways a template speaks about them:
checks on the saved deck, keystrokes in Impress, and Python (odfpy) inside the sandbox.

Three kinds of deck, chosen by seed, all from :mod:`.data`'s company records: a pitch deck
(problem, products, traction, team, the ask), a project update (milestones, risks, budget, next
steps) and a training deck (agenda, preparation, steps, questions). Every deck opens with a title
slide and then has content slides of at most five short bullets (short, so a bullet is one line
on screen and the GUI oracles can walk bullets with the arrow keys).

GUI recipes are Impress's own keyboard: Home/Page Down walk slides in the edit view, Tab selects
a slide's objects in order (title, body, then the rest), Enter edits the selected object, the
Slide menu is Alt+L, the View menu Alt+V, the Insert menu Alt+I.
"""

from __future__ import annotations

from typing import Any

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office import keys as office_keys
from palaestra.envs.computer.office.impress_odp import Deck, Slide

HOME = "/home/user"
KINDS = ("pitch", "update", "training")

_PROBLEMS = (
    "Orders are tracked on paper",
    "Stock counts are always late",
    "Customers wait days for quotes",
    "Teams retype the same data",
    "Reports take a week to build",
)
_RISKS = (
    "Supplier delays on parts",
    "Two key roles still open",
    "Data migration may slip",
    "Budget approval pending",
    "Vendor contract renewal",
)
_TOPICS = ("Warehouse safety", "New till system", "Customer returns", "Stock taking")
_PROJECTS = ("Phoenix", "Harbor", "Atlas", "Beacon", "Summit", "Orchard")


def _people(c: data.Company, n: int) -> tuple[str, ...]:
    return tuple(f"{p.name}, {p.role}" for p in c.staff[:n])


def deck(seed: int) -> tuple[str, Deck]:
    """The seed's deck and its file name (home-relative)."""
    c, r = data.company(seed), data.rng(seed, "impress-deck")
    kind = KINDS[seed % len(KINDS)]
    products = tuple(p.name for p in c.products[:4])
    if kind == "pitch":
        slides = (
            Slide(c.name, ("Investor briefing", c.quarters[-1][0]), layout="title"),
            Slide("The Problem", tuple(r.sample(_PROBLEMS, 3)), notes="Keep this under a minute."),
            Slide("Our Products", products),
            Slide(
                "Traction",
                tuple(f"{q}: {n} customers" for q, _, n in c.quarters[-3:]),
                notes=f"Revenue last quarter was ${c.quarters[-1][1]:,.0f}.",
            ),
            Slide("Team", _people(c, 3)),
            Slide("The Ask", ("Seed funding to grow sales", f"Open an office in {c.city}")),
        )
        name = f"{_slug(c.name)}-pitch.odp"
    elif kind == "update":
        project = r.choice(_PROJECTS)
        slides = (
            Slide(f"Project {project}", ("Status update", c.name), layout="title"),
            Slide("Milestones", ("Design signed off", "Pilot site chosen", "Vendor selected")),
            Slide("Risks", tuple(r.sample(_RISKS, 3)), notes="Ask for help on the first risk."),
            Slide(
                "Budget", (f"Spent: ${r.randint(20, 60)},000", f"Left: ${r.randint(30, 90)},000")
            ),
            Slide("Owners", _people(c, 3)),
            Slide("Next Steps", ("Start the pilot", "Review results in four weeks")),
        )
        name = f"project-{project.lower()}-update.odp"
    else:
        topic = r.choice(_TOPICS)
        slides = (
            Slide(f"{topic} training", (c.name, "For new staff"), layout="title"),
            Slide("Agenda", ("Why it matters", "Before you start", "Step by step", "Questions")),
            Slide("Before You Start", ("Read the checklist", "Find your team lead")),
            Slide(
                "Step by Step",
                ("Log in at the terminal", "Scan the item", "Confirm on screen"),
                notes="Demonstrate each step live.",
            ),
            Slide("Who To Ask", _people(c, 3)),
            Slide("Questions", ("Ask now or email the trainer",)),
        )
        name = f"{_slug(topic)}-training.odp"
    return name, Deck(slides=slides, title=slides[0].title)


def _slug(text: str) -> str:
    return "-".join("".join(ch for ch in w if ch.isalnum()) for w in text.lower().split())[:40]


def company(seed: int) -> data.Company:
    return data.company(seed)


# ----- checks on the saved deck (kinds of palaestra.verifiers.office) -------------------------
def presentation(
    path: str, *expect: dict[str, Any], formats: tuple[str, ...] = ("odp", "pptx")
) -> dict[str, Any]:
    """A ``presentation`` check of the deck at ``path`` (absolute, in the home); the deck
    saved as PowerPoint under the same name passes too (a correct answer in the other format)."""
    return {"kind": "presentation", "path": path, "formats": list(formats), "expect": list(expect)}


def titles(deck_: Deck) -> dict[str, Any]:
    """Every slide's title, in order: the deck's shape is what the task left it."""
    return {"titles": [s.title for s in deck_.slides]}


def slide(n: int, **what: Any) -> dict[str, Any]:
    """An assertion on slide ``n`` (1-based here, as the instructions count; the check kind
    counts from 0): title, subtitle, body, notes, images, table, hidden, bold..."""
    return {"slide": n - 1, **what}


# ----- keystrokes in Impress ----------------------------------------------------------------
def keys(*combos: str) -> list[str]:
    return [f"key({c!r})" for c in combos]


def typed(text: str) -> list[str]:
    return [f"type_text({text!r})"]


def goto(n: int) -> list[str]:
    """Slide ``n`` in the edit view with nothing selected (Home, then Page Down)."""
    return ["wait(1.5)", *keys("Escape", "Escape", "Home"), *keys(*["Next"] * (n - 1)), "wait(1)"]


def focus() -> list[str]:
    """A click on the empty canvas above the slide: the edit view has the keyboard, nothing
    selected. Under load Impress can show the deck with the keyboard elsewhere (the slide
    pane), where Tab does not select the slide's objects and the typing is lost."""
    return ["click(400, 140)", "wait(0.8)"]


def edit_object(tabs: int) -> list[str]:
    """Edit the ``tabs``-th object of the current slide (1 = title, 2 = body)."""
    return [*keys(*["Tab"] * tabs), "wait(0.8)", *keys("Return"), "wait(0.8)"]


def leave() -> list[str]:
    """Out of text editing and the selection (after the typing has landed)."""
    return ["wait(0.8)", *keys("Escape", "Escape"), "wait(0.8)"]


def menu(alt: str, *then: str) -> list[str]:
    """A menu by its Alt mnemonic, then keys inside it (mnemonics or arrows)."""
    return [f"key('alt+{alt}')", "wait(0.8)", *keys(*then), "wait(1)"]


def save() -> list[str]:
    """Ctrl+S keeping the format (:func:`.keys.save`; an ODF deck is asked nothing)."""
    return ["wait(0.3)", *office_keys.save("odp")]


# ----- Python in the sandbox (odfpy, Debian's python3-odf) ----------------------------------
_PRELUDE = """
from odf import draw, presentation, text
from odf.namespaces import PRESENTATIONNS
from odf.opendocument import load

PATH = {path!r}
doc = load(PATH)
pages = doc.presentation.getElementsByType(draw.Page)


def frame(page, cls):
    for f in page.childNodes:
        if f.qname[1] == "frame" and f.attributes.get((PRESENTATIONNS, "class")) == cls:
            return f


def box(f):
    return f.getElementsByType(draw.TextBox)[0]


def set_lines(f, lines):
    tb = box(f)
    for ch in list(tb.childNodes):
        tb.removeChild(ch)
    for line in lines:
        tb.addElement(text.P(text=line))


def bullets(page):
    return box(frame(page, "outline")).getElementsByType(text.List)[0]


def notes_frame(page):
    notes = page.getElementsByType(presentation.Notes)[0]
    for f in notes.childNodes:
        if f.qname[1] == "frame" and f.attributes.get((PRESENTATIONNS, "class")) == "notes":
            return f

"""


def python(path: str, body: str) -> list[str]:
    """A code oracle: odfpy loads the deck, ``body`` edits it, the deck is saved in place."""
    code = _PRELUDE.format(path=path) + body.strip() + "\ndoc.save(PATH)\nprint('saved')\n"
    return [f"run_python({code!r})"]
