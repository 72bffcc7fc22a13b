"""Every rule of the interceptor (issue 18, item 3): names, arguments, schema problems, normalisations,
repair rounds, giving up, counters and failed results."""

from __future__ import annotations

import json

import pytest
from plainmcp_bridge.interceptor import (
    ERROR_INSTRUCTION,
    MAX_ANSWER,
    MAX_PROBLEMS,
    Interceptor,
    InvalidCall,
    ToolCatalog,
    ValidCall,
    answer_for_model,
    gave_up_message,
)
from plainmcp_bridge.problems import Problem
from plainmcp_bridge.recover import ProposedCall

from .tools import ALL, FORECAST, NOW, ROUTE


def check(name: object, arguments: object, tools: list[dict] = ALL) -> ValidCall | InvalidCall:
    return ToolCatalog(tools).check(ProposedCall(name, arguments))


def problems(name: object, arguments: object) -> list[str]:
    verdict = check(name, arguments)
    assert isinstance(verdict, InvalidCall)
    return [str(problem) for problem in verdict.problems]


# ----------------------------------------------------------------------------------------- names


def test_valid_call_passes_unchanged_without_notes() -> None:
    verdict = check("get_forecast", {"city": "Paris", "days": 3, "unit": "celsius"})
    assert verdict == ValidCall("get_forecast", {"city": "Paris", "days": 3, "unit": "celsius"})


def test_tool_name_must_match_exactly_and_the_closest_is_suggested() -> None:
    verdict = check("Get_Forecast", {"city": "Paris"})
    assert isinstance(verdict, InvalidCall) and verdict.unknown_tool
    assert 'no tool named "Get_Forecast"' in verdict.message
    assert 'The closest is "get_forecast"' in verdict.message
    assert "delete_file, get_forecast, get_time, plan_route" in verdict.message


@pytest.mark.parametrize(
    ("invented", "closest"),
    [
        ("get_forcast", "get_forecast"),
        ("weather_forecast", "get_forecast"),
        ("plan-route", "plan_route"),
        ("route", "plan_route"),
    ],
)
def test_unknown_tool_names_the_closest_real_one(invented: str, closest: str) -> None:
    assert ToolCatalog(ALL).closest(invented) == closest


def test_unknown_tool_without_any_close_match_lists_the_tools_only() -> None:
    verdict = check("send_email", {})
    assert isinstance(verdict, InvalidCall)
    assert "closest" not in verdict.message
    assert "The tools are: delete_file, get_forecast, get_time, plan_route" in verdict.message


def test_a_name_that_is_not_a_string_is_an_unknown_tool() -> None:
    verdict = check(["get_forecast"], {"city": "Paris"})
    assert isinstance(verdict, InvalidCall) and verdict.unknown_tool


def test_with_no_tools_the_model_is_told_to_answer_without() -> None:
    verdict = check("get_forecast", {}, tools=[])
    assert isinstance(verdict, InvalidCall)
    assert "no tools are available" in verdict.message


# ------------------------------------------------------------------------------------ arguments


def test_arguments_as_a_json_string_are_parsed_and_reported() -> None:
    verdict = check("get_forecast", '{"city": "Paris", "days": 2}')
    assert isinstance(verdict, ValidCall)
    assert verdict.arguments == {"city": "Paris", "days": 2}
    assert verdict.notes == ("the arguments arrived as a JSON string and were parsed",)


def test_arguments_string_that_is_not_json_names_where_it_breaks() -> None:
    (problem,) = problems("get_forecast", '{"city": "Paris",}')
    assert problem.startswith("(arguments): expected a JSON object; sent text that is not valid JSON")
    assert "at character 17" in problem


def test_arguments_string_with_a_number_too_long_to_read_is_a_problem_not_a_crash() -> None:
    # Regression: json.loads raises a bare ValueError (no .msg, no .pos) past 4300 digits, and the
    # AttributeError reading them ended the bridge. Found by mypy.
    (problem,) = problems("get_forecast", '{"city": "Paris", "days": ' + "9" * 5000 + "}")
    assert problem.startswith("(arguments): expected a JSON object; sent text with a number too long to read")


def test_arguments_string_holding_a_non_object() -> None:
    assert problems("get_forecast", '["Paris"]') == [
        '(arguments): expected a JSON object; sent a string holding an array: "[\\"Paris\\"]"'
    ]


