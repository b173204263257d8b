"""Writer templates on text: styles and headings, a title, find and replace, bold, italic,
alignment, a paragraph deleted or moved. The generators come first; ``TEMPLATES`` at the end
declares them in one table (name, skills, document, generator, phrasings), as :mod:`.calc` and
:mod:`.impress` declare theirs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office import writer_gui as g
from palaestra.envs.computer.office.template import Case, Template
from palaestra.envs.computer.office.writer_base import (
    ensure_searchable,
    make_case,
    pick,
    searchable,
    template,
)
from palaestra.envs.computer.office.writer_docs import (
    LETTER,
    MINUTES,
    REPORT,
    Blocks,
    find,
    para_at,
    section,
)
from palaestra.envs.computer.office.writer_docx import Para, Table


# ----- styles and headings ------------------------------------------------------------------
def _heading_restore(seed: int, blocks: Blocks, path: str) -> Case:
    options = [
        i
        for i, b in enumerate(blocks)
        if isinstance(b, Para) and b.style.startswith("Heading") and searchable(blocks, i, b.plain)
    ]
    i = pick(seed, "heading", options)
    target = para_at(blocks, i)
    level = int(target.style[-1])
    before = [*blocks[:i], replace(target, style="Normal"), *blocks[i + 1 :]]
    params = {
        "text": target.plain,
        "level": level,
        "kind": "section titles" if level == 1 else "product headings",
    }
    return make_case(
        path,
        before,
        params,
        [g.para(target.plain, heading=level, style=f"Heading {level}")],
        [*g.find(target.plain), *g.style(f"Heading {level}")],
        f"para({target.plain!r}).style = d.styles['Heading {level}']",
        after=blocks,
    )


def _quote_style(seed: int, blocks: Blocks, path: str) -> Case:
    firm = data.company(seed)
    who = firm.staff[-1]
    quote = Para(
        f"Our orders arrive on time and the support team answers within a day. We will "
        f"recommend {firm.name} to our partners. ({who.name}, customer since {2018 + seed})"
    )
    i = find(blocks, "We served") + 1
    before = [*blocks[:i], quote, *blocks[i:]]
    after = [*blocks[:i], replace(quote, style="Quotations"), *blocks[i:]]
    start = quote.plain[:40]
    return make_case(
        path,
        before,
        {"start": start},
        [g.para(quote.plain, style="Quotations")],
        [*g.find(start), *g.style("Quotations")],
        f"para({quote.plain!r}).style = d.styles['Quotations']",
        after=after,
    )


def _title_insert(seed: int, blocks: Blocks, path: str) -> Case:
    title = para_at(blocks, 0)
    before = blocks[1:]
    return make_case(
        path,
        before,
        {"title": title.plain},
        [g.first(title.plain, style="Title")],
        [
            g.key("ctrl+Home"),
            g.key("Return"),
            g.key("Up"),
            g.wait(0.3),
            g.type_text(title.plain),
            *g.style("Title"),
        ],
        f"d.paragraphs[0].insert_paragraph_before({title.plain!r}, style='Title')",
        after=blocks,
    )


# ----- find and replace ---------------------------------------------------------------------
def renamed(blocks: Blocks, old: str, new: str) -> Blocks:
    """``blocks`` with every ``old`` written ``new`` (in paragraphs, runs and table cells)."""
    out: Blocks = []
    for b in blocks:
        if isinstance(b, Table):
            out.append(Table(tuple(tuple(c.replace(old, new) for c in r) for r in b.rows)))
        elif isinstance(b.text, str):
            out.append(replace(b, text=b.text.replace(old, new)))
        else:
            out.append(
                replace(b, text=tuple(replace(r, text=r.text.replace(old, new)) for r in b.text))
            )
    return out


def mentions(blocks: Blocks, text: str) -> int:
    return sum((b.plain if isinstance(b, Para) else str(b.rows)).count(text) for b in blocks)


_REPLACE_CODE = """for p in [*d.paragraphs, *(p for t in d.tables for r in t.rows for c in r.cells
                          for p in c.paragraphs)]:
    for r in p.runs:
        r.text = r.text.replace({old!r}, {new!r})"""


def _replace_case(path: str, blocks: Blocks, old: str, new: str, after: Blocks) -> Case:
    """Every ``old`` in ``blocks`` to be written ``new`` (``after`` is the result): no ``old``
    left and as many ``new`` as there were ``old``, by Replace All or run by run in code. The
    company and attendee templates differ only in the names and the document."""
    return make_case(
        path,
        blocks,
        {"old": old, "new": new},
        [g.absent(old), g.count(new, mentions(blocks, old))],
        g.replace_all(old, new),
        _REPLACE_CODE.format(old=old, new=new),
        after=after,
    )


def _replace_company(seed: int, blocks: Blocks, path: str) -> Case:
    old = data.company(seed).name
    names = [c for c in data.records(seed).companies if old not in c and c not in old]
    new = pick(seed, "rename", names)
    if mentions(blocks, new):
        raise ValueError(f"{new!r} is already in the letter")
    return _replace_case(path, blocks, old, new, renamed(blocks, old, new))


def misspelt(name: str) -> str:
    """The name with two different letters of its last word swapped (``King`` -> ``Kign``)."""
    first, last = name.rsplit(" ", 1)
    i = next((j for j in range(len(last) // 2, len(last)) if last[j] != last[j - 1]), 1)
    return f"{first} {last[: i - 1]}{last[i]}{last[i - 1]}{last[i + 1 :]}"


def _replace_attendee(seed: int, right: Blocks, path: str) -> Case:
    m = data.meeting(seed)
    owners = [w for _, w, _ in m.actions]
    new = pick(seed, "attendee", [a for a in m.attendees if a in owners and len(a.split()[-1]) > 3])
    old = misspelt(new)
    if old == new or mentions(right, old):
        raise ValueError(f"no misspelling of {new!r}")
    return _replace_case(path, renamed(right, new, old), old, new, right)


# ----- character and paragraph formatting ---------------------------------------------------
def _emphasis(
    path: str,
    blocks: Blocks,
    index: int,
    neighbour: int,
    prop: str,
    params: dict[str, Any],
    select: list[g.Action],
    combo: str,
) -> Case:
    """Paragraph ``index`` made bold or italic (``prop``) by ``select`` then ``combo``; its
    ``neighbour`` must stay as it was."""
    text = para_at(blocks, index).plain
    return make_case(
        path,
        blocks,
        params,
        [g.para(text, **{prop: True}), g.para(para_at(blocks, neighbour).plain, **{prop: False})],
        [*select, g.key(combo), g.wait(0.3)],
        f"for r in para({text!r}).runs:\n    r.{prop} = True",
    )


def _bold_line(seed: int, blocks: Blocks, path: str) -> Case:
    i = find(blocks, "Subject:")
    text = para_at(blocks, i).plain
    params = {"text": text}
    return _emphasis(path, blocks, i, i + 1, "bold", params, g.find(text), "ctrl+b")


def _italic_paragraph(seed: int, blocks: Blocks, path: str) -> Case:
    i = find(blocks, "This report was prepared by")
    start = " ".join(para_at(blocks, i).plain.split()[:6])
    select = g.select_paragraphs(start, 1)
    return _emphasis(path, blocks, i, i - 1, "italic", {"start": start}, select, "ctrl+i")


_ALIGN = {
    "right": ("ctrl+r", "RIGHT"),
    "center": ("ctrl+e", "CENTER"),
    "justify": ("ctrl+j", "JUSTIFY"),
}
_ALIGN_WORDS = {"right": "right-aligned", "center": "centred", "justify": "justified"}


def _align_paragraph(seed: int, blocks: Blocks, path: str) -> Case:
    targets = [
        (para_at(blocks, 3).plain, "right"),  # the date
        (para_at(blocks, find(blocks, "Subject:")).plain, "center"),
        (para_at(blocks, find(blocks, "Payment is due")).plain, "justify"),
    ]
    text, how = targets[seed % 3]
    start = " ".join(text.split()[:5])
    combo, name = _ALIGN[how]
    return make_case(
        path,
        blocks,
        {"start": start, "how": _ALIGN_WORDS[how]},
        [g.para(text, align=how)],
        [*g.find(start), g.key(combo), g.wait(0.3)],
        f"para({text!r}).alignment = WD_ALIGN_PARAGRAPH.{name}",
    )


# ----- paragraphs deleted or moved ----------------------------------------------------------
def _delete_paragraph(seed: int) -> Case:
    doc, lead = (
        (LETTER, "We appreciate your business"),
        (REPORT, "Renew the logistics contract"),
        (MINUTES, "Discussion"),
    )[seed % 3]
    blocks, path = doc.build(seed), doc.path
    i = find(blocks, lead) + (2 if lead == "Discussion" else 0)  # minutes: its 2nd item
    text = para_at(blocks, i).plain
    start = " ".join(text.split()[:4])
    ensure_searchable(blocks, i, start)
    return make_case(
        path,
        blocks,
        {"start": start},
        [g.absent(text)],
        [*g.select_paragraphs(start, 1), g.key("shift+Right"), g.key("Delete"), g.wait(0.3)],
        f"p = para({text!r})._p\np.getparent().remove(p)",
        after=[*blocks[:i], *blocks[i + 1 :]],
    )


def _move_paragraph(seed: int, blocks: Blocks, path: str) -> Case:
    top = section(blocks, "Agenda", 4)[0]
    items = list(range(top, top + 4))
    src = items[1 + seed % 3]  # the 2nd, 3rd or 4th item moves to the top
    item = para_at(blocks, src).plain
    ensure_searchable(blocks, src, item)
    after = [
        *blocks[:top],
        blocks[src],
        *(blocks[j] for j in items if j != src),
        *blocks[top + 4 :],
    ]
    first = para_at(blocks, top).plain
    return make_case(
        path,
        blocks,
        {
            "item": item,
            "where": "first, before the others",
            "where_short": "first",
        },
        [g.order("Agenda", item)],
        [
            *g.select_paragraphs(item, 1),
            g.key("shift+Right"),
            g.key("ctrl+x"),
            g.wait(0.3),
            *g.find(first),
            g.key("Home"),
            g.key("ctrl+v"),
            g.wait(0.5),
        ],
        f"p = para({item!r})._p\npara('Agenda')._p.addnext(p)",
        after=after,
    )


TEMPLATES: list[Template] = [
    # ----- styles and headings
    template(
        "writer-heading-restore",
        ("paragraph styles", "outline"),
        REPORT,
        _heading_restore,
        'In the report, "{text}" is meant to be a level {level} heading like the other '
        "{kind} but it was typed as ordinary text. Fix that and save the file.",
        'Make the line "{text}" in {file} a Heading {level} and save the document.',
        'The outline of the open report is missing "{text}": give that line the Heading '
        "{level} paragraph style, then save.",
    ),
    template(
        "writer-quote-style",
        ("paragraph styles",),
        REPORT,
        _quote_style,
        "The customer's words in the Customers section of the report should stand out as a "
        "quotation: apply Writer's Quotations paragraph style to that paragraph and save.",
        'Format the paragraph that begins "{start}" with the Quotations style, then save {file}.',
        'Give the quoted customer feedback in the open document the "Quotations" paragraph '
        "style and save it.",
    ),
    template(
        "writer-title-insert",
        ("paragraph styles", "document start"),
        MINUTES,
        _title_insert,
        'These minutes have no title. Add "{title}" as the very first line, in the Title '
        "paragraph style, and save.",
        "Put a title at the top of {file}: the text {title}, formatted with the Title style. "
        "Save when done.",
        'Insert a new first paragraph reading "{title}" and make it the document\'s title '
        "(Title style); keep everything else as it is and save.",
    ),
    # ----- find and replace
    template(
        "writer-replace-company",
        ("substitution",),
        LETTER,
        _replace_company,
        "{old} has changed its name to {new}. Update every mention of the old name in the open "
        "letter and save it.",
        'Replace all occurrences of "{old}" with "{new}" in {file}, then save.',
        "Before this letter goes out, the sender's company name must read {new} instead of "
        "{old} everywhere in it. Make the change and save the file.",
    ),
    template(
        "writer-replace-attendee",
        ("substitution",),
        MINUTES,
        _replace_attendee,
        'The minutes misspell an attendee: every "{old}" should read "{new}". Correct all of '
        "them, including the table, and save.",
        "In {file}, change each occurrence of the name {old} to {new} and save the document.",
        "{new} is the right spelling of the name written {old} throughout the open minutes. "
        "Fix it everywhere and save.",
    ),
    # ----- character and paragraph formatting
    template(
        "writer-bold-line",
        ("character formatting",),
        LETTER,
        _bold_line,
        'Make the line "{text}" bold in the open letter, then save it.',
        "The reference line of {file} ({text}) should be in bold type. Change it and save.",
        'Put "{text}" in bold so it stands out, and save the document.',
    ),
    template(
        "writer-italic-paragraph",
        ("character formatting",),
        REPORT,
        _italic_paragraph,
        'Set the paragraph that starts "{start}" in italics and save the report.',
        "In {file}, the note about who prepared the report should be italic. Make it so and save.",
        'Italicize the whole paragraph beginning with "{start}", then save the file.',
    ),
    template(
        "writer-align-paragraph",
        ("text flow",),
        LETTER,
        _align_paragraph,
        'In the open letter, the line "{start}" should be {how}. Change its alignment and save.',
        'Make the paragraph beginning "{start}" {how}, then save {file}.',
        'Align "{start}" so that it is {how}, and save the document.',
    ),
    # ----- paragraphs deleted or moved
    template(
        "writer-delete-paragraph",
        ("document structure",),
        None,  # the document depends on the seed
        _delete_paragraph,
        'Remove the paragraph that begins "{start}" from the open document and save it.',
        '{file} has a paragraph starting "{start}" that no longer applies. Delete it, leaving '
        "the rest untouched, and save.",
        'Take out the whole paragraph "{start}..." and save the file.',
    ),
    template(
        "writer-move-paragraph",
        ("document structure",),
        MINUTES,
        _move_paragraph,
        'Move the agenda item "{item}" so that it comes {where} in the agenda, and save.',
        'In {file}, reorder the agenda: "{item}" belongs {where}. Save when done.',
        'The item "{item}" should be discussed {where_short}: move that line within the agenda '
        "list and save the minutes.",
    ),
]
