"""Typed arguments (issue 21): type, pattern, minimum/maximum declared in the file, enforced by the
server with -32602 in both eras, described in the listing, completed from declared options; and the
pattern engine, which must stay linear whatever a file's author writes."""

from __future__ import annotations

import logging
import tracemalloc
from pathlib import Path

import anyio
import pytest
from plainmcp import MCPError, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_prompts.library import Library
from plainmcp_prompts.pattern import Budget, PatternError, compile_pattern

from .support import MODERN, server_over, stdio_command, text_of, write

ERAS = ["2025-11-25", MODERN]

TICKET = """
    ---
    description: File a ticket
    arguments:
      - name: key
        required: true
        pattern: "^[A-Z]{2,5}-[0-9]+$"
      - name: points
        type: integer
        minimum: 1
        maximum: 13
        default: 3
      - name: ratio
        type: number
        minimum: 0
        maximum: 1
      - name: urgent
        type: boolean
        default: false
    ---
    Ticket {{key}}: {{points}} points, ratio {{ratio}}, urgent {{urgent}}.
    """


@pytest.fixture
def library(tmp_path):
    write(tmp_path, "ticket.md", TICKET)
    return tmp_path


# ------------------------------------------------------------------------------------------ engine


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("^[A-Z]{2,5}-[0-9]+$", "ABC-12", True),
        ("^[A-Z]{2,5}-[0-9]+$", "ABC-12 ", False),
        ("^[A-Z]{2,5}-[0-9]+$", "A-12", False),
        ("[a-z]+", "abc1", False),  # the whole value, never a part of it
        ("a|bc", "bc", True),
        ("(?:ab)*c?", "ababc", True),
        ("(?:ab)*c?", "aba", False),
        ("x{2,3}", "xxxx", False),
        ("x{2,}", "xxxxxxx", True),
        (r"\d{4}-\d\d-\d\d", "2026-12-01", True),
        (r"[^\s,]+", "no,comma", False),
        (r"\w+\.md", "notes.md", True),
        (r"a\$", "a$", True),
        (".", "\n", False),
        ("", "", True),
    ],
)
def test_pattern_matches_whole_values(pattern, value, expected):
    assert compile_pattern(pattern).matches(value) is expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"(a)\1", r"'\1' is not supported"),
        ("(?=a)a", "only (?: ) groups"),
        ("a*?", "lazy and possessive"),
        ("(a", "never closed"),
        ("a)", "no '('"),
        ("*a", "nothing to repeat"),
        ("a{1000}", "above 100"),
        ("(.?){100}(.?){100}(.?){100}", "too complex"),
        ("[z-a]", "backwards"),
        ("a" * 201, "longer than 200"),
    ],
)
def test_pattern_outside_the_language_is_refused_saying_why(pattern, message):
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert message in str(caught.value)


def test_pattern_that_backtracks_exponentially_in_re_stays_linear_here():
    # (a+)+$ against 30 a's and a b takes Python's re minutes; here it is one pass over the value.
    evil = compile_pattern("(a+)+$")
    assert evil.matches("a" * 4096 + "b") is False
    assert evil.matches("a" * 4096) is True
    nested = compile_pattern("((a|aa)*)*z")
    assert nested.matches("a" * 4096) is False


def test_pattern_matching_memory_stays_small_on_the_worst_values():
    """Remembered steps are bounded by the states they hold: this match held ~70 MB when each of
    its 4096 steps kept its ~300 states."""
    evil = compile_pattern("(.*){99}")
    value = "".join(chr(0x4E00 + i) for i in range(4095)) + "\n"  # no step seen twice, no match
    tracemalloc.start()
    try:
        assert evil.matches(value, Budget(10**9)) is False  # the memory bound, past the work bound
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024


