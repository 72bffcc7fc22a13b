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

TRANSPORTS = ("stdio",)


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
               help="how clients connect (stdio: the client starts this process)")
    env_option(parser, "--log-level", f"{env_prefix}_LOG_LEVEL", choices=LEVELS, default="info",
               help="lowest level written to stderr")
    env_option(parser, "--log-format", f"{env_prefix}_LOG_FORMAT", choices=("text", "json"), default="text",
               help="stderr log lines as text or JSON")
    return parser


def serve(server: Any, args: argparse.Namespace) -> None:
    """Configure logging (stderr only) and serve ``server`` on the chosen transport until done."""
    configure_logging(args.log_level, args.log_format)
    logger.info("%s %s serving on %s", server.name, server.version, args.transport)
    server.run_stdio()
