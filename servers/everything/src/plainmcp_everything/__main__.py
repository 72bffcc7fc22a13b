"""``plainmcp-everything``: serve the conformance fixture (stdio by default; see ``--help``)."""

from __future__ import annotations

from plainmcp import run_server_command

from . import __version__
from .config import ENV_PREFIX, Config
from .server import DESCRIPTION, NAME, build_server


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
