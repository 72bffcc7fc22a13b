"""Keeping the Open-Meteo API key out of every log line.

The key must travel in the URL (Open-Meteo reads ``apikey`` from the query), and httpx logs every
request URL at INFO; httpcore logs response headers (a ``Location`` may echo the query) at DEBUG.
So the key is kept out of what they see, in three layers:

1. :class:`SecretParams` adds the key below httpx's client, in the transport: the request httpx
   logs, keeps in exceptions and hands to redirects never carries it. A request asks for the key
   with the :data:`WANTS_SECRETS` extension, so only the Open-Meteo upstreams send it.
2. :class:`RedactSecrets`, a filter on httpx's and httpcore's loggers while a client with a key is
   open, replaces the key's value wherever it still shows up (an upstream echoing it back).
3. Our own log lines name URLs only through :func:`redact_url`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

#: Query parameters that carry a secret: added by the transport, redacted in logs, and stripped from
#: redirect targets (a ``Location`` echoing the query must not put the key into the next request).
SECRET_PARAMS = frozenset({"apikey"})
#: The request extension that asks :class:`SecretParams` for the secret parameters.
WANTS_SECRETS = "plainmcp_weather.wants_secrets"
REDACTED = "[redacted]"
#: The loggers of httpx and httpcore (each module logs to its own; a filter does not reach children).
THIRD_PARTY_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)


def redact_url(url: str) -> str:
    """``url`` with the value of every secret query parameter replaced by ``[redacted]``."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = [
        (name, REDACTED if name.lower() in SECRET_PARAMS else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(query=urlencode(pairs, safe="[]:,")))


def without_secrets(url: httpx.URL) -> httpx.URL:
    """``url`` without any secret query parameter (what a redirect may carry back to us)."""
    for name in SECRET_PARAMS:
        url = url.copy_remove_param(name)
    return url


def secret_transport(inner: httpx.AsyncBaseTransport, params: dict[str, str]) -> httpx.AsyncBaseTransport:
    """``inner`` wrapped so requests marked :data:`WANTS_SECRETS` get ``params`` added to their URL."""
    import httpx

    class SecretParams(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.extensions.get(WANTS_SECRETS):
                request = httpx.Request(
                    request.method,
                    request.url.copy_merge_params(params),
                    headers=request.headers,
                    stream=request.stream,
                    extensions=request.extensions,
                )
            return await inner.handle_async_request(request)

        async def aclose(self) -> None:
            await inner.aclose()

    return SecretParams()


def environment_transport(limits: httpx.Limits) -> httpx.AsyncBaseTransport:
    """What httpx's client builds by itself when given no transport, which a client given one (the
    :func:`secret_transport` wrapper) no longer does: a direct connection, or the proxy that
    ``HTTP_PROXY``, ``HTTPS_PROXY`` or ``ALL_PROXY`` names unless ``NO_PROXY`` exempts the host."""
    import urllib.request

    import httpx

    direct = httpx.AsyncHTTPTransport(limits=limits, trust_env=True)
    found = urllib.request.getproxies_environment()
    proxied = {
        scheme: httpx.AsyncHTTPTransport(proxy=found[scheme], limits=limits, trust_env=True)
        for scheme in ("http", "https", "all")
        if found.get(scheme)
    }
    if not proxied:
        return direct

    class ByEnvironment(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            proxy = proxied.get(request.url.scheme) or proxied.get("all")
            # proxy_bypass_environment is in the standard library, not in its stubs (typeshed).
            if proxy is None or urllib.request.proxy_bypass_environment(request.url.host):  # type: ignore[attr-defined]  # not in typeshed
                return await direct.handle_async_request(request)
            return await proxy.handle_async_request(request)

        async def aclose(self) -> None:
            for transport in (direct, *proxied.values()):
                await transport.aclose()

    return ByEnvironment()


class RedactSecrets(logging.Filter):
    """Replaces each secret value in a record's message. Attach with :meth:`attach`, remove with
    :meth:`detach`; a secret shorter than 4 characters is not searched for (it would mangle every line)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(secret for secret in secrets if len(secret) >= 4)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record is the handler's to report; it holds nothing we formatted
            return True
        if any(secret in message for secret in self.secrets):
            for secret in self.secrets:
                message = message.replace(secret, REDACTED)
            record.msg, record.args = message, None
        return True

    def attach(self) -> None:
        for name in THIRD_PARTY_LOGGERS:
            logging.getLogger(name).addFilter(self)

    def detach(self) -> None:
        for name in THIRD_PARTY_LOGGERS:
            logging.getLogger(name).removeFilter(self)
