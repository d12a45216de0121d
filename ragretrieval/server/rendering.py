"""How stored text is shown on the pages: answers as sanitised Markdown, long texts collapsed, and error messages
without the server's paths or command lines in them.

**Markdown.** Models answer in Markdown (lists, bold, tables, code). An answer is rendered by markdown-it-py (the
CommonMark parser of the Python ecosystem) with raw HTML *off*, so ``<script>`` or ``<img onerror>`` in an answer is
text, and markdown-it's link check already refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` links. Its
output then goes through nh3 (the Python binding of Ammonia, the Rust HTML sanitiser) with an allow-list: the tags
Markdown makes (no images: a picture in an answer could call any server when the page is opened), ``href`` on links
only (no ``style``: the CSP would refuse it anyway), and only ``http``, ``https`` and ``mailto`` URLs (relative ones
are dropped too), every link opened with ``rel="noopener noreferrer nofollow"``. Two independent layers: a mistake
in one is caught by the other, and the pages' Content-Security-Policy runs no inline script in any case.

**Errors** shown to a web user come from deep inside the engine (``[Errno 2] No such file or directory:
'/srv/data/...'``): `public_text` shortens every absolute path to its last part and names no command to run.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

MARKDOWN_TAGS = {"p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a", "hr",
                 "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"}
LINK_SCHEMES = ("http://", "https://", "mailto:")
LONG_CHARACTERS, LONG_LINES = 1200, 14  # past either, a text starts collapsed with a "Show all" button
PATH = re.compile(r"(?<![\w.:/~-])(?:~|/[\w.@+-]+)(?:/[\w.@+ -]*[\w.@+-])+/?")
COMMAND = re.compile(r"`ragretrieval [^`]*`")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("js-default", {"breaks": True})  # html off; a line break in an answer stays one


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    if tag == "a" and attribute == "href":
        return value if value.lower().startswith(LINK_SCHEMES) else None
    return value


def markdown_html(text: str | None) -> Markup:
    """`text` as safe HTML (see the module's text); an empty or missing text gives an empty string."""
    if not text:
        return Markup("")
    html = _parser().render(text)
    return Markup(nh3.clean(html, tags=MARKDOWN_TAGS, attributes={"a": {"href"}},
                            attribute_filter=_keep_attribute, link_rel="noopener noreferrer nofollow",
                            strip_comments=True))


def is_long(text: str | None) -> bool:
    """Whether a card's text starts collapsed (a 15,000-pixel card helps nobody)."""
    return bool(text) and (len(text) > LONG_CHARACTERS or text.count("\n") >= LONG_LINES)


def public_text(message: str | None) -> str | None:
    """An error message as a web user sees it: a server path shortened to its last part (``…/runs.sqlite``), a
    suggested ``ragretrieval ...`` command replaced by a plain word (the user of the page has no command line)."""
    if not message:
        return message
    message = PATH.sub(lambda found: "…/" + found.group(0).rstrip("/").rsplit("/", 1)[-1], message)
    return COMMAND.sub("the command line", message)
