"""The ``WWW-Authenticate`` challenge of a ``401`` or ``403`` (RFC 9110 §11.6.1, RFC 6750 §3).

Only the ``Bearer`` and ``DPoP`` (RFC 9449 §7.1) challenges matter here; its parameters that the MCP authorization spec reads
are ``resource_metadata`` (RFC 9728 §5.1), ``scope`` and ``error`` (``insufficient_scope`` asks for
a step-up). A header the parser cannot read yields an empty challenge, never an exception: the
header comes from the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: A token (RFC 9110 §5.6.2), then optionally ``=`` and a quoted string or a token value.
_ITEM = re.compile(r"""\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)(?:\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*))?\s*,?""")
#: Headers longer than this are not parsed (a hostile server could send megabytes).
MAX_HEADER = 8192


@dataclass(frozen=True)
class Challenge:
    """The Bearer (else DPoP) challenge's parameters, lower-cased names; empty when there was none.
    ``schemes`` names the schemes offered, lower-cased (``{"bearer", "dpop"}``)."""

    params: dict[str, str] = field(default_factory=dict)
    schemes: frozenset[str] = frozenset()

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None

    @property
    def scopes(self) -> list[str]:
        return self.params.get("scope", "").split()

    @property
    def error(self) -> str | None:
        return self.params.get("error") or None


def parse(headers: list[str]) -> Challenge:
    """The ``Bearer`` and ``DPoP`` challenges among the values of ``WWW-Authenticate`` headers:
    the first of each; Bearer's parameters win, DPoP's fill in what Bearer lacks."""
    found: dict[str, dict[str, str]] = {}
    for value in headers:
        for scheme, params in _challenges(value[:MAX_HEADER]):
            if scheme in ("bearer", "dpop"):
                found.setdefault(scheme, params)
    merged = {**found.get("dpop", {}), **found.get("bearer", {})}
    return Challenge(merged, frozenset(found))


def _challenges(value: str) -> list[tuple[str, dict[str, str]]]:
    challenges: list[tuple[str, dict[str, str]]] = []
    position = 0
    while position < len(value):
        match = _ITEM.match(value, position)
        if match is None or match.end() == position:
            break
        position = match.end()
        name, raw = match.group(1), match.group(2)
        if raw is None:  # a bare token: a new challenge's scheme
            challenges.append((name.lower(), {}))
            continue
        if not challenges:
            continue
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        challenges[-1][1].setdefault(name.lower(), raw)
    return challenges
