"""Which MCP servers to use: an ``mcpServers`` file (the Claude Desktop / Cursor format) and ``--server CMD``.

The format users already have::

    {"mcpServers": {
        "weather": {"command": "plainmcp-weather", "args": ["--log-level", "info"], "env": {"KEY": "v"}},
        "remote":  {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

An entry with ``"disabled": true`` is skipped, as those clients do. ``"type"`` (``stdio``, ``http``,
``streamable-http``, ``sse``) is honoured when present. ``"confirm"`` (the bridge's own field) says when
the user is asked before one of this server's tools runs: ``"unless-read-only"`` (the default: the
server's ``readOnlyHint`` is believed), ``"always"`` (its annotations are not trusted), or ``"never"``.
An HTTP server that answers ``401`` is authorized with OAuth as ``plainmcp auth login`` does (the
token file kept by the user alone, the browser and a 127.0.0.1 redirect); ``"oauth"`` (the bridge's
own field) tunes it: ``{"clientId": ..., "clientSecret": ..., "scopes": [...], "openBrowser": false}``
for a pre-registered client, other scopes, or only printing the URL; ``"oauth": false`` turns it off.
An entry with its own ``Authorization`` header never uses OAuth.
Any other shape is a ``ValueError`` naming the entry and the field.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: When the user is asked before a server's tool runs (``"confirm"`` in its entry).
CONFIRM_POLICIES = ("unless-read-only", "always", "never")
_TRANSPORTS = {"http": "auto", "streamable-http": "streamable", "streamableHttp": "streamable", "sse": "sse"}


@dataclass(frozen=True)
class ServerSpec:
    """One server: a stdio ``command`` (with ``env`` added to this process's environment) or a ``url``
    (with ``headers``; ``transport`` as :func:`plainmcp.http_client.connect_http` takes it)."""

    name: str
    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    transport: str = "auto"
    confirm: str = "unless-read-only"
    #: For a URL: the OAuth options given (``client_id``, ``client_secret``, ``scopes``,
    #: ``open_browser``; {} for none), or None when OAuth is off (``"oauth": false``). Not used
    #: when ``headers`` hold an ``Authorization`` header.
    oauth: dict[str, Any] | None = field(default_factory=dict)


def load_config(path: str | Path) -> list[ServerSpec]:
    """The enabled servers of an ``mcpServers`` file. Raises OSError when it cannot be read and
    ValueError when it is not the format (the message names the entry and field)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
    except ValueError:  # valid JSON, but a number past Python's digit limit (it has no .msg or .lineno)
        raise ValueError(f"{path}: not JSON this reads (a number of more than 4300 digits)") from None
    return parse_config(document, str(path))


def parse_config(document: Any, where: str = "config") -> list[ServerSpec]:
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f'{where}: expected an object with "mcpServers": {{name: server, ...}}')
    specs = []
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: mcpServers.{name} must be an object")
        if entry.get("disabled") is True:
            continue
        specs.append(_spec(name, entry, f"{where}: mcpServers.{name}"))
    return specs


def _spec(name: str, entry: dict[str, Any], where: str) -> ServerSpec:
    confirm = entry.get("confirm", CONFIRM_POLICIES[0])
    if confirm not in CONFIRM_POLICIES:
        raise ValueError(f"{where}.confirm must be one of {', '.join(CONFIRM_POLICIES)}; got {confirm!r}")
    return replace(_connection_spec(name, entry, where), confirm=confirm)


def _connection_spec(name: str, entry: dict[str, Any], where: str) -> ServerSpec:
    kind = entry.get("type")
    if kind is not None and kind != "stdio" and kind not in _TRANSPORTS:
        raise ValueError(f"{where}.type must be one of stdio, {', '.join(_TRANSPORTS)}; got {kind!r}")
    if "url" in entry or (kind is not None and kind != "stdio"):
        url = entry.get("url")
        if not isinstance(url, str) or not re.match(r"^https?://", url):
            raise ValueError(f"{where}.url must be an http:// or https:// URL")
        headers = _strings(entry.get("headers", {}), f"{where}.headers")
        oauth = _oauth(entry.get("oauth", {}), f"{where}.oauth")
        return ServerSpec(name, url=url, headers=headers, transport=_TRANSPORTS.get(str(kind), "auto"), oauth=oauth)
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError(f'{where} needs "command" (a stdio server) or "url" (an HTTP server)')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise ValueError(f"{where}.args must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{where}.cwd must be a string")
    return ServerSpec(name, command=(command, *args), env=_strings(entry.get("env", {}), f"{where}.env"), cwd=cwd)


def _oauth(value: Any, where: str) -> dict[str, Any] | None:
    """The ``"oauth"`` field: ``false`` (off), or an object of optional settings."""
    if value is False:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be false or an object (clientId, clientSecret, scopes, openBrowser)")
    unknown = set(value) - {"clientId", "clientSecret", "scopes", "openBrowser"}
    if unknown:
        raise ValueError(f"{where}: unknown field {sorted(unknown)[0]!r} (clientId, clientSecret, scopes, openBrowser)")
    for key in ("clientId", "clientSecret"):
        if key in value and (not isinstance(value[key], str) or not value[key]):
            raise ValueError(f"{where}.{key} must be a non-empty string")
    if "clientSecret" in value and "clientId" not in value:
        raise ValueError(f"{where}.clientSecret needs clientId")
    scopes = value.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(scope, str) and scope for scope in scopes):
        raise ValueError(f"{where}.scopes must be a list of strings")
    if not isinstance(value.get("openBrowser", True), bool):
        raise ValueError(f"{where}.openBrowser must be true or false")
    names = {
        "clientId": "client_id",
        "clientSecret": "client_secret",
        "scopes": "scopes",
        "openBrowser": "open_browser",
    }
    return {names[key]: given for key, given in value.items()}


def _strings(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{where} must be an object of strings")
    return dict(value)


def inline_server(command_line: str) -> ServerSpec:
    """``--server "plainmcp-sqlite --db x.db"``: one stdio server, named after its program (or module, for
    ``python -m``), without the ``plainmcp-`` prefix."""
    words = shlex.split(command_line)
    if not words:
        raise ValueError("--server needs a command")
    program = os.path.basename(words[0])
    if len(words) > 2 and words[1] == "-m" and program.startswith("python"):
        program = words[2].rsplit(".", 1)[-1].replace("_", "-")  # python -m plainmcp_sqlite: "sqlite"
    name = program.removeprefix("plainmcp-") or "server"
    return ServerSpec(name, command=tuple(words))


def unique_names(specs: list[ServerSpec]) -> list[ServerSpec]:
    """``specs`` with repeated names made unique (``sqlite``, ``sqlite-2``), in order."""
    seen: dict[str, int] = {}
    result = []
    for spec in specs:
        count = seen.get(spec.name, 0) + 1
        seen[spec.name] = count
        name = spec.name if count == 1 else f"{spec.name}-{count}"
        result.append(spec if name == spec.name else replace(spec, name=name))
    return result
