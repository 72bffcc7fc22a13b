"""Wiring: the library, served as prompts, source resources and two tools, kept live by a watcher.

``build_server`` reads the library directories once, so the first request already sees every
prompt; it starts nothing. Watching is a background task, run only while the server is served.
"""

from __future__ import annotations

from dataclasses import dataclass

from plainmcp import Server

from . import tools
from .catalog import Catalog
from .completion import History
from .config import Config
from .library import Library
from .watch import watch_library

NAME = "plainmcp-prompts"
VERSION = "0.1.0"

INSTRUCTIONS = (
    "A library of prompts kept as Markdown files. Use them as MCP prompts (prompts/list, prompts/get), "
    "or through the tools list_prompts and render_prompt. Each prompt's source is the resource "
    "prompts://source/<name>."
)


@dataclass(frozen=True, slots=True)
class Deps:
    """What the server uses from outside; tests may pass their own."""

    library: Library | None = None
    history: History | None = None


def build_server(config: Config | None = None, deps: Deps | None = None) -> Server:
    """The prompt server for ``config``. Reads the prompt files (warnings go to stderr), starts
    nothing: the watcher runs while a transport serves the server."""
    config = config or Config()
    deps = deps or Deps()
    library = deps.library or Library(
        config.library_dirs, max_files=config.max_files, max_file_bytes=config.max_file_bytes
    )
    history = deps.history or History(config.history)
    server = Server(
        NAME,
        VERSION,
        title="Prompt library",
        description="Prompts kept as Markdown files, served live as MCP prompts",
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
        # The library may be empty when a client connects and fill up later, while capabilities
        # are fixed at the handshake: prompts and resources are declared either way.
        declare={"prompts", "resources"},
    )
    catalog = Catalog(server, library, history)
    library.scan()
    catalog.install()
    tools.register(server, catalog)
    server.catalog = catalog  # type: ignore[attr-defined]  # for tests and embedding applications

    if config.watch:

        @server.background
        async def watch(served: Server) -> None:
            await watch_library(catalog, config.debounce_ms)

    return server
