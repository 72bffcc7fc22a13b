"""``plainmcp config SERVER --client CLIENT``: the snippet to paste into a client (:mod:`.clients` has the formats).

The snippet names the installed command by its absolute path: desktop clients start servers with
a minimal PATH (Claude Desktop on macOS does not read the shell's profile), so ``plainmcp-<name>``
alone is often "command not found" there, while ``/home/me/.local/bin/plainmcp-<name>`` works. The
server is looked for where users install it (:mod:`.locate`: this environment, PATH, pipx, uv), and
one line on stderr says which one the snippet uses. For the same reason (the client picks the
working directory) path arguments are made absolute (:mod:`.server_args`).

Secrets (:mod:`.secrets`): for VS Code a ``--secret`` variable, an ``--env`` whose name says
key/token/secret/password, a secret server option and an ``Authorization`` (or other credential)
``--header`` become prompted ``inputs``, so its snippet never carries one. The other clients have no
prompt: there the value is written into the snippet (in ``env``, off the command line).

A path argument that names nothing is refused (exit code 3, :data:`MISSING_PATH`) unless
``--allow-missing``. Every server runs the same code for its own ``config`` subcommand
(:mod:`.server_config`), naming itself by the path of the running executable.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .clients import CLIENTS, WHERE, Launch, Remote, form_of, render
from .locate import Found, Missing, locate
from .run import FAILED, OK, USAGE
from .secrets import Prompts, looks_secret, secret_values
from .server_args import Usage, absolute_paths, path_values, read_usage, secrets_to_env
from .targets import UsageError, is_url

#: Exit code of ``config`` when a path argument does not exist (and ``--allow-missing`` is not given).
MISSING_PATH = 3

CONFIG_EXIT_CODES = (
    "exit codes:\n  0  printed\n  1  the server command is not installed\n  2  usage error\n"
    "  3  a path argument does not exist (nothing printed; --allow-missing prints the snippet anyway)"
)


class MissingPath(Exception):
    """A path argument of the server names nothing (a typo, most often): the snippet would start a
    server that fails, inside a client that shows the error in a log few users find."""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "config",
        help="print the configuration snippet for an MCP client (Claude, Claude Code, Cursor, VS Code, ...)",
        description="Print what to paste into a client's MCP configuration, with the absolute path of the "
        "installed server command. Arguments after -- are passed to the server. Each plainmcp server also "
        "prints its own: plainmcp-NAME config --client CLIENT [-- SERVER_ARG ...].",
        usage="plainmcp config [options] SERVER --client CLIENT [-- SERVER_ARG ...]",
        epilog="examples:\n"
        "  plainmcp config shop --client claude -- ~/Documents/shop.db\n"
        "  plainmcp config shop --client claude-code -- --db ~/shop.db\n"
        "  plainmcp config shop --client vscode --as link -- --db ~/shop.db\n"
        "  plainmcp config shop --client vscode --secret SHOP_API_KEY\n"
        "  plainmcp config shop --client cursor --http http://127.0.0.1:8000/mcp\n"
        "  (shop: an installed plainmcp-shop; any other server: its command's path)\n\n"
        "The server is looked for in this environment, on PATH, in pipx's venvs and in uv's tools;\n"
        "path arguments (the server's --help says which) are made absolute, a leading ~ is kept.\n\n"
        + CONFIG_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "server",
        metavar="SERVER",
        help="an installed plainmcp server, by its name with or without the plainmcp- prefix "
        "(NAME or plainmcp-NAME), or the path of any server executable",
    )
    add_options(parser)
    parser.set_defaults(run=main)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``plainmcp config`` and of every server's own ``config`` subcommand."""
    parser.add_argument("--client", choices=CLIENTS, required=True, help="the client the snippet is for")
    parser.add_argument(
        "--as",
        dest="form",
        choices=("file", "command", "link"),
        help="claude-code: command (the default: a 'claude mcp add' line) or file (.mcp.json); cursor and "
        "vscode: file (the default) or link (a one-click install link)",
    )
    parser.add_argument("--name", help="the server's key in the configuration (default: the server's short name)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the server (repeatable)",
    )
    parser.add_argument(
        "--http",
        metavar="URL",
        help="configure a server already running at this Streamable HTTP URL instead of a command",
    )
    parser.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="NAME",
        help="environment variable holding a secret (repeatable): VS Code prompts for it; for "
        "the other clients its value is taken from this shell's environment",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header for --http (repeatable), e.g. 'Authorization: Bearer ...'",
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="print the snippet even when a path argument does not exist (yet)",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="say on stderr where the server was looked for and which arguments were made absolute",
    )


