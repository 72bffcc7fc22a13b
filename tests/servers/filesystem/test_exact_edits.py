"""Exact edits (issue 19): one place each (or ``replace_all``), the nearest candidates when there is none,
every other byte kept (CRLF, mixed endings, a BOM, UTF-16), ``dryRun`` as a unified diff; a fuzz test of
many edits on files of mixed endings; and the arguments' bounds now checked in code, not schemas.
"""

from __future__ import annotations

import codecs
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import Server, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.editing import EditFailed, apply_edits

from .conftest import Tree, text_of

MODERN = "2026-07-28"


async def call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with connect_in_memory(server) as client:
        return await client.call_tool(name, arguments)


# ------------------------------------------------------------------------------------ pure edits


def test_replace_all_replaces_every_place_and_says_which_lines() -> None:
    outcome = apply_edits("x = 1\ny\nx = 1\n", [{"oldText": "x = 1", "newText": "x = 2", "replace_all": True}])
    assert outcome.text == "x = 2\ny\nx = 2\n"
    assert "replaced 2 places (lines 1, 3)" in outcome.notes[0]
    with pytest.raises(EditFailed, match="or set replace_all"):
        apply_edits("x = 1\ny\nx = 1\n", [{"oldText": "x = 1", "newText": "x = 2"}])


def test_mixed_line_endings_outside_the_edit_are_kept() -> None:
    text = "one\r\ntwo\nthree\r\nfour\n"
    # The matched span's own break was "\n": the replacement's breaks are "\n"; every other line keeps its own.
    assert apply_edits(text, [{"oldText": "two\nthree", "newText": "2\n3"}]).text == "one\r\n2\n3\r\nfour\n"
    # A span with a CRLF takes CRLF.
    assert apply_edits(text, [{"oldText": "one\ntwo", "newText": "1\n2"}]).text == "1\r\n2\nthree\r\nfour\n"


def test_no_match_shows_the_nearest_candidates_with_lines_and_differences() -> None:
    text = "def load(path):\n    return open(path).read()\n\ndef save(path, data):\n    open(path, 'w').write(data)\n"
    with pytest.raises(EditFailed) as failure:
        apply_edits(text, [{"oldText": "def lode(path):\n    return open(path).read()", "newText": "x"}])
    message = str(failure.value)
    assert "Nearest candidates" in message and "lines 1-2" in message
    assert "- def lode(path):" in message and "+ def load(path):" in message


def _oracle_span(original: str, old: str) -> tuple[int, int] | None:
    """Where ``old`` (with ``\\n`` breaks) is in ``original`` when any break may be ``\\r\\n``: the one place, else None."""
    pattern = re.compile("\r?\n".join(re.escape(piece) for piece in old.split("\n")))
    spans = [match.span() for match in pattern.finditer(original)]
    # A match is unique only if no other (overlapping ones included) exists.
    overlapping = [m.start() for m in re.finditer(f"(?={pattern.pattern})", original)]
    return spans[0] if len(spans) == 1 and len(overlapping) == 1 else None


def test_fuzz_edits_on_mixed_endings_never_write_in_the_wrong_place() -> None:
    rng = random.Random(19)
    words = ["alpha", "beta", "gamma", "delta", "  indent", "\ttab", "x = 1", "", "é ü", "return y"]
    checked = 0
    for _ in range(400):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(3, 30))]
        original = "".join(line + rng.choice(["\n", "\r\n"]) for line in lines)
        if rng.random() < 0.2:
            original = "\ufeff" + original  # a UTF-8 BOM, as edit_file decodes it
        view = original.replace("\r\n", "\n")
        start = rng.randrange(len(view))
        old = view[start : start + rng.randint(1, 40)]
        if old.endswith("\r") or old.startswith("\n") and start > 0 and original[start - 1 : start] == "\r":
            continue
        new = rng.choice(["", "NEW", "a\nb", "line\nline\n", "é"])
        span = _oracle_span(original, old)
        try:
            result = apply_edits(original, [{"oldText": old, "newText": new}]).text
        except EditFailed:
            assert span is None or not old.strip(), (original, old)
            continue
        if span is None:
            continue  # a whitespace-tolerant match: checked by its own tests
        begin, end = span
        # Nothing before or after the one place changed, byte for byte ...
        assert result.startswith(original[:begin]) and result.endswith(original[end:]), (original, old, new)
        middle = result[begin : len(result) - (len(original) - end)]
        # ... and the place holds the new text, its breaks in one of the file's two styles.
        assert middle.replace("\r\n", "\n") == new, (original, old, new, middle)
        checked += 1
    assert checked > 150  # the fuzz really exercised exact replacements


# --------------------------------------------------------------------------------- through the tool


