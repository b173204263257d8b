"""LibreOffice Writer templates: styles, headings, tables, find and replace, page setup, lists,
comments, bold, italic and alignment, a title inserted, paragraphs moved or deleted.

The templates are declared in :mod:`.writer_text` (text, styles, formatting, paragraphs) and
:mod:`.writer_layout` (page setup, lists, tables, comments) over the documents of
:mod:`.writer_docs`; what they share is :mod:`.writer_base`. This module is what the suite
reads: :data:`TEMPLATES`.
"""

from __future__ import annotations

from palaestra.envs.computer.office import writer_layout, writer_text  # noqa: F401  (declare)
from palaestra.envs.computer.office.writer_base import TEMPLATES

__all__ = ["TEMPLATES"]
