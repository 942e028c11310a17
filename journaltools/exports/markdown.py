"""Markdown in journal messages, rendered so that nothing in the journal can run or reach out.

Journal content is untrusted. The renderer (markdown-it-py, CommonMark) is configured so that:

- raw HTML is never passed through: ``<script>``, ``<img onerror=...>`` and every other tag stay visible text;
- a link is made only for ``http:``, ``https:`` and ``mailto:`` targets (``javascript:``, ``data:``,
  ``vbscript:``, ``file:`` and relative targets stay text), and opens in a new tab without an opener;
- images are never loaded (a remote image would be a request the journal's author chose): an image becomes a
  link labelled with its alt text.

Everything markdown-it writes into text or attributes goes through its own HTML escaping.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

#: The only link targets that become links.
SAFE_SCHEMES: tuple[str, ...] = ("http://", "https://", "mailto:")


def is_safe_link(url: str) -> bool:
    """True for an absolute ``http``/``https``/``mailto`` URL (after markdown-it's normalisation)."""
    lowered = url.strip().lower()
    return lowered.startswith(SAFE_SCHEMES) and len(lowered) > len("mailto:")


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("target", "_blank")
    token.attrSet("rel", "noopener noreferrer nofollow")
    return str(self.renderToken(tokens, idx, options, env))


def _image_as_link(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    source = str(token.attrGet("src") or "")
    label = f"[image: {escapeHtml(alt)}]"
    if not is_safe_link(source):
        return label
    return f'<a href="{escapeHtml(source)}" target="_blank" rel="noopener noreferrer nofollow">{label}</a>'


@lru_cache(maxsize=1)
def renderer() -> MarkdownIt:
    """The one configured renderer (CommonMark plus tables and strikethrough, raw HTML off, newlines kept)."""
    # breaks: a single newline is a line break, as in chat messages (an agent's lists and logs keep their lines).
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True})
    md.enable(["table", "strikethrough"])
    md.validateLink = is_safe_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image_as_link)
    return md


def render_markdown(text: str) -> str:
    """``text`` (Markdown) as safe HTML: no raw HTML, no active links, no images loaded."""
    return str(renderer().render(text))
