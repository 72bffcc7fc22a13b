"""The command line every plainmcp server shares, and running a server by it.

A server's ``__main__`` adds its own options to :func:`server_arguments`' parser, builds its
``Server``, then calls :func:`serve`::

    parser = server_arguments("plainmcp-notes", env_prefix="PLAINMCP_NOTES")
    parser.add_argument("--data", ...)
    args = parser.parse_args()
    serve(build_server(...), args)

Every option can also come from the environment (``<PREFIX>_TRANSPORT``, ``<PREFIX>_LOG_LEVEL``...),
for clients whose configuration only sets environment variables; a flag wins over the environment.
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from .logs import LEVELS, configure_logging

logger = logging.getLogger(__name__)

TRANSPORTS = ("stdio", "http", "sse")


class _EnvDefault(argparse.Action):
    """An option whose default comes from an environment variable, when set."""

    def __init__(self, option_strings: list[str], dest: str, env: str, default: Any = None, **kwargs: Any) -> None:
        if env in os.environ:
            default = os.environ[env]
        kwargs["help"] = f"{kwargs.get('help', '')} [env: {env}]".strip()
        super().__init__(option_strings, dest, default=default, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)


def env_option(parser: argparse.ArgumentParser, flag: str, env: str, **kwargs: Any) -> None:
    """Add ``flag`` whose default is read from ``env`` (then from ``default``)."""
    parser.add_argument(flag, action=_EnvDefault, env=env, **kwargs)


def server_arguments(prog: str, *, env_prefix: str, description: str | None = None) -> argparse.ArgumentParser:
    """A parser with the options every server shares."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    env_option(parser, "--transport", f"{env_prefix}_TRANSPORT", choices=TRANSPORTS, default="stdio",
               help="stdio (the client starts this process), http (Streamable HTTP at /mcp, and the old "
               "SSE endpoints) or sse (only the 2024-11-05 HTTP+SSE endpoints)")
    env_option(parser, "--host", f"{env_prefix}_HOST", default="127.0.0.1",
               help="address to listen on (http/sse); keep 127.0.0.1 unless clients are remote")
    env_option(parser, "--port", f"{env_prefix}_PORT", type=int, default=8000, help="port to listen on (http/sse)")
    env_option(parser, "--allowed-host", f"{env_prefix}_ALLOWED_HOSTS", default="",
               help="comma-separated Host names to accept besides loopback (behind a proxy)")
    env_option(parser, "--allowed-origin", f"{env_prefix}_ALLOWED_ORIGINS", default="",
               help="comma-separated browser Origins to accept besides loopback")
    env_option(parser, "--log-level", f"{env_prefix}_LOG_LEVEL", choices=LEVELS, default="info",
               help="lowest level written to stderr")
    env_option(parser, "--log-format", f"{env_prefix}_LOG_FORMAT", choices=("text", "json"), default="text",
               help="stderr log lines as text or JSON")
    return parser


def serve(server: Any, args: argparse.Namespace) -> None:
    """Configure logging (stderr only) and serve ``server`` on the chosen transport until done."""
    configure_logging(args.log_level, args.log_format)
    logger.info("%s %s serving on %s", server.name, server.version, args.transport)
    if args.transport == "stdio":
        server.run_stdio()
        return
    from .http_app import run_http

    run_http(
        server,
        host=args.host,
        port=int(args.port),
        transport=args.transport,
        allowed_hosts=_split(args.allowed_host),
        allowed_origins=_split(args.allowed_origin),
    )


def _split(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]
