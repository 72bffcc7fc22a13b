"""Live reload of the new formats (issue 21): a Dotprompt file dropped in, a file added to a skill,
a skill's instructions edited, seen by clients of both eras through real watchfiles."""

from __future__ import annotations

import pytest
from plainmcp.testing import connect_in_memory

from .support import LIVE_TIMEOUT, MODERN, text_of, write
from .test_live import PROMPTS_CHANGED, Inbox, Watched

RESOURCES_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
SKILL = "---\nname: tidy\ndescription: Tidy a repository\n---\nRemove dead code."


@pytest.mark.anyio
async def test_legacy_client_sees_a_dotprompt_file_and_a_skill_change(tmp_path):
    write(tmp_path, "skills/tidy/SKILL.md", SKILL)
    inbox = Inbox()
    watched = Watched(tmp_path)
    async with connect_in_memory(watched.server, on_notification=inbox) as client:
        await client.subscribe("skill://tidy/SKILL.md")
        await watched.caught_up()
        write(tmp_path, "hello.prompt", "Hello {{name}}")
        await inbox.wait(PROMPTS_CHANGED, 1)
        assert text_of((await client.get_prompt("hello", {"name": "Ada"}))["messages"][0]) == "Hello Ada"

        write(tmp_path, "skills/tidy/checklist.md", "- imports")
        await inbox.wait(RESOURCES_CHANGED, 2)
        uris = {resource["uri"] for resource in await client.list_all_resources()}
        assert "skill://tidy/checklist.md" in uris

        write(tmp_path, "skills/tidy/SKILL.md", SKILL + "\nThen run the tests.")
        await inbox.wait(UPDATED)
        instructions = await client.read_resource("skill://tidy/SKILL.md")
        assert instructions["contents"][0]["text"].endswith("Then run the tests.")


@pytest.mark.anyio
async def test_modern_listener_sees_a_dotprompt_file_dropped_in(tmp_path):
    watched = Watched(tmp_path)
    async with connect_in_memory(watched.server, protocol_version=MODERN) as client:
        async with client.listen(prompts=True) as subscription:
            await watched.caught_up()
            write(tmp_path, "hello.prompt", '{{role "model"}}Hi {{name}}')
            notification = await subscription.next(timeout=LIVE_TIMEOUT)
        assert notification.method == PROMPTS_CHANGED
        result = await client.get_prompt("hello", {"name": "Ada"})
    assert result["messages"] == [{"role": "assistant", "content": {"type": "text", "text": "Hi Ada"}}]
