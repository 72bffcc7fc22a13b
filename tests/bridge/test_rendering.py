"""The tools described once when the model server renders them (issue 28.4): the bridge asks llama-server's
``/props`` (``chat_template_caps.supports_tools``) or Ollama's ``/api/show`` (``capabilities``) before the first
turn, and leaves the tools out of its prompt's words when the template shows them. Served here by a real HTTP
server on 127.0.0.1 answering as llama-server 11434.0.0 does (its ``/props`` shape, recorded); the real
llama-server's own answer for SmolLM2 is checked in test_real_model.py."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from plainmcp_bridge.agent import Bridge, BridgeOptions
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.prompt import TEXT_CALLS
from plainmcp_bridge.rendering import props_url, renders_tools_from
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.toolbox import open_toolbox

from .test_agent import SAMPLE

pytestmark = pytest.mark.anyio

#: llama-server 11434.0.0's /props for SmolLM2-135M (a template without tools), the part read.
SMOLLM2_CAPS = {
    "supports_object_arguments": False,
    "supports_parallel_tool_calls": False,
    "supports_string_content": True,
    "supports_system_role": True,
    "supports_tool_calls": False,
    "supports_tools": False,
    "supports_typed_content": False,
}


def test_rendering_is_read_from_llama_servers_props_and_ollamas_show() -> None:
    assert renders_tools_from("openai", {"chat_template_caps": SMOLLM2_CAPS}) is False
    assert renders_tools_from("openai", {"chat_template_caps": {**SMOLLM2_CAPS, "supports_tools": True}}) is True
    assert renders_tools_from("ollama", {"capabilities": ["completion", "tools"]}) is True
    assert renders_tools_from("ollama", {"capabilities": ["completion"]}) is False
    # Anything else cannot say: the tools stay described in words.
    assert renders_tools_from("openai", {"chat_template_caps": {"supports_tools": "yes"}}) is None
    assert renders_tools_from("openai", ["supports_tools"]) is None
    assert renders_tools_from("ollama", {}) is None
    assert props_url("http://127.0.0.1:8080/v1") == props_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/props"


@contextmanager
def llama_like(supports_tools: bool | None) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A server on 127.0.0.1 answering /props (404 when ``supports_tools`` is None) and chat completions
    (one answer in words, not streamed); yields its base URL and the chat request bodies it received."""
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, document: Any) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/props" and supports_tools is not None:
                self._send(200, {"chat_template_caps": {**SMOLLM2_CAPS, "supports_tools": supports_tools}})
            else:
                self._send(404, {"error": {"message": "File Not Found"}})

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            message = {"role": "assistant", "content": "The books table has 25 rows."}
            self._send(200, {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()
        server.server_close()


async def system_prompt_sent(tmp_path: Path, supports_tools: bool | None) -> tuple[str, dict[str, Any], Bridge]:
    database = tmp_path / "shop.db"
    shutil.copy(SAMPLE, database)
    spec = ServerSpec("sqlite", command=(sys.executable, "-m", "plainmcp_sqlite", "--db", str(database)))
    with llama_like(supports_tools) as (url, bodies):
        settings = ModelSettings(api="openai", model="local", base_url=url, stream=False, constrain="off")
        async with open_toolbox([spec], stderr="discard") as toolbox, ChatModel(settings) as chat:
            conversation = Bridge(toolbox, chat, BridgeOptions())
            await conversation.ask("How many rows has the books table?")
        body = bodies[0]
    return body["messages"][0]["content"], body, conversation


@pytest.mark.parametrize(
    ("supports_tools", "described"), [(True, False), (False, True), (None, True)], ids=["renders", "drops", "silent"]
)
async def test_tools_are_described_once_when_the_server_renders_them(
    tmp_path: Path, supports_tools: bool | None, described: bool
) -> None:
    system, body, conversation = await system_prompt_sent(tmp_path, supports_tools)
    assert conversation.renders_tools is supports_tools
    # The tools always go as the API's tools; the words describe them only when no template shows them.
    assert [tool["function"]["name"] for tool in body["tools"]][:1] == ["query"]
    assert ("describe_table:" in system) is described
    assert ("You must give: table" in system) is described
    assert (TEXT_CALLS in system) is described  # the template's own call format, not the bridge's tags
