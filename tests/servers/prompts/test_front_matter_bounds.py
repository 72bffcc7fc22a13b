"""Front matter bounded while it is read (aliases, expansion, nesting, size) and values quoted with a
bound in every message (issue 15, class 6). Through ``parse`` and ``load_prompt``, as a file is read."""

from __future__ import annotations

import sys

import pytest
from plainmcp_prompts import safeyaml
from plainmcp_prompts.formats import load_file_text
from plainmcp_prompts.frontmatter import MAX_FRONT_MATTER_CHARS, MAX_MESSAGE_CHARS, FormatError, parse, quote


def refused(text: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse(text)
    return caught.value


def test_aliases_beyond_the_limit_are_refused_at_the_first_one_too_many():
    items = "\n".join(f"k{i}: *a" for i in range(safeyaml.MAX_ALIASES + 1))
    error = refused(f"---\nbase: &a x\n{items}\n---\nBody")
    assert f"more than {safeyaml.MAX_ALIASES} aliases" in error.message
    assert error.line == 3 + safeyaml.MAX_ALIASES  # the line of the alias over the limit


def test_aliases_within_the_limits_still_share_a_list():
    doc = parse(
        "---\nshared: &levels [low, high]\narguments:\n  - {name: a, values: *levels}\n"
        "  - {name: b, values: *levels}\n---\nBody"
    )
    assert doc.meta["arguments"][1]["values"] == ["low", "high"]


def test_billion_laughs_is_refused_before_it_is_built():
    lines = ["---", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    error = refused("\n".join([*lines, "name: *a8", "---", "Body"]))
    assert error.message.startswith("front matter refused: it ")


def test_few_aliases_of_a_large_value_are_refused_by_their_expanded_size():
    error = refused("---\nx: &x " + "y" * 60_000 + "\nname: [*x, *x, *x, *x, *x]\n---\nBody")
    assert f"larger than {safeyaml.MAX_EXPANDED}" in error.message
    assert error.line == 3


def test_an_alias_inside_the_node_it_names_is_refused():
    assert "inside the node it names" in refused("---\nname: &a [x, *a]\n---\nBody").message


@pytest.mark.parametrize("depth", [safeyaml.MAX_DEPTH, 20_000])
def test_nesting_beyond_the_limit_is_refused_while_composing(depth, monkeypatch):
    # A recursion limit far below what 20,000 levels would need: the depth is checked before the
    # composer recurses, so no RecursionError can happen whatever the nesting.
    monkeypatch.setattr(sys, "getrecursionlimit", sys.getrecursionlimit)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        error = refused("---\nname: " + "[" * depth + "]" * depth + "\n---\nBody")
    finally:
        sys.setrecursionlimit(limit)
    assert f"nested deeper than {safeyaml.MAX_DEPTH} levels" in error.message
    assert error.line == 2


def test_nesting_up_to_the_limit_loads():
    depth = safeyaml.MAX_DEPTH - 2  # the mapping and the scalar at the bottom are levels too
    assert "name" in parse("---\nname: " + "[" * depth + "x" + "]" * depth + "\n---\nBody").meta


def test_front_matter_longer_than_the_limit_is_refused_without_reading_it():
    error = refused("---\ndescription: " + "x" * MAX_FRONT_MATTER_CHARS + "\n---\nBody")
    assert "front matter is longer than" in error.message and error.line == 2


@pytest.mark.parametrize("value", ["9" * 20_000, "2020-13-45"])
def test_values_python_cannot_build_are_a_format_error(value):
    # Not ValueError escaping the loader: int() refuses 20,000 digits, date() month 13.
    assert "cannot be read" in refused(f"---\nname: {value}\n---\nBody").message


# ------------------------------------------------------------------------------------- quoting


def test_quote_bounds_a_long_string_and_marks_the_cut():
    text = quote("x" * 10_000)
    assert text.startswith("'xxx") and text.endswith("…") and len(text) <= 84


def test_quote_bounds_nested_and_shared_values():
    shared = ["lol"] * 9
    for _ in range(8):
        shared = [shared] * 9  # 9**9 strings, shared: repr() would build gigabytes
    assert len(quote(shared)) <= 84
    assert len(quote({"k" * 500: ["v" * 500] * 500})) <= 84


def test_quote_of_a_number_too_long_for_str_does_not_raise():
    sys_limit = sys.get_int_max_str_digits()
    assert len(quote(10 ** (sys_limit + 10))) <= 84


def test_format_error_messages_are_cut_at_the_limit():
    assert len(FormatError("x" * 100_000).message) == MAX_MESSAGE_CHARS


@pytest.mark.parametrize(
    "text",
    [
        "---\nname: " + "n" * 50_000 + "\n---\nBody",
        "---\nformat: " + "f" * 50_000 + "\n---\nBody",
        "---\n" + "k" * 50_000 + ": 1\n---\nBody",
        "---\narguments:\n  - name: a\n    values: [" + ", ".join(["v" * 100] * 400) + "]\n    default: z\n---\n{{a}}",
        "Body {{" + "x" * 100_000 + "}}",
        "Body {{> " + "p" * 100_000 + "\\x}}",
    ],
)
def test_messages_about_long_values_from_a_file_stay_short(text):
    warnings: list[tuple[int | None, str]] = []
    try:
        _, warnings = load_file_text(text, root="/lib", path="p.md")
    except FormatError as error:
        warnings.append((error.line, error.message))
    assert warnings
    # Each message quotes a short prefix of the long value: well under the cap every message has.
    assert all(len(message) <= 350 for _, message in warnings), warnings
