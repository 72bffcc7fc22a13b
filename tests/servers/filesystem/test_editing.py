"""Edits as pure string functions."""

from __future__ import annotations

import pytest
from plainmcp_filesystem.editing import EditFailed, apply_edits, fenced, unified_diff


def test_edit_replaces_a_unique_match() -> None:
    assert apply_edits("a\nb\nc\n", [{"oldText": "b", "newText": "B"}]).text == "a\nB\nc\n"


def test_edit_refuses_several_matches_and_says_where() -> None:
    with pytest.raises(EditFailed, match=r"matches 2 places \(lines 1, 3\)"):
        apply_edits("x = 1\ny\nx = 1\n", [{"oldText": "x = 1", "newText": "x = 2"}])


def test_edit_applies_all_or_nothing_in_order() -> None:
    outcome = apply_edits("one two", [{"oldText": "one", "newText": "1"}, {"oldText": "1 two", "newText": "done"}])
    assert outcome.text == "done"
    with pytest.raises(EditFailed, match="Edit 2"):
        apply_edits("one two", [{"oldText": "one", "newText": "1"}, {"oldText": "missing", "newText": ""}])


def test_edit_falls_back_to_whitespace_tolerant_matching_and_reindents() -> None:
    text = "def f():\n\tif x:\n\t\treturn  1\n"
    outcome = apply_edits(text, [{"oldText": "if x:\n    return 1", "newText": "if y:\n    return 2"}])
    assert outcome.text == "def f():\n\tif y:\n\t    return 2\n"
    assert "ignoring whitespace" in outcome.notes[0] and "lines 2-3" in outcome.notes[0]


def test_edit_tolerant_match_must_be_unique() -> None:
    with pytest.raises(EditFailed, match="2 places when whitespace is ignored"):
        apply_edits("  a\n  b\n\ta\n\tb\n", [{"oldText": "a\nb", "newText": "c"}])


def test_edit_not_found_names_the_most_similar_line() -> None:
    with pytest.raises(EditFailed, match="line 2"):
        apply_edits("alpha\nresult = compute(value)\n", [{"oldText": "result = compute(valeu)", "newText": "x"}])


def test_edit_keeps_crlf_line_endings() -> None:
    outcome = apply_edits("a\r\nb\r\n", [{"oldText": "a\nb", "newText": "c\nd"}])
    assert outcome.text == "c\r\nd\r\n"


def test_diff_is_unified_and_fenced_safely() -> None:
    diff = unified_diff("a\n```\n", "b\n```\n", "f.md")
    assert diff.startswith("--- a/f.md\n+++ b/f.md\n@@")
    assert "-a\n+b\n" in diff
    assert fenced(diff).startswith("````diff\n")
    assert unified_diff("x", "x", "f") == ""