def test_arguments_that_are_not_an_object() -> None:
    assert problems("get_forecast", ["Paris"]) == ['(arguments): expected a JSON object; sent ["Paris"] (an array)']


def test_missing_arguments_are_an_empty_object_only_when_nothing_is_required() -> None:
    verdict = check("get_time", None)
    assert isinstance(verdict, ValidCall) and verdict.arguments == {}
    assert verdict.notes == ("no arguments were sent; an empty object was used (the tool requires none)",)
    assert problems("get_forecast", None) == ['(arguments): expected an object with the fields "city"; sent nothing']


# ------------------------------------------------------------------------------------ the schema


def test_wrong_type_names_field_expected_and_sent() -> None:
    assert problems("get_forecast", {"city": "Paris", "days": "3"}) == [
        'days: expected an integer; sent "3" (a string)'
    ]


def test_missing_required_field() -> None:
    assert problems("get_forecast", {"days": 3}) == ["city: expected a string (required); sent nothing"]


def test_extra_field_is_named_with_the_field_it_probably_meant() -> None:
    assert problems("get_forecast", {"city_name": "Paris"}) == [
        "city: expected a string (required); sent nothing",
        'city_name: expected no such field (did you mean "city"?); the fields are "city", "days", "unit"; '
        'sent "Paris" (a string)',
    ]


def test_a_synonym_of_the_one_missing_required_field_is_pointed_at() -> None:
    assert problems("get_forecast", {"town": "Paris"})[1] == (
        'town: expected no such field (did you mean "city"?); the fields are "city", "days", "unit"; '
        'sent "Paris" (a string)'
    )
    # With two unknown fields there is no telling which one was meant.
    assert "did you mean" not in problems("get_forecast", {"town": "Paris", "when": 2})[1]


def test_enum_drift_lists_the_allowed_values() -> None:
    assert problems("get_forecast", {"city": "Paris", "unit": "Celsius"}) == [
        'unit: expected one of "celsius", "fahrenheit"; sent "Celsius" (a string)'
    ]


def test_bounds_in_plain_words() -> None:
    assert problems("get_forecast", {"city": "Paris", "days": 0}) == [
        "days: expected a number >= 1; sent 0 (an integer)"
    ]
    assert problems("get_forecast", {"city": "Paris", "days": 30}) == [
        "days: expected a number <= 7; sent 30 (an integer)"
    ]


def test_nested_paths_are_precise() -> None:
    assert problems("plan_route", {"stops": [{"city": "Paris"}, {"town": "Lyon", "mode": "plane"}]}) == [
        "stops[1].city: expected a string (required); sent nothing",
        'stops[1].mode: expected one of "car", "train"; sent "plane" (a string)',
    ]
    assert problems("plan_route", {"stops": [{"city": "Paris"}]}) == [
        'stops: expected an array of at least 2 items; sent [{"city": "Paris"}] (an array)'
    ]


def test_long_values_are_quoted_short() -> None:
    (problem,) = problems("get_forecast", {"city": "x" * 500, "days": "y" * 500})
    assert len(problem) < 120 and problem.endswith("yyy... (a string)")


def test_problems_are_bounded() -> None:
    tool = {"name": "many", "inputSchema": {"type": "object", "additionalProperties": False}}
    verdict = check("many", {f"field{i}": i for i in range(50)}, tools=[tool])
    assert isinstance(verdict, InvalidCall) and len(verdict.problems) == MAX_PROBLEMS


def test_schema_dialect_is_honoured() -> None:
    # draft-07 has no prefixItems: under it the array below is valid; under 2020-12 it is not.
    schema = {"type": "object", "properties": {"pair": {"prefixItems": [{"type": "integer"}]}}}
    modern = {"name": "t", "inputSchema": schema}
    draft7 = {"name": "t", "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", **schema}}
    assert isinstance(check("t", {"pair": ["a"]}, tools=[modern]), InvalidCall)
    assert isinstance(check("t", {"pair": ["a"]}, tools=[draft7]), ValidCall)


