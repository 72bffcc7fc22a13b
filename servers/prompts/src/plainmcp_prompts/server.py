"""Wiring: the library, served as prompts, resources (sources, skills' files) and two tools, kept
live by a watcher.

``build_server`` is a pure factory: it reads no file and starts nothing. The library is read when
the server starts being served, before the first request is taken, and then watched (the server's
background task, :class:`.watch.LibraryUpkeep`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plainmcp import Server

from . import __version__, tools
from .catalog import Catalog
from .completion import History
from .config import Config
from .library import Library
from .skill_extension import SkillsExtension
from .watch import LibraryUpkeep

NAME = "plainmcp-prompts"
DESCRIPTION = "Serve a prompt library kept as Markdown files: MCP prompts with arguments, completion and live reload."
INSTRUCTIONS = (
    "A library of prompts kept as Markdown files. Use them as MCP prompts (prompts/list, prompts/get), "
    "or through the tools list_prompts and render_prompt. Each prompt's source is the resource "
    "prompts://source/<name>; each skill's files are the resources skill://<name>/<path>, and the "
    "skills are listed with their files' digests by the io.modelcontextprotocol/skills extension "
    "(skills/list, skills/get)."
)


@dataclass(frozen=True, slots=True)
class Deps:
    """What the server uses outside its registry; tests and embedders pass their own (start from
    :func:`default_deps` and ``dataclasses.replace`` a field).

    Args:
        library: the prompt files (scanned when the server is served; a test may scan it itself).
        history: the argument values remembered for completion.
        caught_up: called once the watcher runs and has rescanned: from then on, every change of
            a file is seen (a test waits for it before editing files).
    """

    library: Library
    history: History
    caught_up: Callable[[], None]


def default_deps(config: Config) -> Deps:
    """The library of ``config``'s directories, within its bounds; a history of its size. Opens nothing."""
    library = Library(config.library_dirs, max_files=config.max_files, max_file_bytes=config.max_file_bytes)
    return Deps(library=library, history=History(config.history), caught_up=_nothing)


def build_server(config: Config, deps: Deps | None = None) -> Server:
    """The prompt server for ``config``, over ``deps`` (by default :func:`default_deps`).

    The library is read once the server is served: inside ``server.running()``, which stdio, the
    HTTP app's lifespan and ``connect_in_memory`` enter (an application mounting the HTTP app
    without passing lifespan events on enters ``app.running()`` itself)."""
    deps = deps or default_deps(config)
    server = Server(
        NAME,
        __version__,
        title="Prompt library",
        description="Prompts kept as Markdown files, served live as MCP prompts",
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
        # The library may be empty when a client connects and fill up later, while capabilities
        # are fixed at the handshake: prompts and resources are declared either way.
        declare={"prompts", "resources"},
    )
    catalog = Catalog(server, deps.library, deps.history)
    tools.register(server, tools.LibraryTools(catalog))
    SkillsExtension(lambda: catalog.specs).register(server)
    server.background(
        LibraryUpkeep(catalog, watch=config.watch, debounce_ms=config.debounce_ms, caught_up=deps.caught_up)
    )
    return server


def _nothing() -> None:
    """No one waits for the watcher."""
