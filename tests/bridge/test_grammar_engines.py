"""Every inputSchema our five servers ship, the bridge's grammar-safe projection of each, each server's whole
union and its GBNF grammar (``--constrain grammar``) compile under XGrammar 0.2.9 (vLLM's and SGLang's grammar
engine), run in its own environment (tests/bridge/xgrammar_env.py: it needs torch). Without that environment
the tests skip with the command to build it; with CI set the fixture builds it. llama.cpp's side of the same
checks is in test_real_model.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from plainmcp_bridge.constrain import CHOICE, grammar_safe, shape_schema, union_schema
from plainmcp_bridge.gbnf import to_gbnf
from plainmcp_bridge.servers_config import ServerSpec

from . import xgrammar_env
from .grammar_probes import PROBES
from .test_real_model import listings, servers  # noqa: F401 (the fixture)


@pytest.fixture(scope="module")
def xgrammar() -> Iterator[None]:
    if not xgrammar_env.python().exists():
        if not os.environ.get("CI"):
            pytest.skip(f"XGrammar's environment is not built: {xgrammar_env.build_command()}")
        xgrammar_env.build()
    yield


@pytest.fixture(scope="module")
def shipped(servers: list[ServerSpec]) -> dict[str, list[dict[str, Any]]]:  # noqa: F811
    found = listings(servers)
    assert set(found) == {"sqlite", "files", "weather", "everything", "prompts"}
    return found


def test_xgrammar_compiles_every_shipped_schema_and_its_projection(
    xgrammar: None, shipped: dict[str, list[dict[str, Any]]]
) -> None:
    items: dict[str, dict[str, Any]] = {}
    for server, tools in shipped.items():
        for tool in tools:
            items[f"{server}/{tool['name']}"] = {"schema": tool["inputSchema"]}
            items[f"{server}/{tool['name']} (grammar-safe)"] = {"schema": grammar_safe(tool["inputSchema"])}
        items[f"{server} union"] = {"schema": union_schema(tools)}
        items[f"{server} decision"] = {"schema": shape_schema(tools, CHOICE)}
        items[f"{server} union GBNF"] = {"ebnf": to_gbnf(union_schema(tools))}
    answers = xgrammar_env.check(items)
    assert len(items) > 60 * 2
    assert {key: answer for key, answer in answers.items() if isinstance(answer, str)} == {}


def test_xgrammar_refuses_what_the_projection_removes(xgrammar: None) -> None:
    # The measured verdicts (grammar_probes.PROBES): what XGrammar refuses as sent, and that the projection
    # of every probe (and its GBNF) compiles.
    items: dict[str, dict[str, Any]] = {}
    for name, (schema, _, _) in PROBES.items():
        items[name] = {"schema": schema}
        items[f"{name} (grammar-safe)"] = {"schema": grammar_safe(schema)}
        items[f"{name} (GBNF)"] = {"ebnf": to_gbnf(grammar_safe(schema))}
    answers = xgrammar_env.check(items)
    verdicts = {name: answers[name] is None for name in PROBES}
    assert verdicts == {name: expected for name, (_, _, expected) in PROBES.items()}
    assert [key for key, answer in answers.items() if "(" in key and isinstance(answer, str)] == []


def test_xgrammar_gbnf_admits_compact_calls_of_listed_tools_only(
    xgrammar: None, shipped: dict[str, list[dict[str, Any]]]
) -> None:
    grammar = to_gbnf(union_schema(shipped["sqlite"]))
    texts = {
        '{"name":"describe_table","arguments":{"table":"books"}}': True,
        '{"name":"sample_rows","arguments":{"table":"books","rows":3}}': True,
        '{"answer":"There are 25 books."}': True,
        # padding: the reason the grammar exists (llama.cpp's own converter admits it)
        '{ "name":"describe_table","arguments":{"table":"books"}}': False,
        '{"name":"describe_tables","arguments":{"table":"books"}}': False,  # not a listed tool
        '{"name":"describe_table","arguments":{}}': False,  # the required table is missing
        '{"name":"describe_table","arguments":{"table":5}}': False,  # not a string
        '{"answer":"cut': False,
    }
    answer = xgrammar_env.check({"sqlite": {"ebnf": grammar, "accept": list(texts)}})["sqlite"]
    assert isinstance(answer, dict), answer
    assert dict(zip(texts, answer["accepted"], strict=True)) == texts


def test_xgrammar_gbnf_holds_edge_cases_of_the_projection(xgrammar: None) -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"enum": ['a"b', "c\\d", "line\nbreak", 3, None]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
            "note": {"type": ["string", "null"]},
        },
        "required": ["ghost"],
    }
    # Required names first, then the optional ones in their declared order.
    texts = {
        '{"ghost":1,"mode":"a\\"b","tags":["x"],"note":null}': True,
        '{"ghost":{"any":[true]},"mode":"c\\\\d"}': True,
        '{"ghost":"g","mode":"line\\nbreak"}': True,
        '{"ghost":null,"mode":3,"tags":["x","y"]}': True,
        '{"ghost":0}': True,
        '{"ghost":1,"mode":"a"}': False,  # not one of the enum
        '{"ghost":1,"tags":[]}': False,  # minItems 1
        '{"ghost":1,"tags":["x","y","z"]}': False,  # maxItems 2
        '{"mode":3}': False,  # the required name without a schema of its own is still required
        '{"ghost":1,"note":5}': False,
        '{"mode":3,"ghost":1}': False,  # out of order: the grammar has one order
    }
    answer = xgrammar_env.check({"edge": {"ebnf": to_gbnf(grammar_safe(schema)), "accept": list(texts)}})["edge"]
    assert isinstance(answer, dict), answer
    assert dict(zip(texts, answer["accepted"], strict=True)) == texts
