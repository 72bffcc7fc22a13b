"""Reading a snippet of ``plainmcp config`` as its client reads it: JSON, TOML, YAML, a ``claude mcp add``
line, an install link. Shared by tests/cli and tests/devenv (shared/client-configs)."""

from __future__ import annotations

import base64
import json
import shlex
import tomllib
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml


def launch_of(client: str, form: str | None, text: str, name: str) -> tuple[str, list[str], dict[str, str]]:
    """The command, args and env of server ``name`` in ``text``, read as ``client`` reads its configuration."""
    if form == "link":
        return _entry(_from_link(client, text, name))
    if client == "claude-code" and form is None:
        return _from_claude_mcp_add(text, name)
    if client == "codex":
        return _entry(tomllib.loads(text)["mcp_servers"][name])
    if client == "continue":
        block = yaml.safe_load(text)
        assert (block["schema"], block["mcpServers"][0]["name"]) == ("v1", name)
        return _entry(block["mcpServers"][0])
    if client == "goose":
        extension = yaml.safe_load(text)["extensions"][name]
        assert (extension["type"], extension["enabled"]) == ("stdio", True)
        return extension["cmd"], extension["args"], extension.get("envs", {})
    document = json.loads(text)
    key = {"vscode": "servers", "zed": "context_servers"}.get(client, "mcpServers")
    return _entry(document[key][name])


def _entry(entry: dict[str, Any]) -> tuple[str, list[str], dict[str, str]]:
    assert entry.get("type", "stdio") == "stdio"
    return entry["command"], entry.get("args", []), entry.get("env", {})


def _from_claude_mcp_add(text: str, name: str) -> tuple[str, list[str], dict[str, str]]:
    words = shlex.split(text)
    assert words[:3] == ["claude", "mcp", "add"]
    env: dict[str, str] = {}
    at = 3
    while words[at].startswith("-"):
        option, value = words[at], words[at + 1]
        if option in ("--env", "-e"):
            key, _, val = value.partition("=")
            env[key] = val
        else:
            assert (option, value) == ("--transport", "stdio")
        at += 2
    assert words[at : at + 2] == [name, "--"]
    return words[at + 2], words[at + 3 :], env


def _from_link(client: str, text: str, name: str) -> dict[str, Any]:
    lines = text.splitlines()
    if client == "cursor":
        (link,) = lines
        parts = urlsplit(link)
        assert (parts.scheme, parts.netloc, parts.path) == ("cursor", "anysphere.cursor-deeplink", "/mcp/install")
        query = parse_qs(parts.query)
        assert query["name"] == [name]
        return json.loads(base64.b64decode(query["config"][0]))
    direct, redirect = lines
    assert direct.startswith("vscode:mcp/install?")
    entry = json.loads(unquote(direct.partition("?")[2]))
    assert entry.pop("name") == name
    query = parse_qs(urlsplit(redirect).query)
    assert redirect.startswith("https://insiders.vscode.dev/redirect/mcp/install?")
    assert query["name"] == [name] and json.loads(query["config"][0]) == entry
    return entry
