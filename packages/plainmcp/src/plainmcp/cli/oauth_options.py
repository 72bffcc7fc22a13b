"""The OAuth options of every command that connects to a URL, and the :class:`~plainmcp.oauth.OAuth`
of a person at this terminal. Apart from ``plainmcp auth`` (``cli/auth.py``) so that the targets can use
them without importing the command runner."""

from __future__ import annotations

import argparse
import os
from typing import Any

#: Where a pre-registered client's secret may come from instead of the command line (which
#: other users can see in the process list).
CLIENT_SECRET_ENV = "PLAINMCP_OAUTH_CLIENT_SECRET"


def add_oauth_options(parser: argparse.ArgumentParser) -> None:
    """The OAuth options of ``auth login`` and of every command that connects to a URL."""
    group = parser.add_argument_group("OAuth (for a URL whose server asks for authorization)")
    group.add_argument("--client-id", metavar="ID", help="a client registered with the authorization server beforehand")
    group.add_argument(
        "--client-secret",
        metavar="SECRET",
        help=f"that client's secret (or set {CLIENT_SECRET_ENV}: a command line is visible to other users)",
    )
    group.add_argument(
        "--scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="a scope to ask for (repeatable; default: what the server asks for)",
    )
    group.add_argument(
        "--no-browser", action="store_true", help="only print the authorization URL; do not open a browser"
    )


def person_oauth(
    *,
    client_id: str | None = None,
    client_secret: str | None = None,
    scopes: list[str] | None = None,
    open_browser: bool = True,
    timeout: float = 300.0,
) -> Any:
    """The :class:`~plainmcp.oauth.OAuth` of a person at this terminal: the token file, the
    browser and the loopback redirect (the caller closes ``.authorizer`` when done)."""
    from ..oauth import OAuth
    from ..oauth.file_store import FileTokenStore
    from ..oauth.loopback import LoopbackAuthorizer

    secret = client_secret or os.environ.get(CLIENT_SECRET_ENV) or None
    return OAuth(
        store=FileTokenStore(),
        authorizer=LoopbackAuthorizer(open_browser=open_browser, timeout=timeout),
        client_id=client_id,
        client_secret=secret if client_id else None,
        scopes=scopes or None,
    )
