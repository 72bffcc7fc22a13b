"""The server over the in-memory transport: prompts, arguments, completion, sources, tools."""

from __future__ import annotations

import dataclasses

import pytest
from plainmcp import MCPError
from plainmcp.testing import connect_in_memory
from plainmcp_prompts.completion import History
from plainmcp_prompts.config import Config
from plainmcp_prompts.server import build_server, default_deps
from plainmcp_prompts.template import MAX_RENDER_BYTES

from .support import GREETING, MODERN, config_over, server_and_deps, server_over, text_of, write

ERAS = ["2025-11-25", MODERN]


@pytest.fixture
def library(tmp_path):
    write(tmp_path, "greet.md", GREETING)
    write(tmp_path, "plain.md", "# Plain\n\nNo arguments here.\n")
    write(tmp_path, "snippets/style.txt", "Be brief.")
    write(
        tmp_path,
        "chat.md",
        """
        ---
        description: A conversation
        arguments: [topic]
        ---
        ## User
        Tell me about {{topic}}.

        {{> snippets/style.txt}}

        ## Assistant
        What about {{topic}}?

        ## User
        Everything.
        """,
    )
    return tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_prompts_list_shows_every_prompt_with_arguments(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        prompts = await client.list_all_prompts()
    assert [p["name"] for p in prompts] == ["chat", "greet", "plain"]
    greet = prompts[1]
    assert greet == {
        "name": "greet",
        "description": "Greet someone",
        "arguments": [
            {"name": "who", "required": True},
            {"name": "tone", "description": "One of: warm, formal. Default: warm."},
        ],
    }
    assert prompts[2] == {"name": "plain", "description": "Plain"}


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_prompts_get_renders_with_arguments_and_defaults(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        result = await client.get_prompt("greet", {"who": "Ada"})
        formal = await client.get_prompt("greet", {"who": "Ada", "tone": "formal"})
        plain = await client.get_prompt("plain")
    assert result["description"] == "Greet someone"
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Say hello to Ada, warmly."}}]
    assert text_of(formal["messages"][0]) == "Say hello to Ada, formally."
    assert text_of(plain["messages"][0]) == "# Plain\n\nNo arguments here."


@pytest.mark.anyio
async def test_prompts_get_multi_turn_with_an_embedded_resource(library):
    async with connect_in_memory(server_over(library)) as client:
        result = await client.get_prompt("chat", {"topic": "owls"})
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Tell me about owls."}},
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {"uri": "prompts://file/snippets/style.txt", "mimeType": "text/plain", "text": "Be brief."},
            },
        },
        {"role": "assistant", "content": {"type": "text", "text": "What about owls?"}},
        {"role": "user", "content": {"type": "text", "text": "Everything."}},
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("greet", None, "Missing required argument for prompt 'greet': who"),
        ("greet", {"who": ""}, "Missing required argument for prompt 'greet': who"),
        (
            "greet",
            {"who": "Ada", "tone": "rude"},
            "Argument 'tone' of prompt 'greet' must be one of: warm, formal (got 'rude')",
        ),
        ("greet", {"who": "Ada", "mood": "x"}, "Prompt 'greet' has no argument 'mood'; it takes: who, tone"),
        ("nope", None, "Unknown prompt: nope"),
    ],
)
async def test_prompts_get_bad_arguments_are_invalid_params_naming_them(library, era, name, arguments, message):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt(name, arguments)
    assert caught.value.code == -32602
    assert caught.value.message == message


