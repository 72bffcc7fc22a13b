"""The bridge against a real model: llama.cpp's llama-server (built by tools/llama_server.py) with SmolLM2-135M
on 127.0.0.1, and the real sqlite, filesystem and weather servers. The model is not expected to be right: the
tests assert what the bridge guarantees (nothing invalid sent, every call answered, bounded rounds, counts
that add up, the exit code of the outcome), and that every schema our servers ship compiles to llama.cpp's
grammar through the bridge's projection. Without a built llama-server they skip with the command to build
it; with CI set the fixture builds it (and a failure fails)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonschema
import pytest
from plainmcp_bridge.__main__ import EXIT
from plainmcp_bridge.constrain import CHOICE, grammar_safe, shape_schema, union_schema
from plainmcp_bridge.gbnf import to_gbnf
from plainmcp_bridge.rendering import server_renders_tools
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.toolbox import open_toolbox

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
import bridge_bench  # noqa: E402
import llama_server  # noqa: E402

from .grammar_probes import PROBES  # noqa: E402

PYTHON = sys.executable


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    if not llama_server.binary().exists() or not (llama_server.cache() / "models").exists():
        if not os.environ.get("CI"):
            pytest.skip(
                f"llama-server is not built: {llama_server.build_command()}; then: python3 tools/llama_server.py models"
            )
        llama_server.build()
    with llama_server.serve(llama_server.model("smollm2")) as url:
        yield url


@pytest.fixture(scope="module")
def servers() -> Iterator[list[ServerSpec]]:
    with tempfile.TemporaryDirectory() as scratch, bridge_bench.real_servers(Path(scratch)) as specs:
        everything = ServerSpec("everything", command=(PYTHON, "-m", "plainmcp_everything", "--log-level", "warning"))
        prompts = ServerSpec("prompts", command=(PYTHON, "-m", "plainmcp_prompts", "--log-level", "warning"))
        yield [*specs, everything, prompts]


def listings(specs: list[ServerSpec]) -> dict[str, list[dict[str, Any]]]:
    async def read() -> dict[str, list[dict[str, Any]]]:
        found = {}
        for spec in specs:
            async with open_toolbox([spec], stderr="discard") as toolbox:
                found[spec.name] = list(toolbox.tools)
        return found

    return anyio.run(read)


def compiles(url: str, schema: dict[str, Any] | str) -> str | None:
    """None when llama-server builds a grammar from ``schema`` (its /completion with ``json_schema``; a
    string goes as a GBNF ``grammar``); else its error."""
    constraint = {"grammar": schema} if isinstance(schema, str) else {"json_schema": schema}
    answer = httpx.post(url + "/completion", json={"prompt": "{", "n_predict": 1, **constraint}, timeout=60)
    return None if answer.status_code == 200 else answer.text[:300]


def test_real_model_every_shipped_schema_compiles_to_a_grammar(llama: str, servers: list[ServerSpec]) -> None:
    shipped = listings(servers)
    assert set(shipped) == {"sqlite", "files", "weather", "everything", "prompts"}
    failures = {}
    for server, tools in shipped.items():
        for tool in tools:
            error = compiles(llama, grammar_safe(tool["inputSchema"]))
            if error:
                failures[f"{server}/{tool['name']}"] = error
        # The request's whole union (every tool of the server and the answer branch) builds as one grammar,
        # as a JSON Schema (--constrain format), as the bridge's GBNF (grammar), and so does the decision.
        for name, constraint in (
            ("union", union_schema(tools)),
            ("union GBNF", to_gbnf(union_schema(tools))),
            ("decision", shape_schema(tools, CHOICE)),
        ):
            if error := compiles(llama, constraint):
                failures[f"{server} {name}"] = error
    assert failures == {}


def test_real_model_llama_cpp_refuses_what_the_projection_removes(llama: str) -> None:
    # The measured verdicts (grammar_probes.PROBES; XGrammar's are in test_grammar_engines.py): what
    # llama.cpp refuses as sent, and that every probe's projection and its GBNF build.
    verdicts = {name: compiles(llama, schema) is None for name, (schema, _, _) in PROBES.items()}
    assert verdicts == {name: expected for name, (_, expected, _) in PROBES.items()}
    projected = {name: compiles(llama, grammar_safe(schema)) for name, (schema, _, _) in PROBES.items()}
    grammars = {name: compiles(llama, to_gbnf(grammar_safe(schema))) for name, (schema, _, _) in PROBES.items()}
    assert {name: error for name, error in {**projected, **grammars}.items() if error} == {}


def test_real_model_a_lookahead_pattern_is_projected_away(llama: str) -> None:
    hostile = {"type": "object", "properties": {"to": {"type": "string", "pattern": "^(?!.*\\.\\.)[^@]+@[^@]+$"}}}
    assert compiles(llama, grammar_safe(hostile)) is None
    assert "pattern" not in json.dumps(grammar_safe(hostile))


def test_real_model_llama_server_says_its_template_drops_the_tools(llama: str) -> None:
    # SmolLM2's chat template has no tools: the bridge's words are the only description the model gets.
    assert anyio.run(server_renders_tools, "openai", llama + "/v1", "local") is False


def ask(llama: str, spec: ServerSpec, question: str, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    entry: dict[str, Any] = {"command": spec.command[0], "args": list(spec.command[1:])}
    if spec.env:
        entry["env"] = dict(spec.env)
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {spec.name: entry}}), encoding="utf-8")
    command = [PYTHON, "-m", "plainmcp_bridge", "ask", question, "--json", "--config", str(config)]
    command += ["--api", "openai", "--base-url", llama + "/v1", "--model", "local", "--max-rounds", "3"]
    command += ["--option", "temperature=0", "--option", "max_tokens=96", "--turn-timeout", "120", *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=170, stdin=subprocess.DEVNULL)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {"stderr": done.stderr}


def assert_guarantees(code: int, document: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    """What the bridge promises whatever the model says."""
    assert code == EXIT[document["status"]], document
    counts = document["counts"]
    assert counts["proposed"] == counts["valid_first_try"] + counts["repaired"] + counts["rejected"]
    transcript = document["transcript"]
    calls = [event for event in transcript if event["type"] == "call"]
    results = [event for event in transcript if event["type"] == "result"]
    assert len(calls) == len(results) == counts["ran"]
    assert counts["succeeded"] + counts["failed_at_server"] == counts["ran"]
    assert document["rounds"] <= 4
    schemas = {tool["name"]: tool["inputSchema"] for tool in tools}
    for call in calls:  # nothing invalid was sent
        jsonschema.validate(call["arguments"], schemas[call["name"]])
    if document["status"] == "answered" and document["tool_results"] == 0:
        assert counts["answered_without_tool"] == 1


@pytest.mark.parametrize(
    ("server", "question"),
    [
        ("sqlite", "What columns does the books table have?"),
        ("weather", "What is the weather forecast for London?"),
    ],
)
def test_real_model_constrained_ask_keeps_the_guarantees(
    llama: str, servers: list[ServerSpec], server: str, question: str, tmp_path: Path
) -> None:
    spec = next(spec for spec in servers if spec.name == server)
    code, document = ask(llama, spec, question, tmp_path)  # --constrain auto: format for a local OpenAI server
    assert_guarantees(code, document, listings([spec])[server])
    # Constrained, the model acts: a call was proposed (SmolLM2 proposes none with the text prompt alone).
    assert document["counts"]["proposed"] >= 1


@pytest.mark.parametrize("mode", ["grammar", "decide"])
def test_real_model_grammar_and_decide_keep_the_guarantees(
    llama: str, servers: list[ServerSpec], mode: str, tmp_path: Path
) -> None:
    spec = next(spec for spec in servers if spec.name == "sqlite")
    code, document = ask(llama, spec, "What columns does the books table have?", tmp_path, "--constrain", mode)
    assert_guarantees(code, document, listings([spec])["sqlite"])
    decisions = [event for event in document["transcript"] if event["type"] == "decision"]
    assert bool(decisions) == (mode == "decide")
    if mode == "grammar":  # constrained from the first token, SmolLM2 proposes a call (it does not unconstrained)
        assert document["counts"]["proposed"] >= 1


def test_real_model_unconstrained_ask_keeps_the_guarantees(
    llama: str, servers: list[ServerSpec], tmp_path: Path
) -> None:
    spec = next(spec for spec in servers if spec.name == "files")
    code, document = ask(llama, spec, "List the files in the notes directory.", tmp_path, "--constrain", "off")
    assert_guarantees(code, document, listings([spec])["files"])
