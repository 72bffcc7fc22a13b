"""Issue 21's features through real server processes over stdio, in both eras: our client, and the
official SDK's clients (the legacy ``ClientSession`` and the 2026-07-28 ``mcp.Client``). One library
holds a typed prompt, a Dotprompt file, a skill and a multi-message prompt embedding a text and a
binary file."""

from __future__ import annotations

import base64

import anyio
import pytest
from mcp import MCPError as SDKError
from plainmcp import MCPError, connect_stdio

from tests.interop import sdk_client, sdk_modern

from .support import MODERN, stdio_command, text_of, write

LEGACY = "2025-11-25"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x02"


@pytest.fixture
def library(tmp_path):
    write(
        tmp_path,
        "ticket.md",
        """
        ---
        arguments:
          - {name: key, required: true, pattern: "^[A-Z]+-[0-9]+$"}
          - {name: points, type: integer, minimum: 1, maximum: 13, default: 3}
        ---
        Open {{key}} for {{points}} points.
        """,
    )
    write(
        tmp_path,
        "greeting.prompt",
        """
        ---
        input:
          schema:
            name?: string
            loud?: boolean
        ---
        {{role "user"}}Greet {{#if name}}{{name}}{{else}}the guest{{/if}}.
        {{role "model"}}{{#if loud}}HELLO!{{else}}Hello.{{/if}}
        """,
    )
    write(tmp_path, "skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy a repository\n---\nRemove dead code.")
    write(tmp_path, "skills/tidy/checklist.md", "- imports\n- comments\n")
    write(
        tmp_path, "diagram-review.md", "## User\nRules:\n\n{{> rules.txt}}\n\n{{> diagram.png}}\n\n## Assistant\nReady."
    )
    write(tmp_path, "rules.txt", "Be kind.")
    (tmp_path / "diagram.png").write_bytes(PNG)
    return tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("era", [LEGACY, MODERN])
async def test_our_client_over_stdio_uses_every_new_feature(library, era):
    async with connect_stdio(stdio_command(library), protocol_version=era) as client:
        assert client.modern == (era == MODERN)
        ticket = await client.get_prompt("ticket", {"key": "OPS-1"})
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("ticket", {"key": "OPS-1", "points": "40"})
        greeting = await client.get_prompt("greeting", {"name": "Ada", "loud": "TRUE"})
        skill = await client.get_prompt("tidy", {"request": "the src folder"})
        checklist = await client.read_resource("skill://tidy/checklist.md")
        review = await client.get_prompt("diagram-review")
        completed = await client.complete({"type": "ref/prompt", "name": "greeting"}, "loud", "")
    assert text_of(ticket["messages"][0]) == "Open OPS-1 for 3 points."
    assert (refused.value.code, refused.value.message) == (
        -32602,
        "Argument 'points' of prompt 'ticket' must be at most 13 (got '40')",
    )
    assert [(m["role"], text_of(m)) for m in greeting["messages"]] == [("user", "Greet Ada."), ("assistant", "HELLO!")]
    assert [text_of(m) for m in skill["messages"]] == ["Remove dead code.", "the src folder"]
    assert checklist["contents"][0]["text"] == "- imports\n- comments\n"
    kinds = [(m["role"], m["content"]["type"]) for m in review["messages"]]
    assert kinds == [("user", "text"), ("user", "resource"), ("user", "resource"), ("assistant", "text")]
    assert base64.b64decode(review["messages"][2]["content"]["resource"]["blob"]) == PNG
    assert completed["values"] == ["true", "false"]


@pytest.mark.anyio
async def test_official_sdk_legacy_client_over_stdio_uses_every_new_feature(library):
    async with sdk_client.connect(stdio_command(library)) as conn:
        with anyio.fail_after(15):
            ticket = await conn.session.get_prompt("ticket", {"key": "OPS-1", "points": "5"})
            with pytest.raises(SDKError) as refused:
                await conn.session.get_prompt("ticket", {"key": "ops-1"})
            greeting = await conn.session.get_prompt("greeting", {})
            checklist = await conn.session.read_resource("skill://tidy/checklist.md")
            review = await conn.session.get_prompt("diagram-review")
    assert ticket.messages[0].content.text == "Open OPS-1 for 5 points."
    assert refused.value.error.code == -32602
    assert "must match the pattern" in refused.value.error.message
    assert [m.content.text for m in greeting.messages] == ["Greet the guest.", "Hello."]
    assert checklist.contents[0].text == "- imports\n- comments\n"
    assert base64.b64decode(review.messages[2].content.resource.blob) == PNG


@pytest.mark.anyio
async def test_official_sdk_modern_client_over_stdio_uses_every_new_feature(library):
    async with sdk_modern.connect(stdio_command(library)) as conn:
        with anyio.fail_after(15):
            ticket = await conn.client.get_prompt("ticket", {"key": "OPS-1"})
            with pytest.raises(SDKError) as refused:
                await conn.client.get_prompt("ticket", {"key": "OPS-1", "points": "0"})
            skill = await conn.client.get_prompt("tidy", {})
            instructions = await conn.client.read_resource("skill://tidy/SKILL.md")
            review = await conn.client.get_prompt("diagram-review")
    assert ticket.messages[0].content.text == "Open OPS-1 for 3 points."
    assert refused.value.error.code == -32602
    assert refused.value.error.message == "Argument 'points' of prompt 'ticket' must be at least 1 (got '0')"
    assert [m.content.text for m in skill.messages] == ["Remove dead code."]
    assert instructions.contents[0].text.endswith("Remove dead code.")
    assert review.messages[1].content.resource.text == "Be kind."
    assert all(r.get("params", {}).get("_meta") for r in conn.wire.outbound_with("prompts/get"))
