"""End to end: ``plainmcp-bridge ask`` as a process, driven by the stand-in model, against real servers of
this repository (weather on its own stand-in upstream, filesystem on a temporary directory, sqlite on its
sample database) over stdio, several at once from one mcpServers file, and one over Streamable HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from plainmcp_bridge.standin import StandInModel
from plainmcp_weather.standin import StandIn

from ..e2e.http_server import server_process

PYTHON = sys.executable


def ask(
    model: StandInModel,
    question: str,
    config: dict[str, Any],
    tmp_path: Path,
    *extra: str,
    api: str = "ollama",
    env: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": config}), encoding="utf-8")
    base = model.url if api == "ollama" else model.url + "/v1"
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "plainmcp_bridge",
            "ask",
            question,
            "--json",
            "--config",
            str(path),
            "--api",
            api,
            "--base-url",
            base,
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
    return done.returncode, json.loads(done.stdout) if done.stdout else {}, done.stderr


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


def told(model: StandInModel, index: int = -1) -> str:
    """The last message the model was sent in request ``index``."""
    return model.requests[index][1]["messages"][-1]["content"]


def test_weather_forecast_repaired_then_answered_from_the_upstream_stand_in(tmp_path: Path) -> None:
    with StandIn() as upstream:
        env = {f"PLAINMCP_WEATHER_{api}_URL": upstream.url for api in ("GEOCODING", "FORECAST", "NWS")}
        script = [
            call("get_forecast", {"location": "Paris", "days": "2"}),
            call("get_forecast", {"location": "Paris", "days": 2}),
            {"text": "Two days of weather in Paris."},
        ]
        with StandInModel(script) as model:
            code, document, stderr = ask(
                model,
                "Weather in Paris for two days?",
                {"weather": {"command": PYTHON, "args": ["-m", "plainmcp_weather"]}},
                tmp_path,
                env=env,
            )
    assert code == 0, stderr
    assert document["answer"] == "Two days of weather in Paris."
    assert 'days: expected an integer; sent "2" (a string)' in told(model, 1)
    forecast = told(model, 2)
    assert "Paris" in forecast and not forecast.startswith("Error")
    counts = document["counts"]
    assert (counts["rejected"], counts["repaired"], counts["failed_at_server"]) == (1, 1, 0)


def test_filesystem_read_with_stringified_arguments_over_the_openai_api(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "todo.md").write_text("- buy milk\n- write the bridge README\n", encoding="utf-8")
    script = [
        call("list_directory", json.dumps({"path": str(root)})),
        call("read_text_file", json.dumps({"path": str(root / "todo.md")})),
        {"text": "You need to buy milk and write the README."},
    ]
    with StandInModel(script) as model:
        code, document, stderr = ask(
            model,
            "What is on my todo list?",
            {"files": {"command": PYTHON, "args": ["-m", "plainmcp_filesystem", str(root)]}},
            tmp_path,
            api="openai",
        )
    assert code == 0, stderr
    assert "todo.md" in told(model, 1), told(model, 1)
    assert "write the bridge README" in told(model, 2)
    # String arguments are the OpenAI API's own form: parsed, but not counted as normalised (issue 28.5).
    assert document["counts"]["normalised"] == 0 and document["counts"]["valid_first_try"] == 2


def test_three_servers_at_once_and_an_error_told_honestly(tmp_path: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    config = {
        "files": {"command": PYTHON, "args": ["-m", "plainmcp_filesystem", str(root)]},
        "shop": {"command": PYTHON, "args": ["-m", "plainmcp_sqlite"]},
        "weather": {
            "command": PYTHON,
            "args": ["-m", "plainmcp_weather"],
            "env": {"PLAINMCP_WEATHER_GEOCODING_URL": "http://127.0.0.1:9"},
        },
    }
    script = [
        call("query", {"sql": "SELECT title FROM books ORDER BY price_cents DESC LIMIT 1"}),
        call("read_text_file", {"path": str(root / "missing.txt")}),
        {"text": "The most expensive book is known; the file does not exist."},
    ]
    with StandInModel(script) as model:
        code, document, stderr = ask(model, "q", config, tmp_path)
    assert code == 0, stderr
    tools = {tool["function"]["name"] for tool in model.requests[0][1]["tools"]}
    assert {"query", "read_text_file", "get_forecast"} <= tools
    assert not told(model, 1).startswith("Error")
    missing = told(model, 2)
    assert missing.startswith("Error: ") and "Do not invent a result" in missing
    assert document["counts"]["failed_at_server"] == 1


def test_a_server_over_streamable_http(tmp_path: Path) -> None:
    with server_process() as server:
        script = [call("test_simple_text", {}), {"text": "It answered."}]
        with StandInModel(script) as model:
            code, document, stderr = ask(model, "q", {"everything": {"url": server.url}}, tmp_path, "--yes")
    assert code == 0, stderr
    assert document["answer"] == "It answered."
    assert "test_simple_text" in [event.get("name") for event in document["transcript"]]
    assert not told(model).startswith("Error")


def test_http_headers_from_the_config_reach_the_server(tmp_path: Path) -> None:
    with server_process("--auth-token", "s3cret-token-for-the-bridge") as server:
        script = [call("test_simple_text", {}), {"text": "Authorized."}]
        with StandInModel(script) as model:
            entry = {"url": server.url, "headers": {"Authorization": "Bearer s3cret-token-for-the-bridge"}}
            code, document, stderr = ask(model, "q", {"everything": entry}, tmp_path, "--yes")
            assert code == 0, stderr
            assert document["answer"] == "Authorized."
            refused, _, stderr = ask(model, "q", {"everything": {"url": server.url}}, tmp_path, "--yes")
    assert refused == 1 and "cannot use server 'everything': " in stderr
    assert "s3cret" not in stderr
