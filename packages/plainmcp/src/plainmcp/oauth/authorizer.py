"""Getting the user to the authorization endpoint and back: the :class:`Authorizer` protocol.

An authorizer knows its ``redirect_uri`` before the client registers (it is part of the client's
registration), and ``authorize(url)`` returns the query parameters the authorization server
redirected to it with (``code``, ``state``, ``iss``; or ``error``, ``error_description``). The
flow checks ``state`` and ``iss`` itself: an authorizer only carries them.

:class:`HeadlessAuthorizer` is for servers that approve without a person (the conformance suite's
authorization server, CI): it follows the redirects with httpx until one points at the
``redirect_uri``, which it never requests. A person's authorizer is
``plainmcp.oauth.loopback.LoopbackAuthorizer`` (the browser and a 127.0.0.1 listener).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl, urljoin, urlsplit

from .errors import AuthorizationError

logger = logging.getLogger(__name__)

#: Where the headless authorizer says it listens (it never does: it stops at the redirect).
HEADLESS_REDIRECT_URI = "http://127.0.0.1:33418/callback"
#: Redirects followed before giving up (a loop, or a login page that never ends).
MAX_REDIRECTS = 10


@runtime_checkable
class Authorizer(Protocol):
    redirect_uri: str

    async def authorize(self, url: str) -> dict[str, str]: ...


class HeadlessAuthorizer:
    """Follow the authorization server's redirects without a browser (auto-approving servers)."""

    def __init__(self, redirect_uri: str = HEADLESS_REDIRECT_URI, *, timeout: float = 30.0, verify: Any = True):
        self.redirect_uri = redirect_uri
        self.timeout = timeout
        self.verify = verify

    async def authorize(self, url: str) -> dict[str, str]:
        import httpx

        target = urlsplit(self.redirect_uri)
        async with httpx.AsyncClient(timeout=self.timeout, verify=self.verify, follow_redirects=False) as http:
            current = url
            for _ in range(MAX_REDIRECTS):
                response = await http.get(current)
                location = response.headers.get("location")
                if not response.is_redirect or not location:
                    raise AuthorizationError(
                        f"The authorization server answered HTTP {response.status_code} instead of redirecting "
                        "back: it needs a person (use a browser authorizer)",
                        "denied",
                    )
                current = urljoin(current, location)
                place = urlsplit(current)
                if (place.scheme, place.netloc, place.path) == (target.scheme, target.netloc, target.path):
                    return dict(parse_qsl(place.query, keep_blank_values=True))
                logger.debug("authorization redirect to %s://%s%s", place.scheme, place.netloc, place.path)
        raise AuthorizationError("The authorization server redirected too many times", "denied")
