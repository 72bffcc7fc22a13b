"""The fenced code blocks of the project's READMEs, each with the marker that says how it is checked.

Every block in ``README.md``, ``packages/*/README.md`` and ``servers/*/README.md``, and in the pages they link
(``docs/*.md``, ``packages/*/docs/*.md``, ``servers/*/docs/*.md``), is preceded (on the nearest non-blank line above
its fence) by an HTML comment, invisible on GitHub and PyPI:

    <!-- docs: shell -->                 each command runs, as written, in a scratch directory; exit 0 expected
    <!-- docs: server -->                each line starts a server the way a client would; it must answer
    <!-- docs: config -->                a client configuration: every server in it is started as that client would
    <!-- docs: python -->                the code runs as a script with the user's interpreter
    <!-- docs: tested by: tests/x.py::test_y -->  a dedicated test runs it (it needs set-up the others lack)
    <!-- docs: illustrative: <reason> -->         not run; the reason says why (output shown, a real service...)

A block without a marker, or with an unknown one, fails ``test_every_block_says_how_it_is_checked``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^(`{3,})([\w+-]*)[^\n]*$")
_MARKER = re.compile(r"^<!--\s*docs:\s*(?P<kind>[a-z ]+?)\s*(?::\s*(?P<detail>.*?))?\s*-->$")
KINDS = ("shell", "server", "config", "python", "tested by", "illustrative")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its marker (``kind``, ``detail``)."""

    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    kind: str | None
    detail: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[str]:
        """The command lines of a shell block: ``$ `` lines of a console block, else every line that is not
        blank or a comment (a trailing backslash joins lines)."""
        lines = self.text.splitlines()
        if self.language == "console":
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        commands: list[str] = []
        pending = ""
        for line in lines:
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            commands.append(pending + line)
            pending = ""
        return commands


def readmes() -> list[Path]:
    """The READMEs, then the docs pages they link."""
    return [
        ROOT / "README.md",
        *sorted(ROOT.glob("packages/*/README.md")),
        *sorted(ROOT.glob("servers/*/README.md")),
        *sorted(ROOT.glob("docs/*.md")),
        *sorted(ROOT.glob("packages/*/docs/*.md")),
        *sorted(ROOT.glob("servers/*/docs/*.md")),
    ]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, in order."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, language = opening.group(1), opening.group(2)
        end = index + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        kind, detail = _marker_above(lines, index)
        found.append(Block(path, index + 1, language, "\n".join(lines[index + 1 : end]) + "\n", kind, detail))
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in readmes() for block in blocks(path)]


def _marker_above(lines: list[str], fence_index: int) -> tuple[str | None, str]:
    above = fence_index - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above < 0:
        return None, ""
    match = _MARKER.match(lines[above].strip())
    if not match:
        return None, ""
    return match.group("kind"), (match.group("detail") or "").strip()


def find_block(path: Path, contains: str) -> Block:
    """The one block of ``path`` (relative to the repository) whose text contains ``contains``."""
    matches = [block for block in blocks(ROOT / path) if contains in block.text]
    assert len(matches) == 1, f"{path}: {len(matches)} blocks contain {contains!r}"
    return matches[0]