def main(args: argparse.Namespace) -> int:
    return emit(args, lambda: build(args))


def emit(args: argparse.Namespace, make: Callable[[], str], prog: str = "plainmcp") -> int:
    """Print the snippet ``make()`` returns and where it goes; each failure one line and its exit code."""
    try:
        text = make()
    except UsageError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return USAGE
    except MissingPath as error:
        print(f"{prog} config: {error}", file=sys.stderr)
        return MISSING_PATH
    except LookupError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return FAILED
    print(text)
    print(WHERE["link" if args.form == "link" else args.client], file=sys.stderr)
    return OK


def build(args: argparse.Namespace, command: list[str] | None = None, usage: Usage | None = None) -> str:
    """The snippet for ``args``, as text. ``command`` (with its ``usage``) is the server when the caller
    knows it (a server printing its own snippet); else ``args.server`` is looked for. Raises
    :class:`UsageError`, :class:`MissingPath`, or LookupError when the command is not installed."""
    name = args.name or short_name(args.server)
    form = form_of(args.client, args.form)
    env = _env(args.env)
    if args.http is not None:
        if not is_url(args.http):
            raise UsageError(f"--http {args.http!r}: expected an http:// or https:// URL")
        if args.command_tail or env or args.secret:
            raise UsageError("--http configures a running server: server arguments, --env and --secret do not apply")
        return remote_entry(args.client, form, name, args.http, _headers(args.header))
    if args.header:
        raise UsageError("--header applies to --http")
    known = command is not None
    if command is None:
        command = find_command(args.server, explain=args.explain)
    named = [*env, *args.secret]  # the variables the user named, to check against the server's --help
    if command[1:2] == ["-m"] and os.environ.get("PYTHONPATH") and "PYTHONPATH" not in env:
        # Importable only through PYTHONPATH (a checkout's src directory): the client needs it too.
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p)
        print("plainmcp config: the server is importable through PYTHONPATH, so the snippet sets it", file=sys.stderr)
    server_args = list(args.command_tail or ())
    secrets = secret_values(args.secret, args.client)
    if server_args or named:
        if not known:
            usage = read_usage(command)
        server_args = _absolute_args(command, server_args, usage, args.explain)
        _check_env_names(command, named, usage)
        if usage is not None:
            if not args.allow_missing:
                _check_paths(server_args, usage)
            server_args, moved = secrets_to_env(server_args, usage, looks_secret)
            for variable, value in moved.items():
                print(
                    f"plainmcp config: a secret option moved to the environment as {variable} (a command line "
                    "is visible to every user of the machine)",
                    file=sys.stderr,
                )
                (secrets if args.client == "vscode" else env)[variable] = value
    return stdio_entry(args.client, form, name, command, server_args, env, secrets)


def _check_paths(server_args: list[str], usage: Usage) -> None:
    missing = [path for path in path_values(server_args, usage) if not os.path.exists(os.path.expanduser(path))]
    if missing:
        raise MissingPath(
            f"{', '.join(missing)}: no such file or directory (the server would fail to start; "
            "--allow-missing prints the snippet anyway)"
        )


def short_name(server: str) -> str:
    """``plainmcp-shop`` and ``/x/bin/plainmcp-shop`` -> ``shop``; other names as they are."""
    base = Path(server).name
    base = base.removesuffix(".exe")
    return base.removeprefix("plainmcp-") or base


def find_command(server: str, explain: bool = False) -> list[str]:
    """The command line that starts the server, absolute: a path as given (made absolute), else the
    installed ``plainmcp-<server>`` (:func:`.locate.locate`; one line on stderr says which), else
    ``server`` itself on PATH. Raises LookupError with the install lines."""
    if "/" in server or "\\" in server:
        path = Path(server).expanduser().resolve()
        if not path.is_file():
            raise LookupError(f"{server}: no such file")
        return [str(path)]
    found = locate(server)
    if isinstance(found, Missing) and not server.startswith("plainmcp-"):
        other = _on_path(server)  # any other server command the user named
        if other is not None:
            found = other
    if isinstance(found, Missing):
        raise LookupError(found.message())
    if explain:
        print(f"plainmcp config: looked in: {'; '.join(found.looked)}", file=sys.stderr)
    print(f"plainmcp config: using {found.describe()}", file=sys.stderr)
    return list(found.command)


