"""The command line every plainmcp server shares, and running a server by it.

A server's ``__main__`` adds its own options to :func:`server_arguments`' parser, builds its
``Server``, then calls :func:`serve`::

    parser = server_arguments("plainmcp-notes", env_prefix="PLAINMCP_NOTES")
    parser.add_argument("--data", ...)
    args = parser.parse_args()
    serve(build_server(...), args)

Every option can also come from the environment (``<PREFIX>_TRANSPORT``, ``<PREFIX>_LOG_LEVEL``...),
for clients whose configuration only sets environment variables; a flag wins over the environment.

On/off options are added with :func:`env_switch`: ``--flag`` alone turns one on and never takes the
next word as its value (``--allow-write DIR`` is the switch and a directory); ``--flag=false`` and
``--flag=true`` also work, and so does the environment (``1``/``true``/``yes``/``on`` or
``0``/``false``/``no``/``off``). A usage error (a bad port, an unknown option) is one line on
stderr and exit code 2; a port that cannot be bound is one line and exit code 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

from .logs import LEVELS, configure_logging
from .startup import resume_collection

if TYPE_CHECKING:
    from .server import Server

ConfigT = TypeVar("ConfigT")
ConfigT_co = TypeVar("ConfigT_co", covariant=True)
logger = logging.getLogger(__name__)

TRANSPORTS = ("stdio", "http", "sse")
SWITCH_ON = ("1", "true", "yes", "on")
SWITCH_OFF = ("0", "false", "no", "off", "")


def switch_value(text: str) -> bool:
    """The on/off value of ``text`` (``true``/``false``, ``1``/``0``, ``yes``/``no``, ``on``/``off``,
    any case). Raises ValueError for anything else."""
    lowered = text.strip().lower()
    if lowered in SWITCH_ON:
        return True
    if lowered in SWITCH_OFF:
        return False
    raise ValueError(f"expected true or false (1/0, yes/no, on/off), got {text!r}")


class _BadEnvironment:
    """The default of an option whose environment variable holds a value it cannot take: reported
    as a usage error once parsing shows the command line did not override it."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _Switch(argparse.Action):
    """An on/off option: present means on. It takes no argument, so it never swallows the next
    word; :class:`ServerArgumentParser` handles the ``--flag=value`` form before argparse sees it."""

    def __init__(self, option_strings: list[str], dest: str, env: str, help: str | None = None, **kwargs: Any) -> None:
        default: Any = kwargs.pop("default", False)
        raw = os.environ.get(env)
        if raw is not None:
            try:
                default = switch_value(raw)
            except ValueError as problem:
                default = _BadEnvironment(f"{env}: {problem}")
        super().__init__(
            option_strings, dest, nargs=0, default=default, help=f"{help or ''} [env: {env}=1]".strip(), **kwargs
        )

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, True)


class StartupError(Exception):
    """The options are valid but the world does not fit them: a file that is not a database, a directory
    that cannot be read. A server's ``__main__`` reports it in one line and exits with 1 (a wrong option
    value is a ``ValueError`` instead: a usage error, exit 2)."""


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, with the terminal's width found without ``shutil``: argparse makes
    a formatter for every ``add_argument`` (to check the metavar), and the default one imports
    ``shutil`` (and with it ``bz2``, ``lzma``, ``fnmatch``) for the width, milliseconds of every
    server's cold start that only ``--help`` needs. The width is found as ``shutil`` finds it."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """The terminal's columns as ``shutil.get_terminal_size`` says them: ``$COLUMNS``, else stdout's
    terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]  # None: caught
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class ServerArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose on/off switches (:func:`env_switch`) also accept ``--flag=value``,
    and whose usage errors are one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]  # one signature for typeshed's overloads
        words = list(sys.argv[1:] if args is None else args)
        switches = {
            option: action
            for action in self._actions
            if isinstance(action, _Switch)
            for option in action.option_strings
        }
        given: dict[str, bool] = {}  # dest -> value of its last exact occurrence
        rest: list[str] = []
        for index, word in enumerate(words):
            if word == "--":
                rest.extend(words[index:])
                break
            name, equals, text = word.partition("=")
            action = switches.get(name)
            if action is None:
                rest.append(word)
                continue
            try:
                given[action.dest] = switch_value(text) if equals else True
            except ValueError as problem:
                self.error(f"argument {name}: {problem}")
        parsed, extras = super().parse_known_args(rest, namespace)
        for dest, value in given.items():
            setattr(parsed, dest, value)
        for option in self._actions:  # a variable's bad value matters only when no flag replaced it
            default = getattr(parsed, option.dest, None)
            if isinstance(default, _BadEnvironment):
                self.error(default.problem)
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        """One line (the usage of a server lists dozens of options; ``--help`` shows them)."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class OptionTarget(Protocol):
    """What the ``env_*`` helpers add an option to: an ``ArgumentParser`` or one of its argument groups
    (``parser.add_argument_group(...)``), which share ``add_argument`` but no public base class."""

    def add_argument(self, *name_or_flags: str, **kwargs: Any) -> argparse.Action: ...


def env_switch(parser: OptionTarget, flag: str, env: str, *, help: str | None = None, default: bool = False) -> None:
    """Add the on/off option ``flag`` to ``parser`` (a :class:`ServerArgumentParser` or one of its
    argument groups): ``flag`` alone or ``flag=true`` turns it on, ``flag=false`` off; without it,
    ``env`` decides (``1``/``0``, ``true``/``false``...), then ``default``. The value is a bool."""
    parser.add_argument(flag, action=_Switch, env=env, default=default, help=help)


def port_number(text: str) -> int:
    """A TCP port (0 to 65535; 0 picks a free one), for argparse's ``type=``."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


