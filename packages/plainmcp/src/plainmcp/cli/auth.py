"""``plainmcp auth login|status|logout``: a person's OAuth logins to remote MCP servers.

``login URL`` runs the authorization flow now (the browser, or the printed URL, and the redirect on
127.0.0.1) and keeps the tokens in the token file (``plainmcp.oauth.file_store``: readable by the
user alone); ``status [URL]`` shows what is kept (issuer, resource, scopes, expiry; never a token);
``logout [URL]`` forgets it. ``inspect``, ``call``, ``read`` and ``prompt`` on a URL use the same
file: a server that answers ``401`` is authorized the same way, and a kept token is used again
(refreshed when it has expired).
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from typing import Any

from .oauth_options import add_oauth_options, person_oauth
from .run import FAILED, INTERRUPTED, OK, USAGE, configure_logging, fail

EPILOG = """\
The tokens are kept in $PLAINMCP_TOKEN_FILE, else $XDG_STATE_HOME/plainmcp/tokens.json, else
~/.local/state/plainmcp/tokens.json (mode 0600, in a 0700 directory).

exit codes:
  0  success (status: at least one login shown)
  1  the authorization failed, the token file cannot be used (status: no login kept)
  2  usage error
  130  interrupted (Ctrl-C)"""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "auth",
        help="log in to OAuth-protected MCP servers, show and forget the logins",
        description="Manage the OAuth logins plainmcp keeps for remote MCP servers.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="auth_action", required=True, metavar="ACTION")
    login = actions.add_parser(
        "login",
        help="authorize now (browser, or the printed URL) and keep the tokens",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    login.add_argument("url", metavar="URL", help="the MCP endpoint, http:// or https://")
    add_oauth_options(login)
    login.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="how long to wait for the browser (default 300)"
    )
    login.add_argument(
        "--force", action="store_true", help="authorize again even when a valid login is kept (another account)"
    )
    login.add_argument("-v", "--verbose", action="store_true", help="show the client's log")
    login.set_defaults(run=_login)
    for name, text, run in (
        ("status", "show the kept logins (all, or URL's); never a token", _status),
        ("logout", "forget the kept logins (all, or URL's)", _logout),
    ):
        action = actions.add_parser(
            name, help=text, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        action.add_argument("url", nargs="?", metavar="URL", help="the MCP endpoint (default: every login)")
        if name == "status":
            action.add_argument("--json", action="store_true", help="print a JSON list")
        action.set_defaults(run=run)


def _login(args: argparse.Namespace) -> int:
    if not args.url.startswith(("http://", "https://")):
        fail("auth login needs the server's http:// or https:// URL")
        return USAGE
    if args.client_secret and not args.client_id:
        fail("--client-secret needs --client-id")
        return USAGE
    configure_logging(args.verbose)

    async def login() -> dict[str, Any]:
        oauth = person_oauth(
            client_id=args.client_id,
            client_secret=args.client_secret,
            scopes=list(args.scope),
            open_browser=not args.no_browser,
            timeout=args.timeout,
        )
        try:
            entry: dict[str, Any] = await oauth.login(args.url, force=args.force)
            return entry
        finally:
            oauth.authorizer.close()

    code, entry = _run(login)
    if code == OK:
        print(f"logged in: {_describe(entry)}")
    return code


def _status(args: argparse.Namespace) -> int:
    configure_logging(False)

    async def status() -> list[dict[str, Any]]:
        from ..oauth import OAuth
        from ..oauth.file_store import FileTokenStore

        entries: list[dict[str, Any]] = await OAuth(store=FileTokenStore()).status(args.url)
        return entries

    code, entries = _run(status)
    if code != OK:
        return code
    if args.json:
        print(json.dumps(entries, indent=2, sort_keys=True))
    elif not entries:
        print("no login kept" + (f" for {args.url}" if args.url else ""))
    for entry in [] if args.json else entries:
        print(_describe(entry))
    return OK if entries else FAILED


def _logout(args: argparse.Namespace) -> int:
    configure_logging(False)

    async def logout() -> int:
        from ..oauth import OAuth
        from ..oauth.file_store import FileTokenStore

        store = FileTokenStore()
        if args.url is not None:
            forgotten: int = await OAuth(store=store).logout(args.url)
            return forgotten
        kept = await store.entries()
        for issuer, resource, _ in kept:
            await store.delete(issuer, resource)
        return len(kept)

    code, count = _run(logout)
    if code == OK:
        print(f"forgot {count} login{'s' if count != 1 else ''}" + (f" for {args.url}" if args.url else ""))
    return code


def _run(work: Any) -> tuple[int, Any]:
    """Run ``work()`` and turn what can go wrong into one line on stderr and an exit code."""
    import anyio

    from ..errors import MCPError
    from ..oauth.file_store import TokenStoreError

    try:
        return OK, anyio.run(work)
    except KeyboardInterrupt:
        fail("interrupted")
        return INTERRUPTED, None
    except (MCPError, TokenStoreError) as error:
        fail(getattr(error, "message", None) or str(error))
        return FAILED, None
    except (OSError, TimeoutError) as error:
        fail(f"{type(error).__name__}: {error}")
        return FAILED, None


def _describe(entry: dict[str, Any]) -> str:
    """One line for a status entry: resource, issuer, client, scopes, expiry; never a token."""
    scopes = entry.get("scopes") or []
    parts = [
        str(entry.get("resource")),
        f"issuer {entry.get('issuer')}",
        f"client {entry.get('client_id')}" if entry.get("client_id") else "",
        f"scopes {' '.join(scopes)}" if scopes else "no scopes",
        _expiry(entry),
        "refreshable" if entry.get("refreshable") else "",
    ]
    return "; ".join(part for part in parts if part)


def _expiry(entry: dict[str, Any]) -> str:
    expires_at = entry.get("expires_at")
    if not isinstance(expires_at, (int, float)):
        return "no expiry given"
    when = datetime.datetime.fromtimestamp(expires_at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if entry.get("expired") or expires_at <= time.time():
        return f"expired {when}"
    return f"expires {when}"