@pytest.mark.anyio
async def test_edit_file_keeps_a_bom_and_utf16_byte_for_byte(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server(allow_write=True)
    bom8 = tree.root / "bom8.txt"
    bom8.write_bytes(codecs.BOM_UTF8 + b"first\r\nsecond\r\n")
    assert not (
        await call(server, "edit_file", {"path": "bom8.txt", "edits": [{"oldText": "second", "newText": "2nd"}]})
    ).get("isError")
    assert bom8.read_bytes() == codecs.BOM_UTF8 + b"first\r\n2nd\r\n"
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        wide = tree.root / f"{codec}.txt"
        wide.write_bytes(bom + "naïve\r\nline\r\n".encode(codec))
        result = await call(
            server, "edit_file", {"path": wide.name, "edits": [{"oldText": "line", "newText": "ligne ✓"}]}
        )
        assert not result.get("isError"), text_of(result)
        assert wide.read_bytes() == bom + "naïve\r\nligne ✓\r\n".encode(codec)


@pytest.mark.anyio
async def test_edit_file_refuses_other_encodings_and_leaves_them_alone(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    latin = tree.root / "latin.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    result = await call(
        make_server(allow_write=True),
        "edit_file",
        {"path": "latin.txt", "edits": [{"oldText": "caf", "newText": "tea"}]},
    )
    assert result["isError"] and "UTF-8 or UTF-16" in text_of(result)
    assert latin.read_bytes() == "café\n".encode("latin-1")


@pytest.mark.anyio
async def test_unknown_arguments_and_edit_keys_are_refused_by_name(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    server = make_server(allow_write=True)
    misspelt = await call(
        server, "edit_file", {"path": "hello.txt", "edits": [{"oldText": "line", "newText": "row", "replaceAll": True}]}
    )
    assert misspelt["isError"] and "'replaceAll'" in text_of(misspelt) and "replace_all" in text_of(misspelt)
    stray = await call(server, "read_text_file", {"path": "hello.txt", "lines": 3})
    assert stray["isError"] and "Unknown argument 'lines'" in text_of(stray)
    assert (tree.root / "hello.txt").read_text() == "line 1\nline 2\nline 3\n"


@pytest.mark.anyio
async def test_pattern_lists_are_bounded_in_code(make_server: Callable[..., Server], tree: Tree) -> None:
    """The schemas no longer carry maxItems on glob lists: the Excluder refuses long lists itself."""
    result = await call(
        make_server(),
        "search_files",
        {"path": ".", "pattern": "*.txt", "excludePatterns": [f"x{i}" for i in range(101)]},
    )
    assert result["isError"] and "at most 100 patterns" in text_of(result)


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_edit_file_dry_run_and_replace_all_through_a_real_process(tmp_path: Path, version: str | None) -> None:
    target = tmp_path / "config.ini"
    original = b"[a]\r\nkey = old\nother = 1\r\n[b]\r\nkey = old\n"
    target.write_bytes(original)
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--allow-write", "--no-watch"]
    edits = [{"oldText": "key = old", "newText": "key = new", "replace_all": True}]
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            dry = await client.call_tool("edit_file", {"path": "config.ini", "edits": edits, "dryRun": True})
            assert dry["structuredContent"]["applied"] is False and target.read_bytes() == original
            diff = dry["structuredContent"]["diff"]
            assert diff.startswith("--- a/") and diff.count("-key = old") == 2 and diff.count("+key = new") == 2
            done = await client.call_tool("edit_file", {"path": "config.ini", "edits": edits})
            assert done["structuredContent"]["applied"] is True
            missing = await client.call_tool(
                "edit_file", {"path": "config.ini", "edits": [{"oldText": "other = 2", "newText": "x"}]}
            )
            assert missing["isError"] and "line 3" in text_of(missing)
    assert target.read_bytes() == b"[a]\r\nkey = new\nother = 1\r\n[b]\r\nkey = new\n"


def test_replace_all_of_half_a_million_places_is_one_pass() -> None:
    """Replacing every place is built in one pass, and only the first lines are counted: the former
    splice per place copied the text once per place (hours for this file)."""
    text = "a\r\n" * 500_000
    outcome = apply_edits(text, [{"oldText": "a", "newText": "b\nc", "replace_all": True}])
    assert outcome.text == "b\r\nc\r\n" * 500_000
    assert "replaced 500000 places (lines 1, 2, 3" in outcome.notes[0] and "and 499990 more" in outcome.notes[0]
    with pytest.raises(EditFailed, match=r"matches 500000 places \(lines 1, 2, .* and 499990 more\)"):
        apply_edits(text, [{"oldText": "a", "newText": "b"}])
