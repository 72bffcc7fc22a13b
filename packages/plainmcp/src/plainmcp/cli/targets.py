"""What a command talks to: a server command line (stdio) or a URL (HTTP), and in which era.

A *target* is written one of three ways::

    plainmcp inspect my-server                        # one word: a command on PATH
    plainmcp inspect "python -m my_server --ro"       # one argument with spaces: split like a shell
    plainmcp inspect -- python -m my_server --ro      # everything after `--` is the command
    plainmcp inspect http://127.0.0.1:8000/mcp        # http:// or https://: a URL

No shell ever runs: a quoted target is split with :func:`shlex.split` and started directly.
"""

from __future__ import annotations

import argparse
import logging
import shlex
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from ..versions import ALL_VERSIONS, LATEST_LEGACY, MODERN_VERSIONS

ERAS = ("auto", "legacy", "modern")
HTTP_TRANSPORTS = ("auto", "streamable", "sse")


class UsageError(Exception):
    """The command line makes no sense (exit code 2)."""


@dataclass(frozen=True)
class Target:
    """A server to talk to.

    Attributes:
        command: the server's command line (stdio), or empty for a URL.
        url: the MCP endpoint (HTTP), or None for a command.
        transport: for a URL: ``auto`` (Streamable HTTP, or HTTP+SSE for a path ending in
            ``/sse`` or when the server refuses Streamable HTTP), ``streamable`` or ``sse``.
        protocol_version: what the client asks for: a revision, or ``auto`` (probe with
            ``server/discover``, fall back to ``initialize``).
        headers: extra HTTP headers (``Authorization``, ...).
        oauth: for a URL without an ``Authorization`` header: the OAuth options (``client_id``,
            ``client_secret``, ``scopes``, ``open_browser``); a server that answers ``401`` is
            authorized with the kept tokens or the browser flow (see :mod:`plainmcp.cli.auth`).
        env: extra environment variables for a spawned server.
        timeout: seconds per request.
    """

    command: tuple[str, ...] = ()
    url: str | None = None
    transport: str = "auto"
    protocol_version: str = "auto"
    headers: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    oauth: dict[str, Any] = field(default_factory=dict)

    @property
    def is_http(self) -> bool:
        return self.url is not None

    def describe(self) -> str:
        if self.url is not None:
            return self.url
        return shlex.join(self.command)


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that connects shares."""
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--era",
        choices=ERAS,
        default="auto",
        help="legacy (initialize handshake, 2025-11-25), modern (stateless 2026-07-28) or auto: "
        "try server/discover, fall back to initialize (default: auto)",
    )
    group.add_argument(
        "--protocol-version",
        choices=ALL_VERSIONS,
        metavar="VERSION",
        help="ask for exactly this revision (overrides --era): " + ", ".join(ALL_VERSIONS),
    )
    group.add_argument(
        "--transport",
        choices=HTTP_TRANSPORTS,
        default="auto",
        help="for a URL: streamable (Streamable HTTP), sse (2024-11-05 HTTP+SSE) or auto: "
        "a path ending in /sse is SSE, otherwise Streamable HTTP with a fallback to SSE",
    )
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra HTTP header for a URL (repeatable), e.g. 'Authorization: Bearer ...'",
    )
    group.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment variable for a server command (repeatable)",
    )
    group.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="seconds to wait for each answer (default: 30)"
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the server's stderr and log messages, and the client's own log",
    )
    from .oauth_options import add_oauth_options

    add_oauth_options(parser)


def split_command_tail(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """``argv`` before the first ``--``, and the words after it (None without a ``--``)."""
    argv = list(argv)
    if "--" not in argv:
        return argv, None
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]


def protocol_version_of(era: str, version: str | None) -> str:
    """The ``protocol_version`` for :class:`~plainmcp.Client` from ``--era`` / ``--protocol-version``."""
    if version is not None:
        return version
    return {"auto": "auto", "legacy": LATEST_LEGACY, "modern": MODERN_VERSIONS[-1]}[era]


def target_from(args: argparse.Namespace, written: str | None, tail: list[str] | None) -> Target:
    """The :class:`Target` from the parsed options, the target as written, and the ``--`` tail.

    Raises :class:`UsageError` for a missing or doubled target and malformed ``--header``/``--env``.
    """
    if tail is not None and written is not None:
        raise UsageError("give the server either as TARGET or after --, not both")
    if tail is not None:
        if not tail:
            raise UsageError("nothing after --: give the server command")
        command: tuple[str, ...] = tuple(tail)
        url = None
    elif written is None:
        raise UsageError("give a server command or URL (see --help)")
    elif is_url(written):
        command, url = (), written
    else:
        try:
            command = tuple(shlex.split(written))
        except ValueError as error:
            raise UsageError(f"cannot split the server command: {error}") from None
        if not command:
            raise UsageError("the server command is empty")
        url = None
    if url is None and (args.header or args.transport != "auto" or args.client_id or args.scope):
        raise UsageError("--header, --transport, --client-id and --scope apply to a URL, not to a server command")
    if args.client_secret and not args.client_id:
        raise UsageError("--client-secret needs --client-id")
    if url is not None and args.env:
        raise UsageError("--env applies to a server command, not to a URL")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    return Target(
        command=command,
        url=url,
        transport=args.transport,
        protocol_version=protocol_version_of(args.era, args.protocol_version),
        headers=_pairs(args.header, ":", "--header", "'NAME: VALUE'"),
        env=_pairs(args.env, "=", "--env", "NAME=VALUE"),
        timeout=args.timeout,
        oauth={
            "client_id": args.client_id,
            "client_secret": args.client_secret,
            "scopes": list(args.scope),
            "open_browser": not args.no_browser,
        },
    )


def _pairs(items: list[str], separator: str, flag: str, form: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        name, found, value = item.partition(separator)
        if not found or not name.strip():
            raise UsageError(f"{flag} {item!r}: expected {form}")
        pairs[name.strip()] = value.strip() if separator == ":" else value
    return pairs


@asynccontextmanager
async def connect(target: Target, **options: Any) -> AsyncIterator[Any]:
    """A connected :class:`~plainmcp.Client` for ``target``; ``options`` go to the client
    (callbacks, ``on_notification``, ...). Raises what connecting raises: :class:`MCPError`,
    :class:`OSError` (the command cannot start, the port is closed), TimeoutError."""
    import os

    options.setdefault("client_info", {"name": "plainmcp-cli", "version": _version()})
    options.setdefault("protocol_version", target.protocol_version)
    options.setdefault("request_timeout", target.timeout)
    if target.url is not None:
        from ..http_client import connect_http

        if target.oauth and not any(name.lower() == "authorization" for name in target.headers):
            from .oauth_options import person_oauth

            options.setdefault("auth", person_oauth(**target.oauth))
        try:
            async with connect_http(
                target.url, transport=target.transport, headers=target.headers, **options
            ) as client:
                yield client
        finally:
            if "auth" in options:
                options["auth"].authorizer.close()  # the loopback port, bound in case a login was needed
        return
    from ..stdio import connect_stdio

    env = {**os.environ, **target.env} if target.env else None
    async with connect_stdio(list(target.command), env=env, **options) as client:
        yield client


class ServerStderr(logging.Handler):
    """Keeps the last lines a spawned server wrote to stderr, to show when connecting fails."""

    def __init__(self, lines: int = 20) -> None:
        super().__init__(logging.INFO)
        self.lines: deque[str] = deque(maxlen=lines)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _version() -> str:
    from .. import __version__

    return __version__
