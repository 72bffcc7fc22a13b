"""What a first-time user of the bridge meets: a model server that is not running is named with its URL
and what to check, and the scripted stand-in model starts as a command (a pipx install has no
``python -m`` for it)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from plainmcp_bridge.chat_apis import ModelError
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy


@pytest.mark.anyio
async def test_cannot_connect_names_the_url_and_a_hint() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once the socket closes
    base = f"http://127.0.0.1:{port}"
    chat_settings = ModelSettings(api="ollama", model="m", base_url=base, retry=RetryPolicy(attempts=1, base=0.01))
    async with ChatModel(chat_settings) as chat:
        with pytest.raises(ModelError) as raised:
            await chat.complete([{"role": "user", "content": "hi"}])
    message = str(raised.value)
    assert f"cannot connect to {base}/api/chat" in message
    assert "ollama serve" in message and "--base-url" in message


def test_standin_model_starts_as_a_command(tmp_path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "hello"}]))
    command = Path(sys.executable).parent / "plainmcp-bridge-standin"
    process = subprocess.Popen([str(command), str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        answer = httpx.post(f"{url}/api/chat", json={"model": "m", "messages": [], "stream": False}, timeout=10)
        assert answer.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