# ----------------------------------------------------------------------------------- the protocol


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_typed_arguments_render_with_defaults_and_normalised_booleans(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        plain = await client.get_prompt("ticket", {"key": "OPS-7"})
        given = await client.get_prompt("ticket", {"key": "OPS-7", "points": "13", "ratio": ".5", "urgent": "TRUE"})
    assert text_of(plain["messages"][0]) == "Ticket OPS-7: 3 points, ratio , urgent false."
    assert text_of(given["messages"][0]) == "Ticket OPS-7: 13 points, ratio .5, urgent true."


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"key": "ops-7"},
            "Argument 'key' of prompt 'ticket' must match the pattern '^[A-Z]{2,5}-[0-9]+$' (got 'ops-7')",
        ),
        (
            {"key": "OPS-7", "points": "three"},
            "Argument 'points' of prompt 'ticket' must be a whole number (got 'three')",
        ),
        ({"key": "OPS-7", "points": "2.0"}, "Argument 'points' of prompt 'ticket' must be a whole number (got '2.0')"),
        ({"key": "OPS-7", "points": "14"}, "Argument 'points' of prompt 'ticket' must be at most 13 (got '14')"),
        ({"key": "OPS-7", "points": "0"}, "Argument 'points' of prompt 'ticket' must be at least 1 (got '0')"),
        ({"key": "OPS-7", "ratio": "nan"}, "Argument 'ratio' of prompt 'ticket' must be a number (got 'nan')"),
        ({"key": "OPS-7", "ratio": "1e3"}, "Argument 'ratio' of prompt 'ticket' must be at most 1 (got '1e3')"),
        ({"key": "OPS-7", "urgent": "yes"}, "Argument 'urgent' of prompt 'ticket' must be true or false (got 'yes')"),
        (
            {"key": "OPS-" + "1" * 5000},
            "Argument 'key' of prompt 'ticket' must be at most 4096 characters long to be checked against its pattern",
        ),
    ],
)
async def test_typed_argument_violations_are_invalid_params_naming_the_rule(library, era, arguments, message):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("ticket", arguments)
    assert caught.value.code == -32602
    assert caught.value.message == message


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_typed_arguments_are_described_in_the_listing_and_the_tool(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        (prompt,) = await client.list_all_prompts()
        listed = await client.call_tool("list_prompts", {})
    described = {argument["name"]: argument.get("description") for argument in prompt["arguments"]}
    assert described == {
        "key": "Matches ^[A-Z]{2,5}-[0-9]+$.",
        "points": "A whole number from 1 to 13. Default: 3.",
        "ratio": "A number from 0 to 1.",
        "urgent": "Either true or false. Default: false.",
    }
    arguments = listed["structuredContent"]["prompts"][0]["arguments"]
    assert arguments[0] == {"name": "key", "required": True, "pattern": "^[A-Z]{2,5}-[0-9]+$"}
    assert arguments[1] == {
        "name": "points",
        "required": False,
        "default": "3",
        "type": "integer",
        "minimum": 1,
        "maximum": 13,
    }
    assert arguments[3]["type"] == "boolean"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_completion_offers_true_and_false_for_a_boolean(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        ref = {"type": "ref/prompt", "name": "ticket"}
        assert (await client.complete(ref, "urgent", ""))["values"] == ["true", "false"]
        assert (await client.complete(ref, "urgent", "F"))["values"] == ["false"]


@pytest.mark.anyio
async def test_render_prompt_tool_refuses_a_typed_violation_as_a_tool_error(library):
    async with connect_in_memory(server_over(library)) as client:
        result = await client.call_tool(
            "render_prompt", {"name": "ticket", "arguments": {"key": "OPS-7", "points": "99"}}
        )
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Argument 'points' of prompt 'ticket' must be at most 13 (got '99')"


# -------------------------------------------------------------------------------------- the files


@pytest.mark.parametrize(
    ("declaration", "problem"),
    [
        (
            "{name: n, type: text}",
            ":3: type of argument 'n' must be one of string, integer, number, boolean, not 'text'",
        ),
        ("{name: n, pattern: '(a'}", ":3: pattern of argument 'n': a '(' is never closed"),
        ("{name: n, minimum: 1}", ":3: minimum of argument 'n' needs type integer or number"),
        ("{name: n, type: integer, minimum: 5, maximum: 1}", ":3: minimum of argument 'n' is above its maximum"),
        ("{name: n, type: integer, maximum: 1, default: 7}", ":3: default of argument 'n': '7' must be at most 1"),
        ("{name: n, type: integer, values: [1, x]}", ":3: values of argument 'n': 'x' must be a whole number"),
        ("{name: n, pattern: '[a-z]+', default: ABC}", ":3: default of argument 'n': 'ABC' must match the pattern"),
        ("{name: n, type: integer, minimum: 1" + "0" * 500 + "}", ":3: minimum of argument 'n' is out of range"),
    ],
)
def test_bad_typed_declarations_skip_the_file_naming_line_and_rule(tmp_path, caplog, declaration, problem):
    write(tmp_path, "bad.md", f"---\narguments:\n  - {declaration}\n---\nUse {{{{n}}}}.\n")
    library = Library([tmp_path])
    with caplog.at_level(logging.WARNING, logger="plainmcp_prompts.library"):
        library.scan()
    assert library.prompts == {}
    assert [str(p).removeprefix(str(tmp_path / "bad.md")) for p in library.problems][0].startswith(problem)


# ------------------------------------------------------------------------------- a real process


@pytest.mark.anyio
async def test_hostile_pattern_and_value_leave_the_server_answering_ping(tmp_path):
    """The worst patterns within the bounds, with the longest values: every request is refused or
    answered, and ping keeps being answered within a second meanwhile (a real server process)."""
    write(
        tmp_path,
        "evil.md",
        """
        ---
        arguments:
          - {name: a, pattern: "(.*){99}"}
          - {name: b, pattern: "(.*a?){60}z"}
        ---
        {{a}} {{b}}
        """,
    )
    # Distinct characters (no step is seen twice) and no match at the very end: the slowest values.
    value = "".join(chr(0x4E00 + i) for i in range(4095)) + "\n"
    async with connect_stdio(stdio_command(tmp_path)) as client:
        answered = 0

        async def attack() -> None:
            nonlocal answered
            for attempt in range(6):
                arguments = {"a": value} if attempt % 2 else {"a": "x", "b": value}
                with pytest.raises(MCPError) as caught:
                    await client.get_prompt("evil", arguments)
                assert caught.value.code == -32602
                answered += 1

        async with anyio.create_task_group() as group:
            group.start_soon(attack)
            for _ in range(5):
                with anyio.fail_after(1):
                    await client.ping()
                await anyio.sleep(0.1)
        result = await client.get_prompt("evil", {"a": "x", "b": "z"})
    assert answered == 6
    assert text_of(result["messages"][0]) == "x z"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_readme_typed_arguments_example_is_served(tmp_path, era):
    """The README's typed front matter, with the body it names, renders and refuses as it says."""
    readme = (Path(__file__).parents[3] / "servers/prompts/docs/formats.md").read_text(encoding="utf-8")
    front = readme.split("```yaml\ndescription: Open a ticket\n", 1)[1].split("```", 1)[0]
    body = "Open {{key}}: {{points}} points, urgent: {{urgent}}.\n"
    (tmp_path / "ticket.md").write_text("---\ndescription: Open a ticket\n" + front + "---\n" + body, encoding="utf-8")
    async with connect_in_memory(server_over(tmp_path), protocol_version=era) as client:
        result = await client.get_prompt("ticket", {"key": "OPS-7"})
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("ticket", {"key": "ops-7"})
    assert text_of(result["messages"][0]) == "Open OPS-7: 3 points, urgent: false."
    assert caught.value.code == -32602
    assert caught.value.message == (
        "Argument 'key' of prompt 'ticket' must match the pattern '^[A-Z]{2,5}-[0-9]+$' (got 'ops-7')"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_completion_offers_a_small_integer_range_and_history_for_a_large_one(tmp_path, era):
    write(
        tmp_path,
        "p.md",
        """
        ---
        arguments:
          - {name: small, type: integer, minimum: 1, maximum: 13}
          - {name: large, type: integer, minimum: 0, maximum: 1000, default: 10}
        ---
        {{small}} {{large}}
        """,
    )
    async with connect_in_memory(server_over(tmp_path), protocol_version=era) as client:
        ref = {"type": "ref/prompt", "name": "p"}
        assert (await client.complete(ref, "small", ""))["values"] == [str(n) for n in range(1, 14)]
        assert (await client.complete(ref, "small", "1"))["values"] == ["1", "10", "11", "12", "13"]
        assert (await client.complete(ref, "large", ""))["values"] == ["10"]
        await client.get_prompt("p", {"large": "250"})
        assert (await client.complete(ref, "large", ""))["values"] == ["250", "10"]
