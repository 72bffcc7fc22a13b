"""The system prompt: role, the tools in plain words from their schemas, the calling rules; an operator's file."""

from __future__ import annotations

from pathlib import Path

from plainmcp_bridge.prompt import ROLE, RULES, build_system_prompt, describe_tool, load_template, value_words

from .tools import ALL, DELETE, FORECAST, NOW, ROUTE


def test_prompt_has_three_parts_in_order() -> None:
    prompt = build_system_prompt(ALL)
    role, tools, rules = prompt.index(ROLE), prompt.index("The tools:"), prompt.index(RULES)
    assert role == 0 and role < tools < rules
    for tool in ALL:
        assert f"\n{tool['name']}: " in prompt


def test_a_tool_in_plain_words() -> None:
    assert describe_tool(FORECAST).splitlines() == [
        "get_forecast: The weather forecast for a city.",
        "  You must give: city, a string (City name, such as Shanghai).",
        '  You may give: days, an integer (at least 1; at most 7); unit, one of "celsius", "fahrenheit".',
        "  You get back: temperature, a number; conditions, a string.",
    ]


def test_tools_that_change_things_say_so_by_the_mcp_defaults() -> None:
    # destructiveHint true; no annotations at all (the spec's defaults: not read-only, destructive).
    assert "It may change or delete things." in describe_tool(DELETE)
    assert "It may change or delete things." in describe_tool(NOW)
    assert "change" not in describe_tool(FORECAST)  # readOnlyHint true
    additive = {**NOW, "annotations": {"readOnlyHint": False, "destructiveHint": False}}
    assert "change" not in describe_tool(additive)


def test_nested_arrays_and_objects_are_described() -> None:
    assert describe_tool(ROUTE).splitlines()[1] == (
        "  You must give: stops, a list of items, each an object with city, mode (optional) (at least 2 items)."
    )
    assert "It takes no arguments." in describe_tool(NOW)


def test_value_words_cover_defaults_examples_unions_and_bounds() -> None:
    assert value_words({"type": "integer", "default": 3, "maximum": 10}) == "an integer (at most 10; default 3)"
    assert value_words({"type": "string", "examples": ["Shanghai"]}) == 'a string (such as "Shanghai")'
    assert value_words({"type": ["string", "null"]}) == "a string or null"
    assert value_words({"anyOf": [{"type": "integer"}, {"const": "all"}]}) == 'an integer or exactly "all"'
    assert value_words({"type": "string", "pattern": "^[a-z]+$", "maxLength": 8}) == (
        "a string (at most 8 characters; matching ^[a-z]+$)"
    )
    assert value_words(None) == "any value"


def test_long_descriptions_are_cut() -> None:
    tool = {"name": "t", "description": "word " * 1000, "inputSchema": {"type": "object"}}
    first = describe_tool(tool).splitlines()[0]
    assert len(first) < 420 and first.endswith("...")


def test_the_prompt_follows_the_tool_list() -> None:
    before = build_system_prompt([NOW])
    after = build_system_prompt([NOW, FORECAST])
    assert "get_forecast" not in before and "get_forecast" in after
    assert "No tools are available" in build_system_prompt([])


def test_an_operators_file_replaces_the_prompt_and_keeps_the_tools_live(tmp_path: Path) -> None:
    path = tmp_path / "prompt.txt"
    path.write_text("Du bist ein Wetterassistent.\n\n{tools}\n\nAntworte auf Deutsch.", encoding="utf-8")
    template = load_template(path)
    prompt = build_system_prompt([FORECAST], template=template)
    assert prompt.startswith("Du bist ein Wetterassistent.\n\nget_forecast: The weather forecast")
    assert prompt.endswith("Antworte auf Deutsch.")
    assert ROLE not in prompt and RULES not in prompt
    assert "get_time" in build_system_prompt([FORECAST, NOW], template=template)
    # Without the placeholder, the file is the whole prompt.
    assert build_system_prompt([FORECAST], template="Be brief.") == "Be brief."
