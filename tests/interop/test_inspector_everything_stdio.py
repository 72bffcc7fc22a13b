"""The official Inspector CLI against the conformance fixture ``plainmcp-everything`` over stdio, in
both eras (the HTTP side is in test_inspector_http.py, with the same expected values)."""

from __future__ import annotations

import sys

import pytest

from . import test_inspector_cli as stdio_cli
from .test_inspector_http import SIMPLE_PROMPT, SIMPLE_TEXT, STATIC_TEXT, TOOL_NAMES

# The stdio Inspector runner and the era parameter, shared with test_inspector_cli.py.
inspector = stdio_cli.inspector
era = stdio_cli.era
only_text = stdio_cli.only_text

pytestmark = pytest.mark.interop

EVERYTHING = [sys.executable, "-m", "plainmcp_everything"]
ERA_VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}


def test_initialize_names_the_fixture_and_the_era_version(inspector, era):
    result = inspector.run(EVERYTHING, "--method", "initialize", era=era).result
    assert result["protocolVersion"] == ERA_VERSIONS[era]
    assert result["serverInfo"]["name"] == "plainmcp-everything"


def test_tools_list_names_every_fixture_tool(inspector, era):
    tools = inspector.run(EVERYTHING, "--method", "tools/list", era=era).result["tools"]
    assert [tool["name"] for tool in tools] == TOOL_NAMES


def test_simple_text_tool(inspector, era):
    result = inspector.run(
        EVERYTHING, "--method", "tools/call", "--tool-name", "test_simple_text", "--tool-args-json", "{}", era=era
    ).result
    assert only_text(result) == SIMPLE_TEXT


def test_static_text_resource(inspector, era):
    result = inspector.run(EVERYTHING, "--method", "resources/read", "--uri", "test://static-text", era=era).result
    assert result["contents"][0]["text"] == STATIC_TEXT


def test_simple_prompt(inspector, era):
    result = inspector.run(EVERYTHING, "--method", "prompts/get", "--prompt-name", "test_simple_prompt", era=era).result
    assert result["messages"][0]["content"]["text"] == SIMPLE_PROMPT
