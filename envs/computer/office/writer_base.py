"""What the Writer templates share: how a template is made and how a case is written.

Each template takes one of the documents of :mod:`.writer_docs` (a letter, a quarterly report,
meeting minutes) for a seed, changes it so there is something to do (a heading left as plain
text, a table missing a row, a paragraph out of place), writes it as ``.docx``
(:mod:`.writer_docx`) and declares the checks on the saved file, a GUI solution with Writer's
own shortcuts and a python-docx solution (:mod:`.writer_gui`).

Decisions:

- Every check on the changed thing comes with ``order``: the document's paragraph texts, in
  order, as they must be after the task (surrounding space aside). A hollow
  file, a file saved unchanged, or the right formatting on the wrong paragraph fails; only
  what the task asks may change.
- The GUI solutions reach a paragraph by searching for its words, so a template only picks a
  paragraph whose words first occur there (case-insensitively, tables included), checked at
  make time: a generator that cannot find one raises :class:`ArtifactError`.
- Typed text avoids what Writer's autocorrect rewrites (quotes, dashes, a lowercase start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palaestra.envs.computer.office import data
from palaestra.envs.computer.office import writer_gui as g
from palaestra.envs.computer.office.template import ArtifactError, Case, Template
from palaestra.envs.computer.office.writer_docs import Blocks, Source, texts
from palaestra.envs.computer.office.writer_docx import Doc, Page, Para, docx


def searchable(blocks: Blocks, index: int, text: str) -> bool:
    """``text`` first occurs (case-insensitively) in block ``index``: a search finds it there."""
    needle = text.lower()
    for i, b in enumerate(blocks):
        hay = b.plain if isinstance(b, Para) else "\n".join("\n".join(r) for r in b.rows)
        if needle in hay.lower():
            return i == index
    return False


def ensure_searchable(blocks: Blocks, index: int, text: str) -> None:
    """A GUI solution will search for ``text`` to reach block ``index``: it must first occur
    there, or the template cannot make this seed's case."""
    if not searchable(blocks, index, text):
        raise ValueError(f"{text!r} first occurs elsewhere")


def make_case(
    path: str,
    blocks: Blocks,
    params: dict[str, Any],
    expect: list[dict[str, Any]],
    gui: list[Any],
    code: str | None,
    page: Page | None = None,
    after: Blocks | None = None,
) -> Case:
    """A Case: ``blocks`` written to ``~/path``; ``after`` is the document the task asks for
    (its paragraph texts are checked in order). The phrasings name the document ``{file}``:
    it is the path, so the params carry it without each template writing it again."""
    params = {**params, "file": path}
    doc = Doc(tuple(blocks), page or Page(), title=params.get("doc_title", ""))
    final = texts(after if after is not None else blocks)
    spec = g.spec(path, [*expect, g.order(*final)])
    return Case(
        params=params,
        files={path: docx(doc)},
        open=path,
        verifier=spec,
        gui=[*gui, *g.save()],
        code=g.code(path, code) if code else None,
    )


def template(
    name: str,
    skills: tuple[str, ...],
    doc: Source | None,
    make: Callable[..., Case],
    *phrasings: str,
) -> Template:
    """A Writer template whose generator names itself and the seed when it fails. With a
    ``doc`` (the document every seed starts from) ``make`` is ``make(seed, blocks, path)``: the
    template builds the seed's document and gives it with its file, so a generator starts
    from its changes; without one (the document varies with the seed) ``make(seed)``."""

    def safe(seed: int) -> Case:
        try:
            return make(seed) if doc is None else make(seed, doc.build(seed), doc.path)
        except ArtifactError:
            raise
        except Exception as exc:  # any generator failure is reported as one
            raise ArtifactError(name, seed, f"{type(exc).__name__}: {exc}") from exc

    return Template(name, "writer", skills, tuple(phrasings), safe)


def pick(seed: int, purpose: str, options: list[Any]) -> Any:
    if not options:
        raise ValueError(f"no candidate for {purpose}")
    return data.rng(seed, f"writer:{purpose}").choice(options)
