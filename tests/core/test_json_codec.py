"""The JSON codec keeps the wire's rules with either backend: orjson (the default on CPython) and
the standard library (its fallback, and the judge wherever orjson's answer might differ)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
import subprocess
import sys

import pytest
from plainmcp import json_codec


@pytest.fixture(params=["orjson", "stdlib"])
def codec(request, monkeypatch):
    if request.param == "stdlib":
        monkeypatch.setattr(json_codec, "_orjson", None)
    assert json_codec.backend() == request.param
    return json_codec


def test_orjson_is_the_codec_on_cpython():
    # A declared dependency on CPython: the fast path is what users run.
    assert platform.python_implementation() == "CPython"
    assert json_codec.backend() == "orjson"


def test_the_environment_can_ask_for_the_standard_library():
    code = "from plainmcp import json_codec; print(json_codec.backend())"
    env = {"PLAINMCP_JSON": "stdlib", "PATH": ""}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert result.stdout.strip() == "stdlib", result.stderr


@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b'{"x":-Infinity}', b"nan", b"{", b"\xff", b"", b"[1,]"])
def test_loads_refuses_what_is_not_json(codec, text):
    with pytest.raises(ValueError):
        codec.loads(text)


@pytest.mark.parametrize(
    "number",
    [2**64 + 1, 2**64, -(2**63) - 1, 10**40, -(10**40), 2**63 - 1, 2**63, -(2**63), 1234567890123456789],
)
def test_integers_are_exact_at_any_size_both_ways(codec, number):
    data = codec.dumps({"id": number, "nested": [[number]]})
    assert data == f'{{"id":{number},"nested":[[{number}]]}}'.encode()
    assert codec.loads(data) == {"id": number, "nested": [[number]]}
    assert type(codec.loads(data)["id"]) is int


def test_a_long_run_of_digits_inside_a_string_does_not_change_the_result(codec):
    data = b'{"s":"12345678901234567890123","n":1.5}'
    assert codec.loads(data) == {"s": "12345678901234567890123", "n": 1.5}


def test_lone_surrogate_escapes_are_read(codec):
    assert codec.loads(b'{"a":"x\\ud800y"}') == {"a": "x\ud800y"}
    assert codec.loads('"\\udfff"') == "\udfff"


def test_paired_escapes_and_utf8_text_are_read(codec):
    assert codec.loads(b'["\\ud83d\\ude00","\xc3\xa9"]') == ["\U0001f600", "é"]


def test_lone_surrogates_are_written_escaped_as_valid_utf8(codec):
    data = codec.dumps({"t": "é\ud800x"})
    data.decode("utf-8")
    assert b"\\ud800" in data
    assert codec.loads(data) == {"t": "é\ud800x"}


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        {"x": float("-inf")},
        [None, [None, {"deep": [1.0, float("nan")]}]],
        {"a": None, "b": (0.5, float("inf"))},
    ],
)
def test_dumps_refuses_non_finite_numbers_even_beside_nulls(codec, value):
    with pytest.raises(ValueError):
        codec.dumps(value)


@pytest.mark.parametrize(
    "value",
    [{1, 2}, object(), b"bytes", {"d": datetime.date(2026, 1, 1)}, {"c": dataclasses.make_dataclass("C", [])()}],
)
def test_dumps_refuses_values_json_cannot_carry(codec, value):
    with pytest.raises((TypeError, ValueError)):
        codec.dumps(value)


def test_circular_values_are_a_value_error(codec):
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        codec.dumps(loop)


def test_output_is_compact_utf8_in_key_order(codec):
    value = {"z": 1, "a": [True, False, None], "é": '☃ \n\t"\\', "m": {"y": 0.1, "b": -2.5e-8}}
    data = codec.dumps(value)
    assert data.startswith(b'{"z":1,"a":[true,false,null],"\xc3\xa9":"\xe2\x98\x83 \\n\\t\\"\\\\","m":{"y":0.1,"b":')
    assert b" " not in data.replace("☃ ".encode(), b"")
    assert json.loads(data) == value
    assert list(json.loads(data)) == ["z", "a", "é", "m"]


def test_non_string_keys_are_written_as_the_standard_library_writes_them(codec):
    assert codec.dumps({1: "a", None: "b", 2.5: "c"}) == b'{"1":"a","null":"b","2.5":"c"}'


def test_deep_nesting_within_the_parsers_reach_round_trips(codec):
    value: list[object] = []
    for _ in range(400):  # past orjson's own limit for writing (254 levels)
        value = [value]
    assert codec.loads(codec.dumps(value)) == value


def test_both_backends_write_text_the_other_reads_alike(monkeypatch):
    values = [
        {"rows": [[1, "x", None, 2.5, 2**70], [-(2**63), "ü", True, 1e300, 0]]},
        ["\U0001f600", "\ud800", "", 0.0, -0.0, 5e-324],
        {"nested": {"a": [{"b": [None] * 3}]}},
    ]
    fast = [json_codec.dumps(value) for value in values]
    monkeypatch.setattr(json_codec, "_orjson", None)
    slow = [json_codec.dumps(value) for value in values]
    for value, one, other in zip(values, fast, slow, strict=True):
        assert json.loads(one) == json.loads(other) == value


def test_nulls_beside_values_that_read_back_differently_are_written_alike(codec):
    # A tuple reads back as a list: the null check then hands the value to the standard library,
    # which must write the same text.
    assert codec.dumps({"a": None, "t": (1, 2.5), "n": [None]}) == b'{"a":null,"t":[1,2.5],"n":[null]}'
