"""Secrets in a client configuration: which values are secrets, and VS Code's prompts for them.

VS Code asks for an ``inputs`` entry of type ``promptString`` with ``"password": true`` the first time
it starts the server, keeps the answer in its secret storage, and substitutes it wherever the entry is
referenced as ``${input:ID}`` (in ``env`` and ``headers``). So a VS Code snippet never holds a secret
and ``.vscode/mcp.json`` can be committed. Claude Desktop and Cursor have no such prompt.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .targets import UsageError

#: Names of environment variables, options and headers that hold credentials.
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTHORIZATION|COOKIE", re.IGNORECASE)
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def looks_secret(name: str) -> bool:
    """Whether a variable, option or header of this name holds a credential (``..._API_KEY``, ``--auth-token``)."""
    return _SECRET.search(name) is not None


class Prompts:
    """The VS Code ``inputs`` of one server's snippet, collected as secrets are met."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.inputs: list[dict[str, Any]] = []

    def ask(self, key: str, description: str) -> str:
        """A password prompt for ``key``; returns the reference to put in its place (``${input:ID}``)."""
        key = key.lower().replace("_", "-")
        ident = f"{self.server}-{key.removeprefix(f'plainmcp-{self.server}-')}"
        taken = {entry["id"] for entry in self.inputs}
        base, n = ident, 2
        while ident in taken:
            ident, n = f"{base}-{n}", n + 1
        self.inputs.append({"type": "promptString", "id": ident, "description": description, "password": True})
        return "${input:" + ident + "}"

    def env(self, name: str) -> str:
        return self.ask(name, f"{name} for the {self.server} MCP server")

    def header(self, name: str, value: str) -> str:
        """A header's value: a credential prompted (a scheme such as ``Bearer`` kept), anything else as given."""
        if not looks_secret(name):
            return value
        scheme, _, credential = value.partition(" ")
        if name.lower() in ("authorization", "proxy-authorization") and credential:
            key = "token" if name.lower() == "authorization" else "proxy-token"
            return f"{scheme} " + self.ask(key, f"{scheme} token for the {self.server} MCP server")
        return self.ask(name, f"{name} header for the {self.server} MCP server")


def secret_values(names: list[str], client: str) -> dict[str, str]:
    """``--secret NAME`` for each of ``names``: for VS Code an empty value (it will be prompted for),
    for the other clients the value of ``NAME`` in this environment. Raises :class:`UsageError`."""
    values: dict[str, str] = {}
    for name in names:
        if not _VARIABLE.fullmatch(name):
            raise UsageError(f"--secret {name!r}: expected an environment variable name")
        if client == "vscode":
            values[name] = ""
        elif name in os.environ:
            values[name] = os.environ[name]
        else:
            raise UsageError(
                f"--secret {name}: {client} has no prompt for secrets; set {name} in this shell "
                f"(its value is written into the snippet) or pass --env {name}=VALUE"
            )
    return values
