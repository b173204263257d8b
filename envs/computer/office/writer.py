"""LibreOffice Writer templates: styles, headings, tables, find and replace, page setup, lists,
comments, bold, italic and alignment, a title inserted, paragraphs moved or deleted.

The templates are declared in :mod:`.writer_text` (text, styles, formatting, paragraphs) and
:mod:`.writer_layout` (page setup, lists, tables, comments) over the documents of
:mod:`.writer_docs`, each in one ``TEMPLATES`` table after its generators; what they share is
:mod:`.writer_base`. This module is what the suite reads: :data:`TEMPLATES`, the union in the
suite's order.
"""

from __future__ import annotations

from palaestra.envs.computer.office import writer_layout, writer_text
from palaestra.envs.computer.office.template import Template

TEMPLATES: list[Template] = [*writer_layout.TEMPLATES, *writer_text.TEMPLATES]

__all__ = ["TEMPLATES"]
