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


class EnvList(argparse.Action):
    """A repeatable option; without the flag, a comma-separated environment variable fills it."""

    def __init__(self, option_strings: list[str], dest: str, env: str, **kwargs: Any) -> None:
        kwargs["help"] = f"{kwargs.get('help', '')} [env: {env}, comma-separated]".strip()
        super().__init__(option_strings, dest, default=_split(os.environ.get(env)), **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        current = getattr(namespace, self.dest)
        if current is self.default:
            current = []  # the first flag replaces what the environment gave; later ones add to it
        setattr(namespace, self.dest, [*current, values])


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


def env_list_option(parser: argparse.ArgumentParser, flag: str, env: str, **kwargs: Any) -> None:
    """Add a repeatable ``flag`` (a list); without it, ``env`` (comma-separated) fills the list."""
    parser.add_argument(flag, action=EnvList, env=env, **kwargs)


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
    add_http_options(parser, env_prefix)
    env_option(parser, "--log-level", f"{env_prefix}_LOG_LEVEL", choices=LEVELS, default="info",
               help="lowest level written to stderr")
    env_option(parser, "--log-format", f"{env_prefix}_LOG_FORMAT", choices=("text", "json"), default="text",
               help="stderr log lines as text or JSON")
    return parser


def add_http_options(parser: argparse.ArgumentParser, env_prefix: str) -> None:
    """Authentication, TLS and limits of the HTTP transports."""
    group = parser.add_argument_group("HTTP security and limits (http/sse)")

    def option(flag: str, env: str, **kwargs: Any) -> None:
        group.add_argument(flag, action=_EnvDefault, env=f"{env_prefix}_{env}", **kwargs)

    group.add_argument("--auth-token", action=EnvList, env=f"{env_prefix}_AUTH_TOKENS", metavar="TOKEN",
                       help="accept this static bearer token (repeatable); prefer the environment "
                       "variable: a command line is visible to other users")
    option("--jwt-secret", "JWT_SECRET",
           help="accept HS256 JWTs signed with this shared secret (>= 32 bytes); prefer the environment variable")
    option("--jwt-public-key", "JWT_PUBLIC_KEY", metavar="PEM_FILE",
           help="accept RS256/ES256 JWTs signed by the key in this PEM file")
    option("--jwks-url", "JWKS_URL", help="accept JWTs signed by a key published at this JWKS URL")
    option("--jwt-issuer", "JWT_ISSUER", help="required JWT issuer (iss)")
    option("--jwt-audience", "JWT_AUDIENCE",
           help="required JWT audience (aud); defaults to --resource-url")
    group.add_argument("--authorization-server", action=EnvList, env=f"{env_prefix}_AUTHORIZATION_SERVERS",
                       metavar="URL", help="OAuth authorization server issuing tokens for this server "
                       "(repeatable); publishes /.well-known/oauth-protected-resource")
    option("--resource-url", "RESOURCE_URL",
           help="public URL of the MCP endpoint, when a proxy changes it (metadata and JWT audience)")
    option("--certfile", "CERTFILE", help="serve HTTPS with this PEM certificate (chain)")
    option("--keyfile", "KEYFILE", help="the private key of --certfile (PEM)")
    option("--max-body-bytes", "MAX_BODY_BYTES", type=int, default=4 * 1024 * 1024,
           help="larger request bodies are refused with 413")
    option("--max-sessions", "MAX_SESSIONS", type=int, default=1000,
           help="sessions at once per transport; past it a new one gets 503")
    option("--max-connections", "MAX_CONNECTIONS", type=int, default=1000,
           help="connections at once; idle ones give their slot up to new ones, and when every "
           "slot serves a request, requests get 503 (/health is still answered)")
    option("--max-connections-per-peer", "MAX_CONNECTIONS_PER_PEER", type=int, default=None,
           help="connections one client address may hold (default half of --max-connections; "
           "0: no cap, for a server behind a proxy)")
    option("--header-timeout", "HEADER_TIMEOUT", type=float, default=10.0,
           help="seconds a connection has to send a request head before it is closed")


def http_auth(args: argparse.Namespace) -> Any:
    """The :class:`~plainmcp.auth.BearerAuth` the options ask for, or None. Raises ValueError for
    options that do not fit together."""
    from .auth import BearerAuth, StaticTokens

    authenticators: list[Any] = []
    tokens = list(getattr(args, "auth_token", None) or [])
    if tokens:
        authenticators.append(StaticTokens(tokens))
    key_sources = [args.jwt_secret, args.jwt_public_key, args.jwks_url]
    if any(key_sources):
        from .jwt_auth import JWTVerifier

        public_keys = []
        if args.jwt_public_key:
            with open(args.jwt_public_key, "rb") as file:
                public_keys.append(file.read())
        authenticators.append(JWTVerifier(
            audience=args.jwt_audience or args.resource_url or "",
            issuer=args.jwt_issuer or None,
            secret=args.jwt_secret or None,
            public_keys=public_keys,
            jwks_url=args.jwks_url or None,
        ))
    elif args.jwt_issuer or args.jwt_audience:
        raise ValueError("--jwt-issuer and --jwt-audience need a key: --jwt-secret, --jwt-public-key or --jwks-url")
    servers = list(args.authorization_server or [])
    if not authenticators:
        if servers:
            raise ValueError("--authorization-server needs token checking: a JWT key or --auth-token")
        return None
    return BearerAuth(authenticators, authorization_servers=servers, resource_url=args.resource_url or None)


def serve(server: Any, args: argparse.Namespace) -> None:
    """Configure logging (stderr only) and serve ``server`` on the chosen transport until done."""
    configure_logging(args.log_level, args.log_format)
    logger.info("%s %s serving on %s", server.name, server.version, args.transport)
    if args.transport == "stdio":
        server.run_stdio()
        return
    from .http_app import run_http

    try:
        auth = http_auth(args)
        if bool(args.certfile) != bool(args.keyfile):
            raise ValueError("TLS needs both --certfile and --keyfile")
    except (ValueError, OSError, RuntimeError) as problem:
        raise SystemExit(f"{server.name}: {problem}") from None
    run_http(
        server,
        host=args.host,
        port=int(args.port),
        transport=args.transport,
        allowed_hosts=_split(args.allowed_host),
        allowed_origins=_split(args.allowed_origin),
        auth=auth,
        certfile=args.certfile or None,
        keyfile=args.keyfile or None,
        max_body_bytes=int(args.max_body_bytes),
        max_sessions=int(args.max_sessions),
        max_connections=int(args.max_connections),
        max_connections_per_peer=None if args.max_connections_per_peer is None else int(args.max_connections_per_peer),
        header_timeout=float(args.header_timeout),
    )


def _split(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]
