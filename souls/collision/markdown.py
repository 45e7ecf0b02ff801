"""Markdown to HTML for the collision memory's pages (the tide report, the status page).

CommonMark through markdown-it-py, with raw HTML off: the text carries what users wrote
(card lines, questions, draw topics), so a ``<script>`` in it comes out as text, never
as markup. Links keep markdown-it's own check (no ``javascript:`` or ``data:`` URLs).
"""

from __future__ import annotations

from markdown_it import MarkdownIt

__all__ = ["to_html"]

_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def to_html(markdown: str) -> str:
    """``markdown`` rendered as an HTML fragment (raw HTML in it escaped)."""
    rendered: str = _MARKDOWN.render(markdown)
    return rendered
