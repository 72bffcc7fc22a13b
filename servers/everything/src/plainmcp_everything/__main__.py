"""``plainmcp-everything``: serve the conformance fixture (stdio by default; see ``--help``)."""

from __future__ import annotations

from plainmcp.command_line import serve, server_arguments

from .server import VERSION, build_server


def main() -> None:
    parser = server_arguments(
        "plainmcp-everything",
        env_prefix="PLAINMCP_EVERYTHING",
        description="The MCP conformance fixture: every protocol feature, under the conformance suite's names.",
        version=VERSION,
    )
    serve(build_server(), parser.parse_args())


if __name__ == "__main__":
    main()