class _Version(argparse.Action):
    """``--version``: print ``<distribution> <version>`` and exit (the version looked up only then)."""

    def __init__(self, option_strings: list[str], dest: str, version: str | None = None, **kwargs: Any) -> None:
        self.version = version
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the name and version, then exit"
        )

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        version = self.version
        if version is None:
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as installed

            try:
                version = installed(parser.prog)
            except PackageNotFoundError:
                version = "(not installed)"
        print(f"{parser.prog} {version}")  # stdout, as argparse's own --version: no protocol runs
        parser.exit(0)


class EnvList(argparse.Action):
    """A repeatable option; without the flag, the environment variable fills it (its items separated
    by ``separator``: a comma, or ``os.pathsep`` for paths, which may hold commas)."""

    def __init__(self, option_strings: list[str], dest: str, env: str, separator: str = ",", **kwargs: Any) -> None:
        separated = "comma-separated" if separator == "," else f"{separator}-separated"
        kwargs["help"] = f"{kwargs.get('help', '')} [env: {env}, {separated}]".strip()
        super().__init__(option_strings, dest, default=_split(os.environ.get(env), separator), **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        current = getattr(namespace, self.dest)
        if current is self.default:
            current = []  # the first flag replaces what the environment gave; later ones add to it
        setattr(namespace, self.dest, [*current, values])


class _EnvDefault(argparse.Action):
    """An option whose default comes from an environment variable, when set: converted and checked
    like the flag's value (argparse checks neither ``choices`` nor, by name, a default's variable)."""

    def __init__(self, option_strings: list[str], dest: str, env: str, default: Any = None, **kwargs: Any) -> None:
        shown = _shown_default(default, kwargs.get("help") or "")  # the declared one: an env value may be a secret
        if env in os.environ:
            default = _from_environment(env, os.environ[env], kwargs.get("type"), kwargs.get("choices"))
        kwargs["help"] = f"{kwargs.get('help', '')}{shown} [env: {env}]".strip()
        super().__init__(option_strings, dest, default=default, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)


def _shown_default(default: Any, help: str) -> str:
    """`` (default: X)`` for ``--help``, unless there is no default or the help already says it."""
    if default is None or default == "" or "default" in help.lower():
        return ""
    return f" (default: {default})".replace("%", "%%")  # argparse %-formats help texts


def _from_environment(env: str, text: str, convert: Any, choices: Any) -> Any:
    """The value of variable ``env``, or a :class:`_BadEnvironment` saying what is wrong with it."""
    try:
        value = convert(text) if convert is not None else text
    except argparse.ArgumentTypeError as problem:
        return _BadEnvironment(f"{env}: {problem}")
    except (TypeError, ValueError):
        return _BadEnvironment(f"{env}: invalid value {text!r}")
    if choices is not None and value not in choices:
        return _BadEnvironment(f"{env}: {text!r} is not one of {', '.join(map(str, choices))}")
    return value


def env_option(parser: OptionTarget, flag: str, env: str, **kwargs: Any) -> None:
    """Add ``flag`` whose default is read from ``env`` (then from ``default``)."""
    parser.add_argument(flag, action=_EnvDefault, env=env, **kwargs)


def env_list_option(parser: OptionTarget, flag: str, env: str, *, separator: str = ",", **kwargs: Any) -> None:
    """Add a repeatable ``flag`` (a list); without it, ``env`` (items separated by ``separator``,
    a comma by default) fills the list."""
    parser.add_argument(flag, action=EnvList, env=env, separator=separator, **kwargs)


def server_arguments(
    prog: str, *, env_prefix: str, description: str | None = None, version: str | None = None
) -> ServerArgumentParser:
    """A parser with the options every server shares. ``prog`` is the distribution's name (and its
    console script's); ``--version`` prints it with ``version`` (by default, the installed
    distribution's version)."""
    parser = ServerArgumentParser(prog=prog, description=description)
    # typeshed types add_argument's version= as str; None (look it up when asked) reaches _Version by omission.
    given_version: dict[str, Any] = {} if version is None else {"version": version}
    parser.add_argument("--version", action=_Version, **given_version)
    # Words of a closed set are matched in any case (PLAINMCP_X_LOG_LEVEL=DEBUG works).
    env_option(
        parser,
        "--transport",
        f"{env_prefix}_TRANSPORT",
        choices=TRANSPORTS,
        default="stdio",
        type=str.lower,
        help="stdio (the client starts this process), http (Streamable HTTP at /mcp, and the old "
        "SSE endpoints) or sse (only the 2024-11-05 HTTP+SSE endpoints)",
    )
    env_option(
        parser,
        "--host",
        f"{env_prefix}_HOST",
        default="127.0.0.1",
        help="address to listen on (http/sse); keep 127.0.0.1 unless clients are remote",
    )
    env_option(
        parser,
        "--port",
        f"{env_prefix}_PORT",
        type=port_number,
        default=8000,
        help="port to listen on (http/sse; 0 picks a free one)",
    )
    env_option(
        parser,
        "--allowed-host",
        f"{env_prefix}_ALLOWED_HOSTS",
        default="",
        help="comma-separated Host names to accept besides loopback (behind a proxy)",
    )
    env_option(
        parser,
        "--allowed-origin",
        f"{env_prefix}_ALLOWED_ORIGINS",
        default="",
        help="comma-separated browser Origins to accept besides loopback",
    )
    add_http_options(parser, env_prefix)
    add_replica_options(parser, env_prefix)
    env_option(
        parser,
        "--log-level",
        f"{env_prefix}_LOG_LEVEL",
        choices=LEVELS,
        default="info",
        type=str.lower,
        help="lowest level written to stderr",
    )
    env_option(
        parser,
        "--log-format",
        f"{env_prefix}_LOG_FORMAT",
        choices=("text", "json"),
        default="text",
        type=str.lower,
        help="stderr log lines as text or JSON",
    )
    _add_log_file_options(parser, env_prefix)
    env_switch(
        parser,
        "--log-dependencies",
        f"{env_prefix}_LOG_DEPENDENCIES",
        help="also log the info and debug lines of dependencies (uvicorn, httpx, watchfiles, markdown-it...) "
        "at --log-level; without it they log warnings and errors only",
    )
    return parser


def _add_log_file_options(parser: OptionTarget, env_prefix: str) -> None:
    env_option(
        parser,
        "--log-file",
        f"{env_prefix}_LOG_FILE",
        metavar="NEW_PATH",  # a path (plainmcp config makes it absolute) that need not exist yet
        help="write the log lines to this file too (stderr then keeps warnings and errors only); "
        "rotated by size, see --log-max-bytes",
    )
    env_option(
        parser,
        "--log-max-bytes",
        f"{env_prefix}_LOG_MAX_BYTES",
        metavar="BYTES",
        type=int,
        default=10 * 1024 * 1024,
        help="rotate --log-file when it reaches this size, keeping --log-backups old files; 0: never rotate "
        "(for logrotate: the file is reopened when it is moved away)",
    )
    env_option(
        parser,
        "--log-backups",
        f"{env_prefix}_LOG_BACKUPS",
        metavar="COUNT",
        type=int,
        default=5,
        help="rotated files kept beside --log-file (PATH.1 is the newest)",
    )


def add_http_options(parser: argparse.ArgumentParser, env_prefix: str) -> None:
    """Authentication, TLS and limits of the HTTP transports."""
    group = parser.add_argument_group("HTTP security and limits (http/sse)")
    _add_auth_options(group, env_prefix)
    _add_tls_and_limit_options(group, env_prefix)


def add_replica_options(parser: argparse.ArgumentParser, env_prefix: str) -> None:
    """Several processes serving one endpoint: worker processes and the shared state they need."""
    group = parser.add_argument_group("replicas (http/sse)")
    group.add_argument(
        "--redis",
        action=_EnvDefault,
        env=f"{env_prefix}_REDIS_URL",
        metavar="URL",
        help="keep the state replicas share in this Redis (redis://host:6379/0): sessions, tasks, "
        "subscriptions, the requestState keys; without it everything stays in this process "
        "(PLAINMCP_REDIS_URL, read when this server's own variable is unset, serves every server)",
    )
    group.add_argument(
        "--redis-prefix",
        action=_EnvDefault,
        env=f"{env_prefix}_REDIS_PREFIX",
        metavar="TEXT",
        help="start of every Redis key (default plainmcp:<server name>:); replicas of one service share it",
    )
    env_option(
        group,
        "--workers",
        f"{env_prefix}_WORKERS",
        type=_worker_count,
        default=1,
        help="processes serving the port (http/sse); more than one needs --redis",
    )


def _worker_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= count <= 64:
        raise argparse.ArgumentTypeError("give 1 to 64 workers")
    return count


def _group_option(group: OptionTarget, env_prefix: str) -> Callable[..., None]:
    """``option(flag, env, **kwargs)``: an option of ``group`` whose default comes from ``<env_prefix>_<env>``."""

    def option(flag: str, env: str, **kwargs: Any) -> None:
        group.add_argument(flag, action=_EnvDefault, env=f"{env_prefix}_{env}", **kwargs)

    return option


def _add_auth_options(group: OptionTarget, env_prefix: str) -> None:
    option = _group_option(group, env_prefix)

    group.add_argument(
        "--auth-token",
        action=EnvList,
        env=f"{env_prefix}_AUTH_TOKENS",
        metavar="TOKEN",
        help="accept this static bearer token (repeatable); prefer the environment "
        "variable: a command line is visible to other users",
    )
    option(
        "--jwt-secret",
        "JWT_SECRET",
        help="accept HS256 JWTs signed with this shared secret (>= 32 bytes); prefer the environment variable",
    )
    option(
        "--jwt-public-key",
        "JWT_PUBLIC_KEY",
        metavar="PEM_FILE",
        help="accept RS256/ES256 JWTs signed by the key in this PEM file",
    )
    option("--jwks-url", "JWKS_URL", help="accept JWTs signed by a key published at this JWKS URL")
    option("--jwt-issuer", "JWT_ISSUER", help="required JWT issuer (iss)")
    option("--jwt-audience", "JWT_AUDIENCE", help="required JWT audience (aud); defaults to --resource-url")
    group.add_argument(
        "--authorization-server",
        action=EnvList,
        env=f"{env_prefix}_AUTHORIZATION_SERVERS",
        metavar="URL",
        help="OAuth authorization server issuing tokens for this server "
        "(repeatable); publishes /.well-known/oauth-protected-resource",
    )
    option(
        "--resource-url",
        "RESOURCE_URL",
        help="public URL of the MCP endpoint, when a proxy changes it (metadata and JWT audience)",
    )


def _add_tls_and_limit_options(group: OptionTarget, env_prefix: str) -> None:
    option = _group_option(group, env_prefix)
    option("--certfile", "CERTFILE", help="serve HTTPS with this PEM certificate (chain)")
    option("--keyfile", "KEYFILE", help="the private key of --certfile (PEM)")
    option(
        "--max-body-bytes",
        "MAX_BODY_BYTES",
        type=int,
        default=4 * 1024 * 1024,
        help="larger request bodies are refused with 413",
    )
    option(
        "--max-sessions",
        "MAX_SESSIONS",
        type=int,
        default=1000,
        help="sessions at once per transport; past it a new one gets 503",
    )
    option(
        "--max-connections",
        "MAX_CONNECTIONS",
        type=int,
        default=1000,
        help="connections at once; idle ones give their slot up to new ones, and when every "
        "slot serves a request, requests get 503 (/health is still answered)",
    )
    option(
        "--max-connections-per-peer",
        "MAX_CONNECTIONS_PER_PEER",
        type=int,
        default=None,
        help="connections one client address may hold (default half of --max-connections; "
        "0: no cap, for a server behind a proxy)",
    )
    option(
        "--header-timeout",
        "HEADER_TIMEOUT",
        type=float,
        default=10.0,
        help="seconds a connection has to send a request head before it is closed",
    )


def http_auth(args: argparse.Namespace) -> Any:
    """The :class:`~plainmcp.http.auth.BearerAuth` the options ask for, or None. Raises ValueError for
    options that do not fit together."""
    from .http.auth import BearerAuth, StaticTokens

    authenticators: list[Any] = []
    tokens = list(getattr(args, "auth_token", None) or [])
    if tokens:
        authenticators.append(StaticTokens(tokens))
    key_sources = [args.jwt_secret, args.jwt_public_key, args.jwks_url]
    if any(key_sources):
        from .http.jwt_auth import JWTVerifier

        public_keys = []
        if args.jwt_public_key:
            with open(args.jwt_public_key, "rb") as file:
                public_keys.append(file.read())
        authenticators.append(
            JWTVerifier(
                audience=args.jwt_audience or args.resource_url or "",
                issuer=args.jwt_issuer or None,
                secret=args.jwt_secret or None,
                public_keys=public_keys,
                jwks_url=args.jwks_url or None,
            )
        )
    elif args.jwt_issuer or args.jwt_audience:
        raise ValueError("--jwt-issuer and --jwt-audience need a key: --jwt-secret, --jwt-public-key or --jwks-url")
    servers = list(args.authorization_server or [])
    if not authenticators:
        if servers:
            raise ValueError("--authorization-server needs token checking: a JWT key or --auth-token")
        return None
    return BearerAuth(authenticators, authorization_servers=servers, resource_url=args.resource_url or None)


def setup_logging(args: argparse.Namespace, own: Iterable[str] = ()) -> None:
    """Configure logging (stderr, and ``--log-file``) as the shared options say; :func:`serve` does it too, so a
    server calls this only to log before serving. ``own`` names loggers (first components) that
    belong to the server besides ``plainmcp*`` ones: their info and debug lines are never capped."""
    level = args.log_level
    log_file = getattr(args, "log_file", None) or None
    # Workers share one file: rotation by size in several processes would race, so leave it to logrotate.
    max_bytes = 0 if int(getattr(args, "workers", 1) or 1) > 1 else int(getattr(args, "log_max_bytes", 0) or 0)
    try:
        configure_logging(
            level,
            args.log_format,
            dependencies=level if getattr(args, "log_dependencies", False) else "warning",
            own=own,
            file=log_file,
            max_bytes=max_bytes,
            backups=int(getattr(args, "log_backups", 5)),
        )
    except OSError as problem:  # a directory that does not exist, a file that cannot be written
        raise SystemExit(f"--log-file {log_file}: {problem.strerror or problem}") from None


class ConfigType(Protocol[ConfigT_co]):
    """What a server's ``Config`` class offers the command line (see the root README's template)."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None: ...

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ConfigT_co: ...


def run_server_command(
    name: str,
    *,
    env_prefix: str,
    description: str,
    version: str,
    config_type: ConfigType[ConfigT],
    build_server: Callable[[ConfigT], Server],
    argv: Sequence[str] | None = None,
) -> None:
    """A server's whole ``__main__``: the shared options (:func:`server_arguments`) and the server's own
    (``config_type.add_arguments``), the configuration (``config_type.from_args``: a ``ValueError`` is a usage
    error, one line and exit 2; a :class:`StartupError` one line and exit 1), then :func:`serve` with the package
    of ``build_server`` logging at ``--log-level``. A first word ``config`` prints the server's configuration
    snippet for a client instead (:mod:`plainmcp.cli.server_config`)."""
    try:
        parser = server_arguments(name, env_prefix=env_prefix, description=description, version=version)
        config_type.add_arguments(parser)
        words = list(sys.argv[1:] if argv is None else argv)
        if words[:1] == ["config"]:  # `plainmcp-<name> config --client ...`: the server prints its own snippet
            from .cli.server_config import main as print_config

            raise SystemExit(print_config(parser, words[1:]))
        args = parser.parse_args(words)
        try:
            config = config_type.from_args(args)
        except StartupError as problem:  # valid options, but the world does not fit them
            parser.exit(1, f"{parser.prog}: {problem}\n")
        except ValueError as problem:  # a wrong option value
            parser.error(str(problem))
        serve(build_server(config), args, own_loggers=[build_server.__module__.partition(".")[0]])
    finally:
        resume_collection()  # if start-up ended early (--help, config, an error); serve() resumes it otherwise


def serve(server: Server, args: argparse.Namespace, *, own_loggers: Iterable[str] = ()) -> None:
    """Configure logging (stderr only) and serve ``server`` on the chosen transport until done.

    The loggers of the package that calls this (``acme`` for ``acme.__main__``), of ``plainmcp*``
    and those named in ``own_loggers`` log at ``--log-level``; dependencies' only warnings and
    errors unless ``--log-dependencies``. A configuration problem (conflicting options, a port
    that cannot be bound) ends the process with one line on stderr and exit code 1, and so does stdio
    with stdin or stdout closed. Ctrl-C (SIGINT) stops an HTTP server as SIGTERM does: the open streams
    end, one log line says so, exit code 0."""
    setup_logging(args, [*own_loggers, _package_of(sys._getframe(1).f_globals)])
    _share_state(server, args)
    logger.info("%s %s serving on %s", server.name, server.version, args.transport)
    resume_collection()  # start-up is over: what it made lives as long as the process (plainmcp.startup)
    if args.transport == "stdio":
        from .stdio import StdioClosedError, run_stdio

        try:
            run_stdio(server)
        except StdioClosedError as problem:  # started with `<&-` or `>&-`: one line, exit 1
            raise SystemExit(f"{server.name}: {problem}") from None
        return
    from .http.app import StartError, run_http

    try:
        auth = http_auth(args)
        if bool(args.certfile) != bool(args.keyfile):
            raise ValueError("TLS needs both --certfile and --keyfile")
    except (ValueError, OSError, RuntimeError) as problem:
        raise SystemExit(f"{server.name}: {problem}") from None
    try:
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
            max_connections_per_peer=None
            if args.max_connections_per_peer is None
            else int(args.max_connections_per_peer),
            header_timeout=float(args.header_timeout),
            workers=int(getattr(args, "workers", 1) or 1),
        )
    except StartError as problem:  # the port is taken, the address is not ours, a TLS file is unusable
        raise SystemExit(f"{server.name}: {problem}") from None
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it shut down for: a stop asked for, exit 0
        logger.info("%s stopped (Ctrl-C)", server.name)


def _share_state(server: Server, args: argparse.Namespace) -> None:
    """Give ``server`` the shared state the options ask for (``--redis``, ``PLAINMCP_STATE_KEYS``); a
    problem is one line and exit code 1."""
    from .state.options import shared_state_for

    workers = int(getattr(args, "workers", 1) or 1)
    redis_url = getattr(args, "redis", None) or os.environ.get("PLAINMCP_REDIS_URL") or None
    if workers > 1 and args.transport == "stdio":
        raise SystemExit(f"{server.name}: --workers is for the http and sse transports")
    if workers > 1 and not redis_url:
        raise SystemExit(
            f"{server.name}: --workers {workers} needs --redis URL: workers are replicas and must share state"
        )
    try:
        shared = shared_state_for(server.name, redis_url, getattr(args, "redis_prefix", None))
    except (ValueError, RuntimeError) as problem:
        raise SystemExit(f"{server.name}: {problem}") from None
    if shared is not None:
        server.share(shared)


def _package_of(module_globals: dict[str, Any]) -> str:
    """The top-level package of a module, by its globals (``acme`` for ``acme.__main__``, also when
    it runs as ``python -m acme``, where its ``__name__`` is ``__main__``)."""
    spec = module_globals.get("__spec__")
    name = getattr(spec, "name", None) or module_globals.get("__name__") or ""
    return str(name).partition(".")[0]


def _split(value: str | None, separator: str = ",") -> list[str]:
    return [item.strip() for item in (value or "").split(separator) if item.strip()]
