"""``plainmcp-sqlite``: serve a SQLite database over MCP (stdio by default; see ``--help``)."""

from __future__ import annotations

from plainmcp import StartupError, serve, server_arguments

from . import __version__
from .config import ENV_PREFIX, Config
from .server import DESCRIPTION, NAME, build_server


def main(argv: list[str] | None = None) -> None:
    parser = server_arguments(NAME, env_prefix=ENV_PREFIX, description=DESCRIPTION, version=__version__)
    Config.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = Config.from_args(args)
    except StartupError as problem:  # valid options, but the world does not fit them: exit 1
        parser.exit(1, f"{parser.prog}: {problem}\n")
    except ValueError as problem:  # a wrong option value: a usage error, exit 2
        parser.error(str(problem))
    serve(build_server(config), args)


if __name__ == "__main__":
    main()
