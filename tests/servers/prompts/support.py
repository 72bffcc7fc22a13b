"""Helpers for the prompts server tests: files in a temporary library, servers over them."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

from plainmcp import Server, server_arguments
from plainmcp_prompts.config import ENV_PREFIX, Config
from plainmcp_prompts.server import NAME, Deps, build_server, default_deps

MODERN = "2026-07-28"
#: Upper bound for a change on disk to reach a client as a notification.
LIVE_TIMEOUT = 10.0


def write(directory: Path, relative: str, text: str) -> Path:
    """Write ``text`` (dedented) to ``directory/relative``, creating folders; return the path."""
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def config_over(*dirs: Path, **options: Any) -> Config:
    """The configuration of a server over ``dirs`` only (no bundled library), not watching unless asked."""
    options.setdefault("bundled", False)
    options.setdefault("watch", False)
    return Config(dirs=tuple(str(d) for d in dirs), **options)


def server_over(*dirs: Path, **options: Any) -> Server:
    """A server over ``dirs`` only (no bundled library), not watching unless asked."""
    return build_server(config_over(*dirs, **options))


def server_and_deps(*dirs: Path, **options: Any) -> tuple[Server, Deps]:
    """:func:`server_over`, and the deps it was built with (its library, history...), to reach them."""
    config = config_over(*dirs, **options)
    deps = default_deps(config)
    return build_server(config, deps), deps


def parse(argv: list[str]) -> Any:
    """``argv`` parsed as the console script parses it."""
    parser = server_arguments(NAME, env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    return parser.parse_args(argv)


def dir_args(*dirs: Path) -> list[str]:
    """Command-line options serving ``dirs`` only, reloading quickly."""
    args = ["--no-bundled", "--debounce-ms", "50"]
    for directory in dirs:
        args += ["--dir", str(directory)]
    return args


def stdio_command(*dirs: Path) -> list[str]:
    return [sys.executable, "-m", "plainmcp_prompts", *dir_args(*dirs)]


def text_of(message: dict[str, Any]) -> str:
    return message["content"]["text"]


GREETING = """
    ---
    description: Greet someone
    arguments:
      - name: who
        required: true
      - name: tone
        values: [warm, formal]
        default: warm
    ---
    Say hello to {{who}}, {{tone}}ly.
    """
