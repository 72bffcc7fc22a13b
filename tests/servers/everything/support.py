"""Helpers for the everything-server tests: a client in either era, recorded traffic, raw modern requests.

The expected values live in the tests themselves, spelled as the conformance suite spells them; nothing
here is imported from the server.
"""

from __future__ import annotations

import base64
import io
import struct
import sys
import wave
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from plainmcp.testing import connect_in_memory
from plainmcp_everything import Config, build_server

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ERAS = (LEGACY, MODERN)

#: How the tests start the server over stdio: the installed package, run by the tests' interpreter.
STDIO_COMMAND = [sys.executable, "-m", "plainmcp_everything"]

#: Bound for an exchange that should be instant; the slowest fixture takes about 0.1 s.
QUICK = 5.0

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

#: What the conformance harness answers, in every MRTR scenario.
SAMPLING_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "The capital of France is Paris."},
    "model": "test-model",
    "stopReason": "endTurn",
}
ROOTS = [{"uri": "file:///test/root", "name": "Test Root"}]


def elicit_answer(**fields: Any) -> dict[str, Any]:
    return {"action": "accept", "content": fields}


#: What a user types into each field the fixtures ask for.
FORM_VALUES = {"name": "Alice", "color": "blue", "ok": True, "context": "test context", "value": "v", "continue": True}


def fill_form(params: dict[str, Any]) -> dict[str, Any]:
    """Accept an elicitation, filling every requested field from FORM_VALUES."""
    return elicit_answer(**{key: FORM_VALUES[key] for key in params["requestedSchema"]["properties"]})


def only_text(result: dict[str, Any]) -> str:
    """The text of a result that must be exactly one text block."""
    (block,) = result["content"]
    assert block["type"] == "text", block
    return block["text"]


@dataclass
class Recorder:
    """What the server sent that was not a response: notifications and, through the client's callbacks,
    its requests for input, in order."""

    notifications: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: A fixed answer, or a function of the request's params.
    elicitation_answer: Any = field(default_factory=lambda: elicit_answer(name="Alice"))
    sampling_answer: dict[str, Any] = field(default_factory=lambda: dict(SAMPLING_ANSWER))

    def on_notification(self, notification: Any) -> None:
        self.notifications.append((notification.method, notification.params or {}))

    async def sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("sampling/createMessage", params))
        return self.sampling_answer

    async def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("elicitation/create", params))
        if callable(self.elicitation_answer):
            return self.elicitation_answer(params)
        return self.elicitation_answer

    def params_of(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.notifications if name == method]

    def methods(self) -> list[str]:
        return [name for name, _ in self.notifications]

    async def wait_for(self, method: str, count: int = 1, timeout: float = QUICK) -> list[dict[str, Any]]:
        with anyio.fail_after(timeout):
            while len(self.params_of(method)) < count:
                await anyio.sleep(0.005)
        return self.params_of(method)

    def client_options(self, *, sampling: bool = True, elicitation: bool = True, roots: bool = True) -> dict[str, Any]:
        """Callbacks for a :class:`plainmcp.Client`; each one given declares its capability."""
        options: dict[str, Any] = {"on_notification": self.on_notification}
        if sampling:
            options["sampling"] = self.sampling
        if elicitation:
            options["elicitation"] = self.elicitation
        if roots:
            options["roots"] = ROOTS
        return options


@asynccontextmanager
async def connect(era: str, recorder: Recorder | None = None, server: Any = None, **options: Any) -> AsyncIterator[Any]:
    """A plainmcp client in ``era``, in memory, with every input capability unless told otherwise."""
    recorder = recorder or Recorder()
    capabilities = {key: options.pop(key) for key in ("sampling", "elicitation", "roots") if key in options}
    client_options = {**recorder.client_options(**capabilities), **options}
    server = server or build_server(Config())
    with anyio.fail_after(30):
        async with connect_in_memory(server, protocol_version=era, **client_options) as client:
            yield client


def envelope(capabilities: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A 2026-07-28 request ``_meta`` as the conformance harness sends it."""
    return {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: capabilities,
        CLIENT_INFO: {"name": "conformance-test-client", "version": "1.0.0"},
        **extra,
    }


HARNESS_CAPABILITIES = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}


async def raw(client: Any, method: str, params: dict[str, Any], capabilities: dict[str, Any] | None = None) -> Any:
    """One modern request exactly as given (no automatic answering of ``input_required``).

    Raises MCPError for an error response."""
    meta = envelope(HARNESS_CAPABILITIES if capabilities is None else capabilities)
    with anyio.fail_after(QUICK):
        return await client.session.request(method, {**params, "_meta": meta})


def png_size(data_b64: str) -> tuple[int, int]:
    """(width, height) of a base64 PNG, after checking its signature, every chunk's CRC and that the pixel
    data inflates to one scanline per row (a filter byte, then three bytes per RGB pixel)."""
    data = base64.b64decode(data_b64, validate=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, kinds, pixels = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind, body = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        kinds.append(kind)
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            pixels += body
        position += 12 + length
    assert kinds[0] == b"IHDR" and b"IDAT" in kinds and kinds[-1] == b"IEND"
    width, height = size
    assert len(zlib.decompress(pixels)) == height * (1 + 3 * width)  # zlib checks its own Adler-32
    return size


def wav_parameters(data_b64: str) -> Any:
    with wave.open(io.BytesIO(base64.b64decode(data_b64, validate=True))) as audio:
        return audio.getparams()


#: Every tool of the fixture, in listing order (also used by the interop tests).
TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_logging_tool",
    "test_tool_with_progress",
    "test_error_handling",
    "test_reconnection",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_custom_header",
    "test_missing_capability",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_streaming_elicitation",
    "test_dynamic_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_trigger_resource_change",
    "test_trigger_resource_update",
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
]