def test_a_broken_schema_is_named_and_only_an_object_is_demanded() -> None:
    catalog = ToolCatalog([{"name": "bad", "inputSchema": {"type": "object", "properties": {"x": {"type": 5}}}}])
    assert catalog.broken_schemas == ["bad"]
    assert isinstance(catalog.check(ProposedCall("bad", {"x": "anything"})), ValidCall)
    assert isinstance(catalog.check(ProposedCall("bad", [1])), InvalidCall)


def test_repair_message_lists_every_problem_and_asks_again() -> None:
    verdict = check("get_forecast", {"days": "3"})
    assert isinstance(verdict, InvalidCall)
    assert verdict.message.splitlines() == [
        "Your call to get_forecast was not run: 2 problems with its arguments.",
        "- city: expected a string (required); sent nothing",
        '- days: expected an integer; sent "3" (a string)',
        "Call get_forecast again with corrected arguments. If you do not know a required value, "
        "ask the user for it instead of guessing.",
    ]
    assert verdict.problems[0] == Problem("city", "a string (required)", "nothing")


# ------------------------------------------------------------------------------- normalisations


def test_whitespace_around_an_enum_value_is_trimmed_and_reported() -> None:
    verdict = check("get_forecast", {"city": "Paris", "unit": " celsius\n"})
    assert isinstance(verdict, ValidCall)
    assert verdict.arguments == {"city": "Paris", "unit": "celsius"}
    assert verdict.notes == ('unit: whitespace around "celsius" was trimmed',)


def test_trimming_reaches_nested_values() -> None:
    verdict = check("plan_route", {"stops": [{"city": "A"}, {"city": "B", "mode": "train "}]})
    assert isinstance(verdict, ValidCall)
    assert verdict.arguments["stops"][1]["mode"] == "train"
    assert verdict.notes == ('stops[1].mode: whitespace around "train" was trimmed',)


def test_nothing_else_is_guessed() -> None:
    # Case, synonyms and number-like strings change meaning or type: reported, never fixed.
    for arguments in (
        {"city": "Paris", "unit": "CELSIUS"},
        {"city": "Paris", "unit": "C"},
        {"city": "Paris", "days": "3"},
        {"city": " Paris ", "days": 3.0 + 0.5},
    ):
        assert isinstance(check("get_forecast", arguments), InvalidCall), arguments
    # Whitespace around a free string is content, not drift: kept as sent.
    verdict = check("get_forecast", {"city": " Paris "})
    assert isinstance(verdict, ValidCall) and verdict.arguments == {"city": " Paris "} and verdict.notes == ()


def test_the_callers_arguments_are_never_modified() -> None:
    arguments = {"city": "Paris", "unit": " celsius"}
    Interceptor(ToolCatalog(ALL)).review("", [ProposedCall("get_forecast", arguments)])
    assert arguments == {"city": "Paris", "unit": " celsius"}


# ------------------------------------------------------------------------- rounds and counters


def test_structured_calls_win_over_text() -> None:
    interceptor = Interceptor(ToolCatalog(ALL))
    review = interceptor.review('{"name": "get_time", "arguments": {}}', [ProposedCall("get_forecast", {"city": "X"})])
    assert [call.name for call in review.valid] == ["get_forecast"]
    assert not review.from_text


def test_calls_written_as_text_are_recovered_and_reported() -> None:
    interceptor = Interceptor(ToolCatalog(ALL))
    review = interceptor.review(
        'Checking.\n<tool_call>{"name": "get_forecast", "arguments": "{\\"city\\": \\"Oslo\\"}"}</tool_call>'
    )
    assert review.from_text and review.text == "Checking."
    (call,) = review.valid
    assert call.arguments == {"city": "Oslo"}
    assert call.notes == (
        "the call was written as text (tags) and recovered",
        "the arguments arrived as a JSON string and were parsed",
    )
    assert interceptor.counters.recovered_from_text == 1


def test_a_plain_answer_has_no_calls() -> None:
    review = Interceptor(ToolCatalog(ALL)).review("It is sunny in Paris.")
    assert not review.has_calls and review.text == "It is sunny in Paris."


