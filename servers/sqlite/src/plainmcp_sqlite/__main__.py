"""``plainmcp-sqlite``: serve a SQLite database over MCP (stdio by default; see ``--help``)."""

from __future__ import annotations

from plainmcp import defer_collection

defer_collection()  # before the imports below: see plainmcp.startup

from plainmcp import run_server_command  # noqa: E402

from . import __version__  # noqa: E402
from .config import ENV_PREFIX, Config  # noqa: E402
from .server import DESCRIPTION, NAME, build_server  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    run_server_command(
        NAME,
        env_prefix=ENV_PREFIX,
        description=DESCRIPTION,
        version=__version__,
        config_type=Config,
        build_server=build_server,
        argv=argv,
    )


if __name__ == "__main__":
    main()
