"""``plainmcp-bridge``: the command line."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog="plainmcp-bridge",
        description="Local models use MCP servers through a validating interceptor.",
    )
    command.add_argument("--version", action="version", version=f"plainmcp-bridge {__version__}")
    return command


def main(argv: list[str] | None = None) -> int:
    parser().parse_args(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