def test_repair_rounds_are_bounded_then_the_turn_is_given_up() -> None:
    interceptor = Interceptor(ToolCatalog(ALL), max_repairs=2)
    interceptor.start_turn()
    bad = [ProposedCall("get_forecast", {"city": 5})]
    first = interceptor.review("", bad)
    second = interceptor.review("", bad)
    third = interceptor.review("", bad)
    assert (first.repair_round, second.repair_round) == (1, 2)
    assert not first.gave_up and not second.gave_up and third.gave_up
    assert "(Repair round 2 of 2.)" in interceptor.repair_message(second)
    assert gave_up_message(third) == (
        "The model did not produce a valid call to get_forecast after the allowed repair rounds "
        "(last problem: city: expected a string; sent 5 (an integer)). Nothing was sent to the server."
    )
    # A new user turn has the full budget again.
    interceptor.start_turn()
    assert interceptor.review("", bad).repair_round == 1
    assert interceptor.counters.gave_up == 1 and interceptor.counters.rejected == 4


def test_zero_repairs_gives_up_at_once() -> None:
    interceptor = Interceptor(ToolCatalog(ALL), max_repairs=0)
    assert interceptor.review("", [ProposedCall("nope", {})]).gave_up
    with pytest.raises(ValueError):
        Interceptor(ToolCatalog(ALL), max_repairs=-1)


def test_counters_tell_first_try_from_repaired() -> None:
    interceptor = Interceptor(ToolCatalog(ALL))
    interceptor.start_turn()
    interceptor.review("", [ProposedCall("get_forecast", {"city": "A", "unit": "celsius "})])
    interceptor.start_turn()
    interceptor.review("", [ProposedCall("get_forecast", {"city": "A", "days": "2"})])
    interceptor.review("", [ProposedCall("get_forecast", {"city": "A", "days": 2})])
    assert interceptor.counters.as_dict() == {
        "proposed": 3,
        "valid_first_try": 1,
        "repaired": 1,
        "rejected": 1,
        "gave_up": 0,
        "failed_at_server": 0,
        "normalised": 1,
        "recovered_from_text": 0,
        "cut_after_first": 0,
        "truncated": 0,
        "repeated": 0,
        "ran": 0,
        "succeeded": 0,
        "answered_without_tool": 0,
    }


def test_valid_and_invalid_calls_of_one_turn_are_told_apart() -> None:
    interceptor = Interceptor(ToolCatalog(ALL))
    review = interceptor.review("", [ProposedCall("get_time", {}, id="a"), ProposedCall("get_weather", {}, id="b")])
    assert [call.id for call in review.valid] == ["a"]
    assert [call.id for call in review.invalid] == ["b"]
    assert review.repair_round == 1


def test_the_catalog_can_be_swapped_when_the_tool_list_changes() -> None:
    interceptor = Interceptor(ToolCatalog([NOW]))
    assert interceptor.review("", [ProposedCall("get_forecast", {"city": "A"})]).invalid
    interceptor.catalog = ToolCatalog([NOW, FORECAST, ROUTE])
    assert interceptor.review("", [ProposedCall("get_forecast", {"city": "A"})]).valid


# ------------------------------------------------------------------------------------- results


def test_a_result_becomes_the_models_text() -> None:
    result = {"content": [{"type": "text", "text": "21 C"}, {"type": "text", "text": "sunny"}], "isError": False}
    assert answer_for_model(result) == "21 C\nsunny"


def test_structured_content_stands_in_without_text_and_other_content_is_named() -> None:
    assert answer_for_model({"content": [], "structuredContent": {"t": 21}}) == '{"t": 21}'
    assert answer_for_model(
        {
            "content": [
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                {"type": "resource_link", "uri": "file:///a"},
            ]
        }
    ) == ("[image image/png]\n[resource link file:///a]")
    assert answer_for_model({"content": []}) == "(the tool returned nothing)"


def test_an_error_result_goes_back_with_the_instruction_not_to_invent() -> None:
    text = answer_for_model({"content": [{"type": "text", "text": "city not found: Atlantis"}], "isError": True})
    assert text == f"Error: city not found: Atlantis\n\n{ERROR_INSTRUCTION}"
    assert "Do not invent a result" in text


def test_a_huge_answer_is_cut() -> None:
    text = answer_for_model({"content": [{"type": "text", "text": "x" * (MAX_ANSWER * 3)}]})
    assert len(text) < MAX_ANSWER + 100 and text.endswith(f"[cut: the answer was {MAX_ANSWER * 3} characters]")
    assert json.loads(json.dumps(text)) == text
