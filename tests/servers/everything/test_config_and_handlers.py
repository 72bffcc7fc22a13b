"""The fixture built the way every server is: a checked `Config`, `build_server(config, deps)`, and handlers that
are module-level functions (or methods of the one stateful family), so each can be called alone.

The handlers are named like tests (``test_simple_text``): this file imports their modules, never the names, so
pytest does not collect them.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any, cast

import pytest
from plainmcp import Context, server_arguments
from plainmcp_everything import Config, build_server, changes, tools
from plainmcp_everything.config import ENV_PREFIX
from plainmcp_everything.server import NAME, Deps

pytestmark = pytest.mark.anyio


class FakeContext:
    """Stands in for `plainmcp.Context` where a handler only logs and publishes: records what it was told."""

    def __init__(self) -> None:
        self.said: list[tuple[str, Any]] = []

    async def info(self, data: Any, logger: str | None = None) -> None:
        self.said.append(("info", data))

    async def notify_resource_updated(self, uri: str) -> None:
        self.said.append(("updated", uri))

    async def notify_tools_changed(self) -> None:
        self.said.append(("tools changed", None))

    def as_context(self) -> Context:
        return cast(Context, self)


def only_text(result: Any) -> str:
    (block,) = result.content
    assert block["type"] == "text" and not result.is_error
    return block["text"]


@pytest.mark.parametrize("key", [b"k" * 31, b"", "k" * 32])
def test_config_refuses_a_state_key_too_short_or_not_bytes(key: Any) -> None:
    with pytest.raises(ValueError, match="^state_key: give at least 32 bytes"):
        Config(state_key=key)


def test_config_keeps_the_state_key_out_of_its_repr() -> None:
    config = Config(state_key=b"secret-key-material-of-32-bytes!")
    assert config.state_key == b"secret-key-material-of-32-bytes!"
    assert "secret" not in repr(config)


def test_command_line_gives_the_default_config() -> None:
    parser = server_arguments(NAME, env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    assert Config.from_args(parser.parse_args([])) == Config()


def test_version_option_prints_the_distribution_version(capsys: pytest.CaptureFixture[str]) -> None:
    # Imported here: the command's module defers the collector's passes (plainmcp.startup) until main()
    # runs, and a module-level import would do that for the whole test session from collection on.
    from plainmcp_everything.__main__ import main

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert importlib.metadata.version("plainmcp-everything") in capsys.readouterr().out


def test_registered_handlers_are_the_module_functions() -> None:
    server = build_server(Config(), Deps())
    assert server.tools["test_simple_text"].handler is tools.test_simple_text
    assert server.tools["json_schema_2020_12_tool"].input_schema is tools.JSON_SCHEMA_2020_12
    assert server.version == importlib.metadata.version("plainmcp-everything")


async def test_a_handler_runs_alone_with_a_fake_context() -> None:
    fake = FakeContext()
    result = await tools.test_tool_with_logging(fake.as_context(), {})
    assert only_text(result) == "Tool with logging executed successfully"
    assert fake.said == [("info", message) for message in tools.LOG_MESSAGES]


async def test_trigger_tools_change_only_their_own_server() -> None:
    """The state the trigger tools change is one `changes.Changes` per built server."""
    server, other = build_server(Config()), build_server(Config())
    fake = FakeContext()
    toggle = server.tools["test_trigger_tool_change"].handler
    assert only_text(await toggle(fake.as_context(), {})) == "Removed tool test_dynamic_tool"
    assert "test_dynamic_tool" not in server.tools and "test_dynamic_tool" in other.tools
    update = server.tools["test_trigger_resource_update"].handler
    assert only_text(await update(fake.as_context(), {})) == "Updated test://watched-resource to revision 1"
    assert fake.said == [("tools changed", None), ("updated", changes.WATCHED_URI)]
    read = server.resources[changes.WATCHED_URI].reader
    assert await read(fake.as_context(), changes.WATCHED_URI) == "Watched resource content (revision 1)"
    unchanged = other.resources[changes.WATCHED_URI].reader
    assert await unchanged(fake.as_context(), changes.WATCHED_URI) == "Watched resource content"
