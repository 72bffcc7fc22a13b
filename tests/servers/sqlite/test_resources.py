"""Resources, completion, prompts, and subscriptions fed by the real file watcher."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from plainmcp import MCPError

from .support import WAIT, answering, make_shop, serve

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


async def test_resources_list_schema_and_table_template(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        resources = await client.list_all_resources()
        templates = await client.list_all_resource_templates()
        schema = await client.read_resource("sqlite://schema")
    assert [r["uri"] for r in resources] == ["sqlite://schema"]
    assert sorted(t["uriTemplate"] for t in templates) == ["sqlite://result/{query}", "sqlite://table/{table}"]
    text = schema["contents"][0]["text"]
    assert schema["contents"][0]["mimeType"] == "application/sql"
    assert text.index("CREATE TABLE customers") < text.index("CREATE VIEW big_orders") < text.index("CREATE INDEX")


async def test_table_resource_describes_and_samples(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        read = await client.read_resource("sqlite://table/odd%20%22name%22")
        customers = json.loads((await client.read_resource("sqlite://table/customers"))["contents"][0]["text"])
        with pytest.raises(MCPError) as missing:
            await client.read_resource("sqlite://table/nope")
    assert json.loads(read["contents"][0]["text"])["name"] == 'odd "name"'
    assert customers["sample_rows"][0] == {"id": 1, "name": "Ada", "city": "London"}
    assert missing.value.code == -32002


async def test_table_completion_from_catalogue(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        completion = await client.complete({"type": "ref/resource", "uri": "sqlite://table/{table}"}, "table", "O")
    assert completion["values"] == ['odd "name"', "orders"]


async def test_prompts_embed_the_schema(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        prompts = await client.list_all_prompts()
        answer = await client.get_prompt("answer_question", {"question": "Who spends most?"})
    assert [p["name"] for p in prompts] == ["explore_database", "answer_question"]
    embedded, ask = answer["messages"]
    assert "CREATE TABLE orders" in embedded["content"]["resource"]["text"]
    assert "Who spends most?" in ask["content"]["text"]


async def test_sample_database_is_served_without_db(tmp_path):
    async with serve(None) as client:
        result = await client.call_tool("query", {"sql": "SELECT count(*) FROM books"})
        refused = await client.call_tool("query", {"sql": "DELETE FROM books"})
    assert result["structuredContent"]["rows"] == [[25]]
    assert refused["isError"] is True


def write_from_another_process(path, sql: str) -> None:
    script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit(); c.close()"
    subprocess.run([sys.executable, "-c", script, str(path), sql], check=True, timeout=WAIT)


async def test_legacy_subscription_hears_another_process_write(tmp_path):
    path = make_shop(tmp_path)
    updates: list[str] = []
    changed = anyio.Event()

    async def on_notification(notification):
        if notification.method == "notifications/resources/updated":
            updates.append(notification.params["uri"])
            changed.set()

    async with serve(path, on_notification=on_notification) as client:
        await client.subscribe("sqlite://table/customers")
        await anyio.sleep(0.3)  # the watcher starts on the subscription
        await anyio.to_thread.run_sync(write_from_another_process, path, "INSERT INTO customers (name) VALUES ('Eve')")
        with anyio.fail_after(WAIT):
            await changed.wait()
    assert updates[0] == "sqlite://table/customers"


async def test_modern_listen_hears_the_execute_tool(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, protocol_version=MODERN, elicitation=answering("accept")) as client:
        async with client.listen(uris=["sqlite://schema"]) as subscription:
            await anyio.sleep(0.3)
            result = await client.call_tool("execute", {"sql": "CREATE TABLE added (x)"})
            assert not result.get("isError")
            notification = await subscription.next(timeout=WAIT)
    assert notification.method == "notifications/resources/updated"
    assert notification.params["uri"] == "sqlite://schema"


async def test_watch_ignores_file_events_without_new_data(tmp_path):
    # A checkpoint-like touch of the file that commits nothing must not notify; a real commit must.
    path = make_shop(tmp_path)
    updates: list[str] = []

    async def on_notification(notification):
        if notification.method == "notifications/resources/updated":
            updates.append(notification.params["uri"])

    async with serve(path, on_notification=on_notification) as client:
        await client.subscribe("sqlite://schema")
        await anyio.sleep(0.3)
        (tmp_path / "shop.db-journal").write_bytes(b"")
        (tmp_path / "shop.db-journal").unlink()
        await anyio.sleep(0.5)
        assert updates == []
        await anyio.to_thread.run_sync(write_from_another_process, path, "DELETE FROM orders WHERE id = 2")
        with anyio.fail_after(WAIT):
            while not updates:
                await anyio.sleep(0.05)
    assert updates == ["sqlite://schema"]
