"""Calls a model wrote as text are recovered; prose and data that are not calls are left alone."""

from __future__ import annotations

import json

from plainmcp_bridge.recover import MAX_STARTS, MAX_TEXT, ProposedCall, recover_calls


def _names_and_arguments(calls: list[ProposedCall]) -> list[tuple[str, object]]:
    return [(call.name, call.arguments) for call in calls]


def test_recover_tool_call_tags() -> None:
    text = 'Let me check.\n<tool_call>\n{"name": "get_forecast", "arguments": {"city": "Paris"}}\n</tool_call>'
    calls, rest = recover_calls(text)
    assert _names_and_arguments(calls) == [("get_forecast", {"city": "Paris"})]
    assert calls[0].from_text and calls[0].source == "tags"
    assert rest == "Let me check."


def test_recover_several_tags_and_an_unclosed_last_one() -> None:
    text = '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": {"x": 1}}'
    calls, rest = recover_calls(text)
    assert _names_and_arguments(calls) == [("a", {}), ("b", {"x": 1})]
    assert rest == ""


def test_recover_tags_accept_a_name_alone() -> None:
    calls, _ = recover_calls('<tool_call>{"name": "get_time"}</tool_call>')
    assert _names_and_arguments(calls) == [("get_time", None)]


def test_recover_fenced_json_block() -> None:
    text = 'I will call it:\n```json\n{"name": "get_forecast", "parameters": {"city": "Oslo"}}\n```\nDone.'
    calls, rest = recover_calls(text)
    assert _names_and_arguments(calls) == [("get_forecast", {"city": "Oslo"})]
    assert calls[0].source == "fenced block"
    assert rest == "I will call it:\n\nDone."


def test_recover_fenced_block_without_language() -> None:
    calls, _ = recover_calls('```\n{"name": "get_time", "arguments": {}}\n```')
    assert _names_and_arguments(calls) == [("get_time", {})]


def test_recover_bare_object_inside_prose() -> None:
    text = 'Sure! {"name": "get_forecast", "arguments": {"city": "Rome"}} should do it.'
    calls, rest = recover_calls(text)
    assert _names_and_arguments(calls) == [("get_forecast", {"city": "Rome"})]
    assert calls[0].source == "JSON object"
    assert rest == "Sure!  should do it."


def test_recover_openai_style_function_wrapper() -> None:
    call = {"type": "function", "function": {"name": "get_forecast", "arguments": '{"city": "Lima"}'}}
    calls, _ = recover_calls(json.dumps(call))
    # The stringified arguments are kept as sent: parsing them is the interceptor's rule (and reported).
    assert _names_and_arguments(calls) == [("get_forecast", '{"city": "Lima"}')]


def test_recover_a_list_of_calls() -> None:
    text = json.dumps([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": "v"}}])
    calls, _ = recover_calls(text)
    assert _names_and_arguments(calls) == [("a", {}), ("b", {"k": "v"})]


def test_recover_leaves_prose_and_data_alone() -> None:
    for text in [
        "The temperature is 21 degrees {approximately}.",
        '{"city": "Paris", "temperature": 21}',  # data, no name
        '{"name": "Paris"}',  # a bare object needs arguments to be a call
        '[{"name": "a", "arguments": {}}, 3]',  # a list counts only when every member is a call
        '```json\n{"name": 5, "arguments": {}}\n```',  # the name must be a string
        "",
    ]:
        calls, rest = recover_calls(text)
        assert calls == [], text
        assert rest == text


def test_recover_tags_win_over_an_object_in_the_prose() -> None:
    text = 'Example: {"name": "x", "arguments": {}}\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    calls, _ = recover_calls(text)
    assert _names_and_arguments(calls) == [("get_time", {})]


def test_recover_is_bounded_on_hostile_text() -> None:
    # Longer than the bound: not searched at all.
    huge = '{"name": "a", "arguments": {}}' + " " * MAX_TEXT
    assert recover_calls(huge) == ([], huge)
    # Many braces before the call: the search stops after MAX_STARTS attempts.
    noisy = "{" * (MAX_STARTS + 5) + ' {"name": "a", "arguments": {}}'
    calls, _ = recover_calls(noisy)
    assert calls == []


def test_calls_drafted_while_thinking_are_not_calls() -> None:
    drafted = '<think>Maybe {"name": "delete_file", "arguments": {"path": "/"}}? No, just read it.</think>'
    assert recover_calls(drafted + "I will only read the file.")[0] == []
    calls, rest = recover_calls(drafted + '\n<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>')
    assert _names_and_arguments(calls) == [("read_file", {"path": "a"})] and rest == ""
    # An unclosed thinking section hides everything after it.
    assert recover_calls('<think>{"name": "a", "arguments": {}}')[0] == []