@pytest.mark.anyio
async def test_prompts_get_embed_gone_is_an_error_without_host_paths(library):
    async with connect_in_memory(server_over(library)) as client:
        (library / "snippets" / "style.txt").unlink()  # after the library was read: no watcher saw it
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("chat", {"topic": "x"})
    assert caught.value.code == -32603
    assert caught.value.message == (
        "Prompt 'chat' cannot be rendered: embedded file 'snippets/style.txt' does not "
        "exist or is not a readable regular file"
    )
    assert str(library) not in caught.value.message


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_completion_offers_allowed_values_then_values_used_before(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        ref = {"type": "ref/prompt", "name": "greet"}
        assert (await client.complete(ref, "tone", ""))["values"] == ["warm", "formal"]
        assert (await client.complete(ref, "tone", "F"))["values"] == ["formal"]
        assert (await client.complete(ref, "who", ""))["values"] == []
        await client.get_prompt("greet", {"who": "Ada"})
        await client.get_prompt("greet", {"who": "Alan"})
        await client.get_prompt("greet", {"who": "Grace"})
        assert (await client.complete(ref, "who", ""))["values"] == ["Grace", "Alan", "Ada"]
        assert (await client.complete(ref, "who", "a"))["values"] == ["Alan", "Ada"]
        with pytest.raises(MCPError) as caught:
            await client.complete(ref, "nothing", "")
        assert caught.value.code == -32602


@pytest.mark.anyio
async def test_completion_history_can_be_turned_off(library):
    async with connect_in_memory(server_over(library, history=0)) as client:
        await client.get_prompt("greet", {"who": "Ada"})
        assert (await client.complete({"type": "ref/prompt", "name": "greet"}, "who", ""))["values"] == []


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_each_prompt_source_is_a_resource(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        resources = await client.list_all_resources()
        read = await client.read_resource("prompts://source/greet")
        with pytest.raises(MCPError) as caught:
            await client.read_resource("prompts://source/nope")
    assert [r["uri"] for r in resources] == [
        "prompts://source/chat",
        "prompts://source/greet",
        "prompts://source/plain",
    ]
    assert resources[1]["mimeType"] == "text/markdown"
    assert resources[1]["description"] == "The source of prompt 'greet': plainmcp file greet.md"
    assert read["contents"] == [
        {"uri": "prompts://source/greet", "mimeType": "text/markdown", "text": (library / "greet.md").read_text()}
    ]
    assert caught.value.code == (-32602 if era == MODERN else -32002)


@pytest.mark.anyio
async def test_list_prompts_tool_filters_by_tag_and_query(tmp_path):
    write(tmp_path, "a.md", "---\ntags: [git]\ndescription: Commit things\n---\nA")
    write(tmp_path, "b.md", "---\ntags: [code]\ndescription: Review things\n---\nB {{x}}")
    async with connect_in_memory(server_over(tmp_path)) as client:
        everything = await client.call_tool("list_prompts", {})
        by_tag = await client.call_tool("list_prompts", {"tag": "git"})
        by_query = await client.call_tool("list_prompts", {"query": "REVIEW"})
    assert [p["name"] for p in everything["structuredContent"]["prompts"]] == ["a", "b"]
    assert [p["name"] for p in by_tag["structuredContent"]["prompts"]] == ["a"]
    assert by_query["structuredContent"]["prompts"] == [
        {
            "name": "b",
            "description": "Review things",
            "tags": ["code"],
            "format": "plainmcp",
            "arguments": [{"name": "x", "required": True}],
        }
    ]
    assert by_query["content"][0]["text"] == "1 prompt:\n- b(x): Review things"


@pytest.mark.anyio
async def test_render_prompt_tool_gives_the_same_messages_as_prompts_get(library):
    async with connect_in_memory(server_over(library)) as client:
        via_prompt = await client.get_prompt("chat", {"topic": "owls"})
        via_tool = await client.call_tool("render_prompt", {"name": "chat", "arguments": {"topic": "owls"}})
    assert not via_tool.get("isError")
    assert via_tool["structuredContent"]["messages"] == via_prompt["messages"]
    assert via_tool["content"][0]["text"].startswith(
        "## User\n\nTell me about owls.\n\nprompts://file/snippets/style.txt:"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "nope"}, "No prompt named 'nope'. Call list_prompts to see the names."),
        ({"name": "greet"}, "Missing required argument for prompt 'greet': who"),
        (
            {"name": "greet", "arguments": {"who": "A", "tone": "x"}},
            "Argument 'tone' of prompt 'greet' must be one of: warm, formal (got 'x')",
        ),
    ],
)
async def test_render_prompt_tool_failures_are_tool_errors(library, arguments, message):
    async with connect_in_memory(server_over(library)) as client:
        result = await client.call_tool("render_prompt", arguments)
    assert result["isError"] is True
    assert result["content"][0]["text"] == message


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_empty_library_still_declares_prompts_and_lists_nothing(tmp_path, era):
    async with connect_in_memory(server_over(tmp_path), protocol_version=era) as client:
        assert await client.list_all_prompts() == []
        capabilities = client.server_capabilities
    assert capabilities["prompts"] == {"listChanged": True}
    assert "completions" in capabilities


