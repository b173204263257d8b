"""LibreOffice Impress task templates: slide decks generated from the company records of
:mod:`.data`, edited the way people edit decks (titles, bullets, notes, new, deleted, moved and
duplicated slides, pictures, text boxes, bold, tables, hidden slides, a copy for PowerPoint).

Each template is a function of the seed that builds the deck before and the deck the user wants
after (the same :class:`~.impress_odp.Deck` model, so the checks are read off the model, never
written twice), and declares three ways to get there: the checks on the saved file, a GUI-only
oracle (Impress's keyboard, :mod:`.impress_decks`' recipes) and a code oracle (odfpy in the
sandbox). Every check spec also pins every slide's title in order, so a task done on the wrong
slide, or done with collateral damage to the deck's order, fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office import keys as office_keys
from palaestra.envs.computer.office.impress_decks import (
    HOME,
    company,
    deck,
    edit_object,
    focus,
    goto,
    keys,
    leave,
    menu,
    presentation,
    python,
    save,
    slide,
    titles,
    typed,
)
from palaestra.envs.computer.office.impress_odp import Deck, Picture, Slide, odp, png
from palaestra.envs.computer.office.template import ArtifactError, Case, Template

#: the other title a person would give each generated slide
RETITLE = {
    "The Problem": "What Is Broken Today",
    "Our Products": "What We Sell",
    "Traction": "Growth So Far",
    "Team": "Leadership",
    "The Ask": "What We Need",
    "Milestones": "Progress So Far",
    "Risks": "Open Risks",
    "Budget": "Spending",
    "Owners": "Who Owns What",
    "Next Steps": "Coming Up",
    "Agenda": "Plan for Today",
    "Before You Start": "Preparation",
    "Step by Step": "How It Works",
    "Who To Ask": "Contacts",
    "Questions": "Any Questions?",
}


@dataclasses.dataclass(frozen=True)
class Draft:
    """What a template decides for one seed; :func:`_case` turns it into a Case."""

    before: Deck
    after: Deck
    params: dict[str, Any]
    gui: list[str]
    code: str  # the odfpy edit (body of :func:`.impress_decks.python`)
    expect: tuple[dict[str, Any], ...] = ()
    extra: dict[str, bytes] = dataclasses.field(default_factory=dict)
    out: str = ""  # the file the checks read when it is not the deck itself
    formats: tuple[str, ...] = ("odp", "pptx")
    shell: str = ""  # a code oracle that is a shell command instead of an odfpy edit


def _case(name: str, seed: int, build: Callable[[int, str, Deck], Draft]) -> Case:
    try:
        file, before = deck(seed)
        d = build(seed, file, before)
    except Exception as exc:  # a generator bug names the template and the seed
        raise ArtifactError(name, seed, f"{type(exc).__name__}: {exc}") from exc
    path = f"{HOME}/{file}"
    out = d.out or path
    spec = presentation(out, titles(d.after), *d.expect, formats=d.formats)
    return Case(
        params={"file": file, **d.params},
        files={file: odp(d.before), **d.extra},
        open=file,
        verifier=spec,
        gui=d.gui,
        code=[f"run_shell({d.shell!r}, 120)"] if d.shell else python(path, d.code),
    )


def _content(before: Deck) -> list[int]:
    """1-based numbers of the content slides (every slide but the title slide)."""
    return [i + 1 for i, s in enumerate(before.slides) if s.layout == "content"]


def _pick(seed: int, what: str, options: list[Any]) -> Any:
    return data.rng(seed, f"impress-{what}").choice(options)


def _swap(before: Deck, n: int, new: Slide) -> Deck:
    slides = list(before.slides)
    slides[n - 1] = new
    return before.with_slides(slides)


# ----- the templates ----------------------------------------------------------------------
def _retitle(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "retitle", _content(before))
    old = before.slides[n - 1]
    new = RETITLE[old.title]
    return Draft(
        before,
        _swap(before, n, dataclasses.replace(old, title=new)),
        {"n": n, "old": old.title, "new": new},
        [*goto(n), *focus(), *edit_object(1), *keys("ctrl+a"), *typed(new), *leave(), *save()],
        f"set_lines(frame(pages[{n - 1}], 'title'), [{new!r}])",
        (slide(n, title=new, body=list(old.body)),),
    )


def _people_slide(before: Deck) -> int:
    return next(i + 1 for i, s in enumerate(before.slides) if "," in "".join(s.body))


def _add_bullet(seed: int, file: str, before: Deck) -> Draft:
    n = _people_slide(before)
    old = before.slides[n - 1]
    p = company(seed).staff[len(old.body)]
    line = f"{p.name}, {p.role}"
    body = (*old.body, line)
    return Draft(
        before,
        _swap(before, n, dataclasses.replace(old, body=body)),
        {"n": n, "title": old.title, "person": p.name, "role": p.role, "line": line},
        [
            *goto(n),
            *focus(),
            *edit_object(2),
            *keys("ctrl+End", "Return"),
            *typed(line),
            *leave(),
            *save(),
        ],
        f"bullets(pages[{n - 1}]).addElement(text.ListItem())\n"
        f"bullets(pages[{n - 1}]).childNodes[-1].addElement(text.P(text={line!r}))",
        (slide(n, title=old.title, body=list(body)),),
    )


def _remove_bullet(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(
        seed, "unbullet", [i for i in _content(before) if len(before.slides[i - 1].body) >= 3]
    )
    old = before.slides[n - 1]
    j = _pick(seed, "unbullet-j", [1, 2])  # never the last bullet: Home, Shift+Down selects it
    body = tuple(b for i, b in enumerate(old.body) if i != j - 1)
    return Draft(
        before,
        _swap(before, n, dataclasses.replace(old, body=body)),
        {"n": n, "title": old.title, "bullet": old.body[j - 1]},
        [
            *goto(n),
            *focus(),
            *edit_object(2),
            *keys("ctrl+Home", *["Down"] * (j - 1), "Home", "shift+Down", "Delete"),
            *leave(),
            *save(),
        ],
        f"items = bullets(pages[{n - 1}])\nitems.removeChild(items.childNodes[{j - 1}])",
        (slide(n, title=old.title, body=list(body)),),
    )


_NOTES = (
    "Pause here and take questions.",
    "Spend two minutes on this slide.",
    "Hand over to {person} for this part.",
    "Mention the handout at the end.",
)


def _notes(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "notes", [i for i in _content(before) if not before.slides[i - 1].notes])
    old = before.slides[n - 1]
    note = _pick(seed, "notes-text", list(_NOTES)).format(person=company(seed).staff[1].name)
    return Draft(
        before,
        _swap(before, n, dataclasses.replace(old, notes=note)),
        {"n": n, "title": old.title, "note": note},
        [
            *goto(n),
            *focus(),
            *menu("v", "e"),  # View > Notes
            "wait(0.5)",
            *edit_object(2),  # the slide's picture, then the notes
            *typed(note),
            *leave(),
            *menu("v", "n"),  # View > Normal
            *save(),
        ],
        f"set_lines(notes_frame(pages[{n - 1}]), [{note!r}])",
        (slide(n, title=old.title, notes=note),),
    )


_NEW_SLIDE = '''
def new_page(after, title, lines):
    """A title-and-content page after page ``after`` (0-based), like Ctrl+M in Impress."""
    model = pages[1]
    page = draw.Page(masterpagename="Default", presentationpagelayoutname=
                     model.attributes[(PRESENTATIONNS, "presentation-page-layout-name")])
    for cls, lines_ in (("title", [title]), ("outline", None)):
        old = frame(model, cls)
        f = draw.Frame(**{"class": cls, "width": old.getAttribute("width"),
                          "height": old.getAttribute("height"), "x": old.getAttribute("x"),
                          "y": old.getAttribute("y")})
        tb = draw.TextBox()
        f.addElement(tb)
        if lines_:
            tb.addElement(text.P(text=lines_[0]))
        else:
            lst = text.List()
            tb.addElement(lst)
            for line in lines:
                item = text.ListItem()
                item.addElement(text.P(text=line))
                lst.addElement(item)
        page.addElement(f)
    nxt = pages[after + 1] if after + 1 < len(pages) else None
    if nxt is None:
        doc.presentation.addElement(page)
    else:
        doc.presentation.insertBefore(page, nxt)
'''


def _contact(seed: int) -> tuple[str, tuple[str, ...]]:
    p = company(seed).staff[0]
    return "Contact", (p.name, p.email)


def _new_slide_end(seed: int, file: str, before: Deck) -> Draft:
    title, lines = _contact(seed)
    n = len(before.slides) + 1
    after = before.with_slides([*before.slides, Slide(title, lines)])
    return Draft(
        before,
        after,
        {"title": title, "name": lines[0], "email": lines[1], "lines": "\n".join(lines)},
        [
            *goto(n - 1),
            *focus(),
            *keys("ctrl+m"),
            "wait(1.2)",
            *edit_object(1),
            *typed(title),
            *keys("Escape"),
            *edit_object(1),  # Tab from the title is the body
            *typed("\n".join(lines)),
            *leave(),
            *save(),
        ],
        _NEW_SLIDE + f"new_page({n - 2}, {title!r}, {list(lines)!r})",
        # Impress's autocorrect capitalizes a line's first letter: an address's case is free
        (slide(n, title=title, body=list(lines), ignore_case=True),),
    )


_AGENDA_AFTER = ("Summary", ("Three points to remember", "Slides shared after the session"))


def _new_slide_after(seed: int, file: str, before: Deck) -> Draft:
    k = _pick(seed, "insert-after", _content(before)[:-1])
    title, lines = _AGENDA_AFTER
    slides = list(before.slides)
    slides.insert(k, Slide(title, lines))
    return Draft(
        before,
        before.with_slides(slides),
        {
            "k": k,
            "k_next": k + 1,
            "previous": before.slides[k - 1].title,
            "title": title,
            "lines": lines,
        },
        [
            *goto(k),
            *focus(),
            *keys("ctrl+m"),
            "wait(1.2)",
            *edit_object(1),
            *typed(title),
            *keys("Escape"),
            *edit_object(1),
            *typed("\n".join(lines)),
            *leave(),
            *save(),
        ],
        _NEW_SLIDE + f"new_page({k - 1}, {title!r}, {list(lines)!r})",
        (slide(k + 1, title=title, body=list(lines)),),
    )


def _delete(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "delete", _content(before))
    slides = [s for i, s in enumerate(before.slides) if i != n - 1]
    return Draft(
        before,
        before.with_slides(slides),
        {"n": n, "title": before.slides[n - 1].title},
        [*goto(n), *menu("l", "d"), *save()],  # Slide > Delete Slide
        f"doc.presentation.removeChild(pages[{n - 1}])",
    )


def _move_last(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "move-last", _content(before)[:-1])
    slides = [s for i, s in enumerate(before.slides) if i != n - 1] + [before.slides[n - 1]]
    return Draft(
        before,
        before.with_slides(slides),
        {"n": n, "title": before.slides[n - 1].title},
        [*goto(n), *keys("shift+alt+End"), "wait(0.5)", *save()],  # Slide > Move > Slide to End
        f"page = pages[{n - 1}]\ndoc.presentation.removeChild(page)\n"
        "doc.presentation.addElement(page)",
    )


def _move_up(seed: int, file: str, before: Deck) -> Draft:
    content = _content(before)
    n = _pick(seed, "move-up", content[2:])
    to = _pick(seed, "move-up-to", content[: content.index(n) - 1])
    slides = list(before.slides)
    moved = slides.pop(n - 1)
    slides.insert(to - 1, moved)
    return Draft(
        before,
        before.with_slides(slides),
        {"title": moved.title, "other": before.slides[to - 1].title, "to": to},
        [*goto(n), *keys(*["shift+alt+Prior"] * (n - to)), "wait(0.5)", *save()],
        f"page = pages[{n - 1}]\ndoc.presentation.removeChild(page)\n"
        f"doc.presentation.insertBefore(page, pages[{to - 1}])",
    )


def _duplicate(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "duplicate", _content(before))
    old = before.slides[n - 1]
    slides = list(before.slides)
    slides.insert(n, old)
    return Draft(
        before,
        before.with_slides(slides),
        {"n": n, "title": old.title},
        [*goto(n), *menu("l", "s"), *save()],  # Slide > Duplicate Slide
        "from odf.element import Element, Text\n"
        "from odf.namespaces import DRAWNS\n"
        "def clone(e):\n"
        "    if e.nodeType == e.TEXT_NODE:\n"
        "        return Text(e.data)\n"
        "    c = Element(qname=e.qname, qattributes=dict(e.attributes), check_grammar=False)\n"
        "    for ch in e.childNodes:\n"
        "        c.appendChild(clone(ch))\n"
        "    return c\n"
        f"twin = clone(pages[{n - 1}])\n"
        "twin.attributes[(DRAWNS, 'name')] = 'copy'\n"
        f"nxt = pages[{n}] if {n} < len(pages) else None\n"
        "doc.presentation.insertBefore(twin, nxt) if nxt is not None else "
        "doc.presentation.addElement(twin)",
        (
            slide(n, title=old.title, body=list(old.body)),
            slide(n + 1, title=old.title, body=list(old.body)),
        ),
    )


def _logo(seed: int) -> bytes:
    r = data.rng(seed, "impress-logo")
    colors = tuple(
        (r.randrange(30, 230), r.randrange(30, 230), r.randrange(30, 230)) for _ in range(3)
    )
    return png(160, 100, colors)


def _image(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "image", _content(before))
    old = before.slides[n - 1]
    stem = _pick(seed, "image-name", ["logo", "product-photo", "team-photo", "chart"])
    picture = f"Pictures/{stem}.png"
    blob = _logo(seed)
    after = _swap(before, n, dataclasses.replace(old, pictures=(Picture(picture, blob),)))
    return Draft(
        before,
        after,
        {"n": n, "title": old.title, "picture": f"~/{picture}", "path": f"{HOME}/{picture}"},
        [
            *goto(n),
            *menu("i", "Return"),  # Insert > Image...
            "wait(2.5)",
            # the file dialog may open on an empty "Recent" list, where a typed path is not
            # taken (Open stays disabled): its Home folder first, then the location field
            *keys("alt+Home"),
            "wait(1)",
            *keys("ctrl+l"),
            "wait(0.5)",
            *typed(f"{HOME}/{picture}"),
            "wait(0.8)",
            *keys("Return"),
            "wait(2)",
            *leave(),
            *save(),
        ],
        f"href = doc.addPicture({HOME + '/' + picture!r})\n"
        "f = draw.Frame(width='6cm', height='4cm', x='20cm', y='10cm')\n"
        "f.addElement(draw.Image(href=href))\n"
        f"pages[{n - 1}].addElement(f)",
        (slide(n, title=old.title, images=1),),
        extra={picture: blob},
    )


def _bold_title(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "bold", _content(before))
    old = before.slides[n - 1]
    return Draft(
        before,
        before,
        {"n": n, "title": old.title},
        [*goto(n), *focus(), *edit_object(1), *keys("ctrl+a", "ctrl+b"), *leave(), *save()],
        "from odf import style\n"
        "bold = style.Style(name='Tbold', family='text')\n"
        "bold.addElement(style.TextProperties(fontweight='bold'))\n"
        "doc.automaticstyles.addElement(bold)\n"
        f"tb = box(frame(pages[{n - 1}], 'title'))\n"
        "old = tb.getElementsByType(text.P)[0]\n"
        "new = text.P()\n"
        "new.addElement(text.Span(stylename=bold, text=str(old)))\n"
        "tb.insertBefore(new, old)\n"
        "tb.removeChild(old)",
        (slide(n, title=old.title, bold_text=old.title),),
    )


def _table_rows(seed: int) -> tuple[tuple[str, ...], ...]:
    c = company(seed)
    return (("Quarter", "Customers"), *((q, str(n)) for q, _, n in c.quarters[-3:]))


def _table(seed: int, file: str, before: Deck) -> Draft:
    rows = _table_rows(seed)
    before = before.with_slides([*before.slides, Slide("In Numbers", layout="title_only")])
    n = len(before.slides)
    after = _swap(before, n, dataclasses.replace(before.slides[-1], table=rows))
    cells = "\t".join(c for r in rows for c in r)
    gui = [
        *goto(n),
        *menu("i", "Down", "Down", "Down", "Return"),  # Insert > Table...
        "wait(1.5)",
        *typed(str(len(rows[0]))),
        *keys("Tab", "ctrl+a"),
        *typed(str(len(rows))),
        *keys("Return"),
        "wait(1.5)",
        *keys("Return"),  # into the first cell
    ]
    for i, cell in enumerate(c for r in rows for c in r):
        gui += ([] if i == 0 else keys("Tab")) + typed(cell)
    rows_code = repr([list(r) for r in rows])
    return Draft(
        before,
        after,
        {"n": n, "rows": rows, "cells": cells, "table": _md(rows), "cols": len(rows[0])},
        [*gui, *leave(), *save()],
        "from odf import table\n"
        f"rows = {rows_code}\n"
        "t = table.Table()\n"
        "t.addElement(table.TableColumn(numbercolumnsrepeated=len(rows[0])))\n"
        "for r in rows:\n"
        "    tr = table.TableRow()\n"
        "    for c in r:\n"
        "        tc = table.TableCell()\n"
        "        tc.addElement(text.P(text=c))\n"
        "        tr.addElement(tc)\n"
        "    t.addElement(tr)\n"
        "f = draw.Frame(width='14cm', height='5cm', x='4cm', y='4cm')\n"
        "f.addElement(t)\n"
        f"pages[{n - 1}].addElement(f)",
        (slide(n, title="In Numbers", table=[list(r) for r in rows]),),
    )


def _md(rows: tuple[tuple[str, ...], ...]) -> str:
    return "\n".join(" | ".join(r) for r in rows)


def _hide(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "hide", _content(before))
    return Draft(
        before,
        before,
        {"n": n, "title": before.slides[n - 1].title},
        [*goto(n), *menu("l", "h"), *save()],  # Slide > Hide Slide
        "from odf import style\n"
        "hidden = style.Style(name='dphidden', family='drawing-page')\n"
        "hidden.addElement(style.DrawingPageProperties(visibility='hidden'))\n"
        "doc.automaticstyles.addElement(hidden)\n"
        f"pages[{n - 1}].setAttribute('stylename', hidden)",
        (slide(n, hidden=True), *(slide(i, hidden=False) for i in _content(before) if i != n)),
    )


def _subtitle(seed: int, file: str, before: Deck) -> Draft:
    c = company(seed)
    lines = (f"Presented by {c.staff[0].name}", c.quarters[-1][0])
    first = before.slides[0]
    return Draft(
        before,
        _swap(before, 1, dataclasses.replace(first, body=lines)),
        {
            "title": first.title,
            "name": c.staff[0].name,
            "when": lines[1],
            "old": "\n".join(first.body),
        },
        [
            *goto(1),
            *focus(),
            *edit_object(2),
            *keys("ctrl+a"),
            *typed("\n".join(lines)),
            *leave(),
            *save(),
        ],
        f"set_lines(frame(pages[0], 'subtitle'), {list(lines)!r})",
        (slide(1, title=first.title, subtitle="\n".join(lines)),),
    )


_STAMPS = (
    "Confidential: internal use only",
    "Draft for review",
    "Figures are unaudited",
    "Prepared by {person}",
)
#: the empty band under a content slide's body on the maximized 1024x768 Impress window
_BAND = (240, 497, 570, 527)


def _text_box(seed: int, file: str, before: Deck) -> Draft:
    n = _pick(seed, "stamp", _content(before))
    old = before.slides[n - 1]
    stamp = _pick(seed, "stamp-text", list(_STAMPS)).format(person=company(seed).staff[0].name)
    return Draft(
        before,
        _swap(before, n, dataclasses.replace(old, boxes=(stamp,))),
        {"n": n, "title": old.title, "text": stamp},
        [
            *goto(n),
            *keys("F2"),  # Insert > Text Box: the next drag draws it
            "wait(0.5)",
            f"drag{_BAND}",
            "wait(0.8)",
            *typed(stamp),
            *leave(),
            *save(),
        ],
        "f = draw.Frame(width='12cm', height='1.2cm', x='2cm', y='13.6cm')\n"
        "tb = draw.TextBox()\n"
        f"tb.addElement(text.P(text={stamp!r}))\n"
        "f.addElement(tb)\n"
        f"pages[{n - 1}].addElement(f)",
        # the title and the bullets as they were: the words are a box of their own
        (slide(n, title=old.title, body=list(old.body), contains=stamp),),
    )


def _export(seed: int, file: str, before: Deck) -> Draft:
    stem = file.rsplit(".", 1)[0]
    out = f"{HOME}/{stem}.pptx"
    people = _people_slide(before)
    return Draft(
        before,
        before,
        {"pptx": f"{stem}.pptx", "stem": stem},
        ["wait(1)", *office_keys.save_as(out)],
        "",
        (slide(people, body=list(before.slides[people - 1].body)),),
        out=out,
        formats=("pptx",),
        # LibreOffice's own converter, headless, on a profile of its own (the session's
        # Impress holds the default one)
        shell=(
            "soffice -env:UserInstallation=file:///tmp/convert-profile --headless "
            f"--convert-to pptx --outdir {HOME} {HOME}/{file}"
        ),
    )


def _template(
    name: str,
    skills: tuple[str, ...],
    build: Callable[[int, str, Deck], Draft],
    *phrasings: str,
) -> Template:
    return Template(
        name=name,
        app="impress",
        skills=skills,
        phrasings=phrasings,
        make=lambda seed: _case(name, seed, build),
    )


TEMPLATES: list[Template] = [
    _template(
        "impress-retitle-slide",
        ("titles",),
        _retitle,
        'In the presentation {file}, the slide titled "{old}" should be titled "{new}" '
        "instead. Save the file.",
        'Slide {n} of {file} is headed "{old}". Rename that heading to "{new}" and keep the '
        "file in its current format.",
        'I want "{new}" as the heading where "{old}" is now in {file}; please save it when done.',
    ),
    _template(
        "impress-add-bullet",
        ("bullets",),
        _add_bullet,
        'Add "{line}" as a new last point on the "{title}" slide of {file}, then save.',
        "{person} ({role}) is missing from the {title} slide in {file}. Add a bullet reading "
        '"{line}" under the existing ones and save the presentation.',
        'Please extend the list on slide {n} of {file} ("{title}") with one more entry, '
        '"{line}", and save.',
    ),
    _template(
        "impress-remove-bullet",
        ("bullets",),
        _remove_bullet,
        'Take the point "{bullet}" off the "{title}" slide in {file} and save the file.',
        'The bullet "{bullet}" on slide {n} of {file} is out of date. Delete it, keep the '
        "others, and save.",
        'In {file}, remove "{bullet}" from the list on the "{title}" slide, then save.',
    ),
    _template(
        "impress-speaker-notes",
        ("notes",),
        _notes,
        'Give the "{title}" slide in {file} the speaker notes "{note}" and save.',
        'I need a reminder for myself when presenting slide {n} of {file}: put "{note}" in '
        "its notes (not on the slide itself), then save.",
        'Add presenter notes reading "{note}" to slide {n} ("{title}") of {file}; save it.',
    ),
    _template(
        "impress-new-slide-end",
        ("slides", "layouts"),
        _new_slide_end,
        'Finish {file} with one more slide titled "{title}" whose bullet points are '
        '"{name}" and "{email}". Save the presentation.',
        'Add a closing slide to {file}: heading "{title}", and two points below it, first '
        '"{name}", then "{email}". Save when done.',
        'Append a "{title}" slide after the last slide of {file}, listing "{name}" and '
        '"{email}" as its two bullets, and save.',
    ),
    _template(
        "impress-insert-slide",
        ("slides", "layouts"),
        _new_slide_after,
        'Insert a new slide right after "{previous}" in {file}, titled "{title}", with the '
        'points "{lines[0]}" and "{lines[1]}". Save.',
        'Between slide {k} ("{previous}") and the slide after it in {file}, add a slide '
        'headed "{title}" listing "{lines[0]}" and "{lines[1]}"; save the file.',
        'I need a "{title}" slide as slide {k_next} of {file}, with two bullets: "{lines[0]}" '
        'and "{lines[1]}". Please save it too.',
    ),
    _template(
        "impress-delete-slide",
        ("slides",),
        _delete,
        'Remove the "{title}" slide from {file} and save.',
        "Slide {n} of {file} ({title}) is not needed any more. Delete it and save the file.",
        'Get rid of the slide headed "{title}" in {file}, keeping everything else, then save.',
    ),
    _template(
        "impress-move-slide-last",
        ("order",),
        _move_last,
        'Move the "{title}" slide of {file} to the very end of the presentation and save.',
        'In {file}, the "{title}" slide should be the last one. Reorder it and save.',
        "Put slide {n} of {file} ({title}) after all the others, then save the file.",
    ),
    _template(
        "impress-move-slide-up",
        ("order",),
        _move_up,
        'In {file}, move the "{title}" slide so it comes right before "{other}". Save.',
        'The "{title}" slide in {file} belongs in front of the "{other}" slide. Reorder the '
        "deck and save it.",
        'Reorder {file} so that "{title}" becomes slide {to}, directly ahead of "{other}", and '
        "save.",
    ),
    _template(
        "impress-duplicate-slide",
        ("slides",),
        _duplicate,
        'Make a copy of the "{title}" slide in {file}, placed right after the original, and save.',
        "Duplicate slide {n} of {file} ({title}) so the copy follows it directly; save the file.",
        'I want the "{title}" slide of {file} twice in a row. Please duplicate it and save.',
    ),
    _template(
        "impress-insert-image",
        ("images",),
        _image,
        'Put the picture {picture} on the "{title}" slide of {file} and save.',
        "Insert the image file {path} into slide {n} of {file} ({title}); then save the "
        "presentation.",
        'The "{title}" slide in {file} needs the graphic saved at {picture}. Add it there and '
        "save.",
    ),
    _template(
        "impress-bold-title",
        ("fonts",),
        _bold_title,
        'Make the heading "{title}" on slide {n} of {file} bold, and save.',
        'In {file}, set the title of the "{title}" slide in bold type. Save the file.',
        'The "{title}" heading in {file} should stand out: bold it and save.',
    ),
    _template(
        "impress-table",
        ("tables",),
        _table,
        'On the last slide of {file} ("In Numbers") add a table with these rows, the first '
        "being the header:\n{table}\nThen save.",
        "Slide {n} of {file} is empty under its title. Fill it with a {cols}-column table:\n"
        "{table}\nand save the file.",
        'Add this table to the "In Numbers" slide in {file} (one line per row, cells '
        "separated by |):\n{table}\nSave when done.",
    ),
    _template(
        "impress-hide-slide",
        ("slide show",),
        _hide,
        'Hide the "{title}" slide of {file} so it is skipped during the slide show, but keep '
        "it in the file. Save.",
        "Slide {n} ({title}) of {file} should not be shown when presenting, though it must "
        "stay in the deck. Make it so and save.",
        'When {file} is presented, "{title}" must be skipped. Mark that slide hidden and save.',
    ),
    _template(
        "impress-subtitle",
        ("titles",),
        _subtitle,
        'Replace the subtitle of the first slide of {file} with two lines: "Presented by '
        '{name}" and "{when}". Save.',
        'On the opening slide of {file} ("{title}"), the text under the title should read '
        '"Presented by {name}" on one line and "{when}" on the next. Save the file.',
        'Change the subtitle lines on slide 1 of {file} to "Presented by {name}" and '
        '"{when}", then save.',
    ),
    _template(
        "impress-text-box",
        ("text boxes",),
        _text_box,
        'Put a separate text box with the words "{text}" on the "{title}" slide of {file} '
        "(leave the title and the bullet list alone), then save.",
        'Slide {n} of {file} needs a small note in a text box of its own: "{text}". Add it '
        "below the existing content and save.",
        'Add the line "{text}" to the "{title}" slide in {file} as a free-standing text box, '
        "not as a bullet. Save the file.",
    ),
    _template(
        "impress-export-pptx",
        ("formats",),
        _export,
        "A colleague uses PowerPoint. Save a copy of {file} in PowerPoint format as {pptx} "
        "in the same folder.",
        "Export {file} to a .pptx file named {pptx} next to it, so it opens in Microsoft "
        "PowerPoint.",
        "I need {file} as a PowerPoint presentation too: save it as {pptx} in the home folder.",
    ),
]
