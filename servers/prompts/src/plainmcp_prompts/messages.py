"""Messages: a Markdown body split into conversation turns by its ``User`` / ``Assistant`` headings.

The body is parsed with markdown-it-py (CommonMark), so only real headings count: a ``## User``
line inside a fenced code block, a list or a quote is text. A heading of any level whose whole text
is ``User`` or ``Assistant`` (any case, an optional trailing colon) starts a turn; the text before
the first such heading, if any, is a user turn. A body without role headings is one user turn.

Only block structure matters here, so markdown-it runs without its inline rules (emphasis, links,
brackets: the part whose cost a crafted line can make grow much faster than the line), and not at
all for a body with no line that could be a role heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from .frontmatter import FormatError

ROLES = {"user": "user", "assistant": "assistant"}

# One parser for the process: building it compiles its rules; parsing does not mutate it. The core
# rule "inline" parses the text inside blocks; a heading's text is its inline token's ``content``.
_MARKDOWN = MarkdownIt("commonmark").disable("inline")
# Every line that may be (part of) a role heading: an ATX heading, or the text of a setext one.
_CANDIDATE = re.compile(
    r"^[ \t>*+\-0-9.)]*(?:#{1,6}[ \t]+)?(?:user|assistant)[ \t]*:?[ \t#]*$", re.IGNORECASE | re.MULTILINE
)


@dataclass(frozen=True, slots=True)
class Section:
    role: str
    text: str
    #: 1-based file line of the section's first text line.
    line: int


def split_turns(body: str, body_line: int) -> list[Section]:
    """The turns of ``body`` (which starts at file line ``body_line``).

    Raises FormatError for a role heading with nothing under it, and for a body with no text.
    """
    lines = body.split("\n")
    headings: list[tuple[str, int, int]] = []  # (role, heading's first line, line after it), 0-based
    tokens = _MARKDOWN.parse(body) if _CANDIDATE.search(body) else []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        title = tokens[index + 1].content.strip().removesuffix(":").strip().casefold()
        if title in ROLES:
            headings.append((ROLES[title], token.map[0], token.map[1]))

    sections: list[Section] = []
    if not headings:
        if body.strip():
            sections.append(Section("user", body, body_line))
    else:
        preamble = "\n".join(lines[: headings[0][1]])
        if preamble.strip():
            sections.append(Section("user", preamble, body_line))
        for number, (role, start, after) in enumerate(headings):
            end = headings[number + 1][1] if number + 1 < len(headings) else len(lines)
            text = "\n".join(lines[after:end])
            if not text.strip():
                raise FormatError(f"the {role!r} heading has no text under it", body_line + start)
            sections.append(Section(role, text, body_line + after))
    if not sections:
        raise FormatError("the prompt has no text (the body is empty)", body_line)
    return sections
