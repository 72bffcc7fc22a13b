"""Secrets out of text that is about to be logged.

:func:`redact` replaces what looks like a credential with ``[redacted]``, keeping the words around
it so the line still says what happened. It is applied to every log line the core's formatters
write (:mod:`plainmcp.logs`), whoever logged it: our code, uvicorn, httpx, a server's own code.

What counts as a secret:

- the value of an ``Authorization`` / ``Proxy-Authorization`` / ``X-API-Key`` header, in any
  quoting (``Authorization: Bearer x``, ``'authorization': 'Basic x'``); the scheme word stays;
- a ``Bearer`` credential anywhere in running text;
- the value of a query or form parameter, or of a JSON / dict key, that names a credential
  (``apikey=``, ``api_key=``, ``key=``, ``token=``, ``access_token=``, ``client_secret=``,
  ``password=``...);
- anything shaped like a JWT (three base64url parts, the first two starting ``eyJ``, which is
  ``{"`` encoded).

It errs on the side of hiding: a false positive costs a log reader a value, a false negative
leaks a credential into files that are kept and shared.
"""

from __future__ import annotations

import functools
import re

REDACTED = "[redacted]"

# Parameter and key names that carry credentials (lower case; matched case-insensitively).
_SECRET_NAMES = (
    r"api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token"
    r"|client[_-]?secret|secret|password|passwd|pwd|signature|sig"
)

# The patterns, compiled at the first line that may hold a secret (:func:`_patterns`): compiling all
# five at import took milliseconds of every server's start-up, and most processes never need them.
_JWT = r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
_HEADER = (
    r"(?i)\b((?:proxy-)?authorization|x-api-key)([\"']?\s*[:=]\s*[\"']?)"
    # The scheme is possessive (?+): once seen it is never taken for the credential, so redacting
    # twice gives the same line.
    r"(?:(basic|bearer|digest|token|negotiate|dpop)\s+)?+(?!\[redacted\])[^\s\"',;}]+"
)
_BEARER = r"(?i)\b(bearer)\s+(?!\[redacted\])([A-Za-z0-9\-._~+/]{8,}=*)"
_PARAMETER = rf"(?i)(?<!\w)({_SECRET_NAMES})=(?!\[redacted\])[^&\s\"'#<>,;]+"
_KEY_VALUE = rf"(?i)([\"'])({_SECRET_NAMES})\1(\s*:\s*)([\"'])(?!\[redacted\])[^\"']*\4"


@functools.cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern) for pattern in (_JWT, _HEADER, _BEARER, _PARAMETER, _KEY_VALUE))


# Substrings (lower case) of everything the patterns above match: a line without any of them, which
# is most lines, is returned after a few substring scans instead of five regex passes.
_HINTS = ("eyj", "bearer", "authoriz", "key", "token", "secret", "passw", "pwd", "sig")
_HINT = re.compile("|".join(map(re.escape, _HINTS)))  # one scan of the lowered text, not one per hint
#: Every hint holds one of these letters, which access lines ("post /mcp 200 0.8 ms" and a hex request
#: id) do not: a text without them is ruled out by single-character searches (memchr), far faster than
#: a search for each hint.
_HINT_LETTERS = "ikrwy"


def _header(match: re.Match[str]) -> str:
    scheme = f"{match.group(3)} " if match.group(3) else ""
    return f"{match.group(1)}{match.group(2)}{scheme}{REDACTED}"


def _bearer(match: re.Match[str]) -> str:
    credential = match.group(2)
    if credential.isalpha() and credential.islower():
        return match.group(0)  # prose ("a bearer tokenless request"), not a credential
    return f"{match.group(1)} {REDACTED}"


def may_hold_secret(text: str) -> bool:
    """False when :func:`redact` would certainly return ``text`` unchanged (a cheap test)."""
    return _HINT.search(text.lower()) is not None


def may_hold_secret_in(text: str) -> bool:
    """:func:`may_hold_secret` for a long text (a batch of lines): one fast substring search per hint
    beats the pattern's alternation, which tries every hint at every character."""
    lowered = text.lower()
    if not any(letter in lowered for letter in _HINT_LETTERS):
        return False
    return any(hint in lowered for hint in _HINTS)


def redact(text: str) -> str:
    """``text`` with every credential-looking value replaced by ``[redacted]``."""
    if not may_hold_secret(text):
        return text
    jwt, header, bearer, parameter, key_value = _patterns()
    text = jwt.sub(REDACTED, text)
    text = header.sub(_header, text)
    text = bearer.sub(_bearer, text)
    text = parameter.sub(lambda m: f"{m.group(1)}={REDACTED}", text)
    return key_value.sub(
        lambda m: f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{m.group(4)}{REDACTED}{m.group(4)}", text
    )
