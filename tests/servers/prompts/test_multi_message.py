"""Multi-message prompts with embedded resources (issue 21): turns, text and binary files of the
library embedded as resource blocks in the turn that names them, path-safe at every render, in both
eras."""

from __future__ import annotations

import base64
import os

import pytest
from plainmcp import MCPError
from plainmcp.testing import connect_in_memory
from plainmcp_prompts.library import Library
from plainmcp_prompts.template import MAX_EMBED_BYTES

from .support import MODERN, server_over, write

ERAS = ["2025-11-25", MODERN]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\xff"

REVIEW = """
    ---
    description: Review a design against the house rules
    arguments:
      - name: design
        required: true
      - name: depth
        values: [quick, thorough]
        default: quick
    ---
    ## User
    Here are our rules:

    {{> rules/house.md}}

    And the current diagram:

    {{> diagrams/current.png}}

    ## Assistant
    I have the rules and the diagram. What is the design?

    ## User
    {{design}} ({{depth}} review)
    """


@pytest.fixture
def library(tmp_path):
    write(tmp_path, "review.md", REVIEW)
    write(tmp_path, "rules/house.md", "# House rules\n\nNo global state.\n")
    (tmp_path / "diagrams").mkdir()
    (tmp_path / "diagrams/current.png").write_bytes(PNG)
    return tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_multi_message_prompt_embeds_text_and_binary_files_in_their_turns(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        result = await client.get_prompt("review", {"design": "A cache per request"})
    messages = result["messages"]
    assert [(m["role"], m["content"]["type"]) for m in messages] == [
        ("user", "text"),
        ("user", "resource"),
        ("user", "text"),
        ("user", "resource"),
        ("assistant", "text"),
        ("user", "text"),
    ]
    assert messages[0]["content"]["text"] == "Here are our rules:"
    assert messages[1]["content"]["resource"] == {
        "uri": "prompts://file/rules/house.md",
        "mimeType": "text/markdown",
        "text": "# House rules\n\nNo global state.\n",
    }
    diagram = messages[3]["content"]["resource"]
    assert (diagram["uri"], diagram["mimeType"]) == ("prompts://file/diagrams/current.png", "image/png")
    assert base64.b64decode(diagram["blob"]) == PNG
    assert messages[5]["content"]["text"] == "A cache per request (quick review)"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_render_prompt_tool_names_a_binary_embed_and_carries_it_in_structured_content(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        result = await client.call_tool("render_prompt", {"name": "review", "arguments": {"design": "X"}})
    text = result["content"][0]["text"]
    assert "prompts://file/diagrams/current.png: a image/png file (in structuredContent)" in text
    assert "## Assistant\n\nI have the rules and the diagram." in text
    blob = result["structuredContent"]["messages"][3]["content"]["resource"]["blob"]
    assert base64.b64decode(blob) == PNG


@pytest.mark.anyio
async def test_binary_embed_swapped_for_a_link_out_after_the_scan_is_refused(library, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.png"
    outside.write_bytes(b"\x89PNG secret")
    async with connect_in_memory(server_over(library)) as client:
        (library / "diagrams/current.png").unlink()
        os.symlink(outside, library / "diagrams/current.png")
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("review", {"design": "X"})
    assert caught.value.code == -32603
    assert caught.value.message == (
        "Prompt 'review' cannot be rendered: embedded file 'diagrams/current.png' is outside the library directory"
    )
    assert str(tmp_path_factory.getbasetemp()) not in caught.value.message


def test_binary_embed_over_the_limit_skips_the_file_at_its_line(tmp_path, caplog):
    write(tmp_path, "p.md", "Look:\n\n{{> big.png}}\n")
    (tmp_path / "big.png").write_bytes(b"\x89PNG" + b"\x00" * MAX_EMBED_BYTES)
    library = Library([tmp_path])
    library.scan()
    assert library.prompts == {}
    assert [(problem.line, problem.message) for problem in library.problems] == [
        (3, f"embedded file 'big.png' is larger than {MAX_EMBED_BYTES // 1024} KiB; the file is skipped")
    ]


def test_a_text_file_that_is_not_utf8_is_still_refused(tmp_path):
    write(tmp_path, "p.md", "{{> notes.txt}}\n")
    (tmp_path / "notes.txt").write_bytes(b"caf\xe9")
    library = Library([tmp_path])
    library.scan()
    assert library.prompts == {}
    assert "embedded file 'notes.txt' is not UTF-8 text" in library.problems[0].message


def test_a_binary_embed_edited_is_a_change(library):
    lib = Library([library])
    lib.scan()
    assert lib.scan() is False
    (library / "diagrams/current.png").write_bytes(PNG + b"\x00")
    assert lib.scan() is True