@pytest.mark.anyio
async def test_bundled_library_is_served_and_can_be_overridden(tmp_path):
    write(tmp_path, "mine.md", "---\nname: summarize\ndescription: Mine\n---\nMy own summary")
    async with connect_in_memory(build_server(Config(dirs=(str(tmp_path),), watch=False))) as client:
        prompts = {p["name"]: p for p in await client.list_all_prompts()}
    assert {"code-review", "commit-message", "sql-from-question", "bug-triage"} <= prompts.keys()
    assert prompts["summarize"]["description"] == "Mine"


@pytest.mark.anyio
async def test_a_placeholder_repeated_thousands_of_times_is_refused_before_it_is_built(tmp_path):
    # 20,000 placeholders and a 64 KiB value would be 1.3 GB of text: refused by its size first.
    write(tmp_path, "amplify.md", "{{v}} " * 20_000)
    async with connect_in_memory(server_over(tmp_path)) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("amplify", {"v": "x" * 65_536})
        assert caught.value.code == -32602
        assert f"larger than {MAX_RENDER_BYTES} bytes once encoded" in caught.value.message
        short = await client.get_prompt("amplify", {"v": "ok"})
    assert short["messages"][0]["content"]["text"].startswith("ok ok ")


@pytest.mark.anyio
async def test_quoted_values_in_argument_errors_are_bounded(library):
    async with connect_in_memory(server_over(library)) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("greet", {"who": "Ada", "tone": "r" * 60_000})
    assert caught.value.code == -32602
    assert len(caught.value.message) < 300


@pytest.mark.anyio
async def test_build_server_reads_no_file_the_library_is_read_as_serving_starts(tmp_path, caplog):
    server, deps = server_and_deps(tmp_path)
    write(tmp_path, "greet.md", GREETING)  # after build_server, before serving: still served
    write(tmp_path, "broken.md", "---\narguments: [who\n---\nBroken")
    assert deps.library.prompts == {} and "broken.md" not in caplog.text
    async with connect_in_memory(server) as client:
        assert [p["name"] for p in await client.list_all_prompts()] == ["greet"]
    assert list(deps.library.prompts) == ["greet"]
    assert "broken.md" in caplog.text  # reported by the first scan, as serving started


@pytest.mark.anyio
async def test_completion_uses_the_history_passed_in_deps(library):
    config = config_over(library)
    history = History(5)
    history.remember("greet", {"who": "Hopper"})
    server = build_server(config, dataclasses.replace(default_deps(config), history=history))
    async with connect_in_memory(server) as client:
        await client.get_prompt("greet", {"who": "Lovelace"})
        completed = await client.complete({"type": "ref/prompt", "name": "greet"}, "who", "")
    assert completed["values"] == ["Lovelace", "Hopper"]
    assert history.recent("greet", "who") == ["Lovelace", "Hopper"]


@pytest.mark.anyio
async def test_serving_a_server_again_reads_the_library_again(tmp_path):
    server = server_over(tmp_path)
    async with connect_in_memory(server) as client:
        assert await client.list_all_prompts() == []
    write(tmp_path, "greet.md", GREETING)
    async with connect_in_memory(server) as client:
        assert [p["name"] for p in await client.list_all_prompts()] == ["greet"]