def _on_path(command: str) -> Found | None:
    path = shutil.which(command)
    if path is None:
        return None
    return Found(command, (os.path.abspath(path),), None, "PATH", ("PATH",))


def _absolute_args(command: list[str], server_args: list[str], usage: Usage | None, explain: bool) -> list[str]:
    if not server_args:
        return server_args
    if usage is None:
        print(
            "plainmcp config: the server's --help shows no usage line, so its arguments are copied as written "
            "(make relative paths absolute yourself)",
            file=sys.stderr,
        )
        return server_args
    rewritten = absolute_paths(server_args, usage)
    if explain:
        changed = [
            f"{before} -> {after}" for before, after in zip(server_args, rewritten, strict=True) if before != after
        ]
        print("plainmcp config: made absolute: " + (", ".join(changed) or "nothing"), file=sys.stderr)
    return rewritten


def _check_env_names(command: list[str], names: list[str], usage: Usage | None) -> None:
    """Warn about an environment variable the server's --help does not name (a typo, most often)."""
    if usage is None or not usage.env_names:
        return
    for unknown in [n for n in names if n not in usage.env_names]:
        print(
            f"plainmcp config: warning: {Path(command[-1]).name} does not name {unknown} in its --help", file=sys.stderr
        )


def stdio_entry(
    client: str,
    form: str,
    name: str,
    command: list[str],
    args: list[str],
    env: dict[str, str],
    secrets: dict[str, str] | None = None,
) -> str:
    """The snippet that starts ``command`` over stdio. ``secrets`` (name -> value) are env too: for VS
    Code, they and every secret-looking ``env`` become prompted ``inputs`` (the values are dropped)."""
    env = {**env, **(secrets or {})}
    prompts = Prompts(name)
    if client == "vscode":
        env = {
            key: prompts.env(key) if key in (secrets or {}) or looks_secret(key) else value
            for key, value in env.items()
        }
        _note_prompts(prompts)
    launch = Launch(command[0], [*command[1:], *args], env, prompts.inputs)
    if form == "command" and any(looks_secret(key) for key in env):
        print(
            "note: the command puts the secret into your shell's history; --as file prints the JSON instead",
            file=sys.stderr,
        )
    return render(client, form, name, launch)


def remote_entry(client: str, form: str, name: str, url: str, headers: dict[str, str]) -> str:
    if client == "vscode":
        prompts = Prompts(name)
        headers = {key: prompts.header(key, value) for key, value in headers.items()}
        _note_prompts(prompts)
        if prompts.inputs:
            if form == "link":
                raise UsageError("a link would carry the credential to whoever opens it; use the file form")
            document = json.loads(render(client, form, name, Remote(url, headers)))
            return json.dumps({"inputs": prompts.inputs, **document}, indent=2, ensure_ascii=False)
    if client == "claude":
        print(
            "note: Claude Desktop's config file starts stdio servers only; this entry bridges to the URL with "
            "the npm package mcp-remote (needs Node). Remote servers can also be added under Settings > Connectors.",
            file=sys.stderr,
        )
    return render(client, form, name, Remote(url, headers))


def _note_prompts(prompts: Prompts) -> None:
    if prompts.inputs:
        print(
            "note: VS Code asks for " + ", ".join(i["id"] for i in prompts.inputs) + " when it first starts the "
            "server and keeps the answer in its secret storage; the snippet holds no secret",
            file=sys.stderr,
        )


def _env(items: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition("=")
        if not found or not key:
            raise UsageError(f"--env {item!r}: expected NAME=VALUE")
        env[key] = value
    return env


def _headers(items: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(":")
        if not found or not key.strip():
            raise UsageError(f"--header {item!r}: expected 'NAME: VALUE'")
        headers[key.strip()] = value.strip()
    return headers
