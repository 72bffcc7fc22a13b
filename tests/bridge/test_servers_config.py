"""The mcpServers file (Claude Desktop / Cursor format) and --server CMD."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plainmcp_bridge.servers_config import ServerSpec, inline_server, load_config, parse_config, unique_names


def test_stdio_and_http_entries(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "weather": {"command": "plainmcp-weather", "args": ["--log-level", "info"], "env": {"A": "1"}},
                    "remote": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer t"}},
                    "old": {"type": "sse", "url": "https://example.test/sse"},
                    "off": {"command": "x", "disabled": True},
                }
            }
        ),
        encoding="utf-8",
    )
    assert load_config(path) == [
        ServerSpec("weather", command=("plainmcp-weather", "--log-level", "info"), env={"A": "1"}),
        ServerSpec("remote", url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer t"}),
        ServerSpec("old", url="https://example.test/sse", transport="sse"),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], 'expected an object with "mcpServers"'),
        ({"servers": {}}, 'expected an object with "mcpServers"'),
        ({"mcpServers": {"a": "plainmcp-weather"}}, "mcpServers.a must be an object"),
        ({"mcpServers": {"a": {}}}, 'mcpServers.a needs "command" (a stdio server) or "url"'),
        ({"mcpServers": {"a": {"command": "x", "args": "--db x"}}}, "mcpServers.a.args must be a list of strings"),
        ({"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}}, "mcpServers.a.env must be an object of strings"),
        ({"mcpServers": {"a": {"url": "file:///etc/passwd"}}}, "mcpServers.a.url must be an http:// or https:// URL"),
        ({"mcpServers": {"a": {"type": "websocket", "url": "http://x"}}}, "mcpServers.a.type must be one of"),
    ],
)
def test_wrong_shapes_name_the_entry_and_field(document: object, message: str) -> None:
    with pytest.raises(ValueError, match=None) as raised:
        parse_config(document, "c.json")
    assert str(raised.value).startswith("c.json: ") and message in str(raised.value)


def test_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{\n  mcpServers: {}\n}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"c.json: not JSON \(.*line 2\)"):
        load_config(path)


def test_a_file_with_a_number_too_long_to_read(tmp_path: Path) -> None:
    # Regression: past 4300 digits json.loads raises a bare ValueError, without .msg or .lineno.
    path = tmp_path / "c.json"
    path.write_text('{"mcpServers": {}, "n": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"c.json: not JSON this reads \(a number of more than 4300 digits\)"):
        load_config(path)


def test_inline_server_and_unique_names() -> None:
    spec = inline_server("plainmcp-sqlite --db 'my data.db'")
    assert spec == ServerSpec("sqlite", command=("plainmcp-sqlite", "--db", "my data.db"))
    with pytest.raises(ValueError):
        inline_server("   ")
    assert inline_server("/venv/bin/python3 -m plainmcp_weather --log-level info").name == "weather"
    names = [s.name for s in unique_names([spec, spec, inline_server("/usr/bin/other")])]
    assert names == ["sqlite", "sqlite-2", "other"]
