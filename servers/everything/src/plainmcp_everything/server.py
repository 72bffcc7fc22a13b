"""Wiring: one :class:`plainmcp.Server` with every fixture the conformance suite expects.

The capabilities follow from what is registered (tools, resources with subscriptions, prompts,
completions, logging), each with ``listChanged``. Each module registers one family; the README maps
every protocol feature to the code that shows it.
"""

from __future__ import annotations

from plainmcp import Server

from . import __version__, changes, input_required, prompts, resources, tasks, tools
from .config import Config

NAME = "plainmcp-everything"
TITLE = "Everything (MCP conformance fixture)"
#: ``--help``'s summary.
DESCRIPTION = "The MCP conformance fixture: every protocol feature, under the conformance suite's names."
#: ``serverInfo.description``, as the interop tests expect it.
INFO_DESCRIPTION = "Every MCP feature, under the names the official conformance suite expects"
INSTRUCTIONS = (
    "A conformance fixture: every tool, resource and prompt is named test_* or test://* after what it tests, "
    "and returns fixed content. Nothing here does real work."
)


class Deps:
    """What the fixture talks to outside its process: nothing (every fixture returns fixed content, and the
    state the trigger tools change lives in the server that :func:`build_server` returns).

    It is here so that the fixture is built like every other server, ``build_server(config, deps)``; as
    there is nothing to choose between a real part and a stand-in, there is no ``default_deps`` either.
    """

    __slots__ = ()


def build_server(config: Config, deps: Deps | None = None) -> Server:
    """The fixture server. A pure factory: nothing runs, and no I/O happens, until a transport serves it.

    Each call returns a server with its own state (the trigger tools change only that server). ``deps``
    is accepted for the template's sake and used for nothing (see :class:`Deps`).
    """
    server = Server(
        NAME,
        __version__,
        title=TITLE,
        description=INFO_DESCRIPTION,
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
        state_key=config.state_key,
    )
    # Registration order is listing order: the suite's caching check reads the first resource listed.
    tools.register(server)
    resources.register(server)
    prompts.register(server)
    input_required.register(server)
    changes.register(server)
    tasks.register(server)
    return server
