"""``OAuth``: the authorization an HTTP connection carries (``connect_http(url, auth=OAuth(...))``).

It is an :class:`httpx.Auth`: every request of the connection (POST, GET stream, DELETE) goes
through :meth:`_Flow.async_auth_flow`, which adds the bearer token, and on ``401`` (or ``403``
``insufficient_scope``) runs the flow once and sends the request again. The flow itself lives in
small modules: ``challenge`` (WWW-Authenticate), ``discovery`` (RFC 9728, RFC 8414, OpenID),
``registration`` (CIMD, pre-registered, RFC 7591), ``grants`` (authlib: PKCE, token requests,
refresh, client credentials).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import anyio
import httpx

from .authorizer import Authorizer, HeadlessAuthorizer
from .challenge import Challenge
from .challenge import parse as parse_challenge
from .discovery import resource_matches
from .dpop import USE_DPOP_NONCE
from .enterprise import AssertionRequest
from .errors import AuthorizationError
from .flow import Binding, expired, obtain
from .store import MemoryTokenStore, TokenStore

logger = logging.getLogger(__name__)

GRANTS = ("authorization_code", "client_credentials", "jwt_bearer")
#: A JWT-bearer assertion: a workload's JWT (SEP-1933), or a function (sync or async) given the
#: :class:`AssertionRequest` (which authorization server, resource, scopes) that returns one; an
#: :class:`~plainmcp.oauth.enterprise.IdJagExchange` is such a function (SEP-990).
Assertion = str | Callable[[AssertionRequest], str] | Callable[[AssertionRequest], Awaitable[str]]


class OAuth:
    """OAuth 2.1 for an MCP client, as the 2025-11-25 and 2026-07-28 authorization specs say.

    Keyword options:
        store: where records go (:class:`MemoryTokenStore` by default); see ``oauth.store``.
        authorizer: gets the user to the authorization URL (:class:`HeadlessAuthorizer` by default).
        client_id, client_secret: a pre-registered client (used before CIMD and DCR).
        client_metadata_url: this client's Client ID Metadata Document URL (used as the client_id
            when the server says ``client_id_metadata_document_supported``).
        client_name: the name registered by dynamic registration.
        scopes: scopes to ask for when the server's challenge names none (instead of the
            resource's ``scopes_supported``).
        token_endpoint_auth_method: force one (``none``, ``client_secret_basic``,
            ``client_secret_post``, ``private_key_jwt``); else chosen from the registration and
            the server's metadata.
        grant: ``"authorization_code"`` (a person or an auto-approving server),
            ``"client_credentials"`` (a machine client, the client-credentials extension) or
            ``"jwt_bearer"`` (a workload presenting its platform's JWT, SEP-1933).
        assertion: for ``jwt_bearer``, the workload's JWT, or a function (sync or async) taking an
            :class:`AssertionRequest` that returns the current one (platform tokens rotate; it is
            called per token request), e.g. ``IdJagExchange`` for enterprise-managed authorization.
        private_key: a PEM private key for ``private_key_jwt`` (client credentials);
            ``signing_algorithm`` its JWS algorithm (from the key's type when omitted).
        max_step_ups: how many times one request may re-authorize for ``insufficient_scope``.
        dpop: DPoP-bound tokens (RFC 9449): None asks for them when the resource does (a ``DPoP``
            challenge, or ``dpop_bound_access_tokens_required``) and the authorization server
            supports ES256; True whenever the server supports them; False never. See ``oauth.dpop``.

    Helpers for a command line, without an MCP session: :meth:`login`, :meth:`logout`,
    :meth:`status`.
    """

    def __init__(
        self,
        *,
        store: TokenStore | None = None,
        authorizer: Authorizer | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "plainmcp",
        scopes: list[str] | None = None,
        token_endpoint_auth_method: str | None = None,
        grant: str = "authorization_code",
        private_key: str | None = None,
        signing_algorithm: str | None = None,
        max_step_ups: int = 2,
        assertion: Assertion | None = None,
        dpop: bool | None = None,
        timeout: float = 30.0,
        verify: Any = True,
    ) -> None:
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {GRANTS}, not {grant!r}")
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.authorizer: Authorizer = authorizer if authorizer is not None else HeadlessAuthorizer()
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.scopes = list(scopes) if scopes else None
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.grant = grant
        self.private_key = private_key
        self.signing_algorithm = signing_algorithm
        self.max_step_ups = max_step_ups
        self.assertion = assertion
        self.dpop = dpop
        if grant == "jwt_bearer" and assertion is None:
            raise ValueError("the jwt_bearer grant needs an assertion (the workload's JWT)")
        self.timeout = timeout
        self.verify = verify

        self._bindings: dict[str, Binding] = {}  # server URL -> the token its connections use
        self._locks: dict[str, anyio.Lock] = {}

    def grant_options(self) -> dict[str, Any]:
        """What the token requests need of the configuration."""
        return {
            "timeout": self.timeout,
            "verify": self.verify,
            "private_key": self.private_key,
            "signing_algorithm": self.signing_algorithm,
        }

    async def workload_assertion(self, request: AssertionRequest) -> str:
        """The assertion for a ``jwt_bearer`` token request."""
        value = self.assertion(request) if callable(self.assertion) else self.assertion
        if inspect.isawaitable(value):
            value = await value
        if not isinstance(value, str) or not value:
            raise AuthorizationError("The workload identity assertion is empty", "configuration")
        return value

    def httpx_auth(self, server_url: str) -> httpx.Auth:
        """The :class:`httpx.Auth` for a connection to ``server_url`` (what ``connect_http`` installs)."""
        return _ConnectionAuth(self, server_url)

    def binding_for(self, server_url: str) -> Binding | None:
        """The token requests to ``server_url`` carry now (None before the first 401)."""
        return self._bindings.get(server_url)

    async def renew(
        self,
        server_url: str,
        challenge: Challenge,
        sent: str | None,
        *,
        step_up: bool,
        may_authorize: bool,
        headers: dict[str, str] | None = None,
    ) -> Binding:
        """A better token than ``sent`` for ``server_url``, one flow at a time per server: a request
        that waited while another renewed the token (or stepped up its scopes) takes the new one."""
        lock = self._locks.setdefault(server_url, anyio.Lock())
        async with lock:
            current = self._bindings.get(server_url)
            if current is not None and current.access_token != sent:
                # Renewed (or stepped up) while this request waited: try that token first.
                return Binding(current.issuer, current.resource, current.access_token, dpop=current.dpop)
            binding = await obtain(
                self, server_url, challenge, sent, step_up=step_up, may_authorize=may_authorize, headers=headers
            )
            self._bindings[server_url] = binding
            return binding

    async def login(self, url: str, *, force: bool = False) -> dict[str, Any]:
        """Authorize for the MCP server at ``url`` now, without an MCP session (discovery from the
        well-known locations, as without a challenge), save the record, and return its
        :meth:`status` entry. A valid stored login is kept unless ``force``."""
        binding = await obtain(self, url, Challenge(), None, force=force)
        self._bindings[url] = binding
        entries = [e for e in await self.status() if (e["issuer"], e["resource"]) == (binding.issuer, binding.resource)]
        return entries[0]

    async def logout(self, url: str) -> int:
        """Forget every record whose resource covers ``url`` (any issuer); returns how many."""
        self._bindings.pop(url, None)
        forgotten = 0
        for issuer, resource, _ in await self.store.entries():
            if resource_matches(resource, url):
                await self.store.delete(issuer, resource)
                forgotten += 1
        return forgotten

    async def status(self, url: str | None = None) -> list[dict[str, Any]]:
        """The stored logins (those covering ``url``, or all), redacted: ``issuer``, ``resource``,
        ``client_id``, ``registration``, ``scopes``, ``expires_at``, ``expired``, ``refreshable``.
        Never a token or a secret."""
        entries = []
        for issuer, resource, record in await self.store.entries():
            if url is not None and not resource_matches(resource, url):
                continue
            token: dict[str, Any] = record["token"] if isinstance(record.get("token"), dict) else {}
            client: dict[str, Any] = record["client"] if isinstance(record.get("client"), dict) else {}
            entries.append(
                {
                    "issuer": issuer,
                    "resource": resource,
                    "client_id": client.get("client_id"),
                    "registration": client.get("source"),
                    "scopes": record.get("scopes") or [],
                    "expires_at": token.get("expires_at"),
                    "expired": bool(token) and expired(token),
                    "refreshable": isinstance(token.get("refresh_token"), str),
                    "has_token": isinstance(token.get("access_token"), str),
                }
            )
        return entries


class _ConnectionAuth(httpx.Auth):
    """Bearer token on every request; on 401 / 403 ``insufficient_scope``, renew and send again.

    Per request: at most one new authorization for a 401 (a server that refuses the token it just
    got is not asked again and again), and at most ``max_step_ups`` for ``insufficient_scope``.
    Response bodies are never read here: an SSE stream passes through untouched.
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(self, oauth: OAuth, server_url: str) -> None:
        self.oauth = oauth
        self.server_url = server_url

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        binding = self.oauth.binding_for(self.server_url)
        response = yield _signed(request, binding)
        budget = _Budget(self.server_url, self.oauth.max_step_ups)
        while response.status_code in (401, 403):
            challenge = parse_challenge(response.headers.get_list("www-authenticate"))
            if binding is not None and binding.dpop is not None:
                if binding.dpop.learn_nonce(str(request.url), response.headers) and budget.nonce(challenge):
                    response = yield _signed(request, binding)  # the same token, a proof with the nonce
                    continue
            if not budget.charge(response.status_code, challenge):
                return  # a 403 that is not about scope: the transport reports it
            version = request.headers.get("mcp-protocol-version")
            # Read the refused response before the exchange: left unread, its connection stays checked out
            # for the whole authorization, and the retry meets it just as the server's keep-alive closes it.
            # Read (not closed), the connection is back in the pool, where a dropped one is noticed.
            await response.aread()
            binding = await self.oauth.renew(
                self.server_url,
                challenge,
                binding.access_token if binding is not None else None,
                step_up=response.status_code == 403,
                may_authorize=response.status_code == 403 or not budget.fresh,
                headers={"mcp-protocol-version": version} if version else {},
            )
            budget.fresh = budget.fresh or binding.fresh
            response = yield _signed(request, binding)
        if binding is not None and binding.dpop is not None:
            binding.dpop.learn_nonce(str(request.url), response.headers)  # a server may rotate it any time


class _Budget:
    """How much more one request may try: 401 renewals, step-ups, DPoP nonce retries."""

    def __init__(self, server_url: str, max_step_ups: int) -> None:
        self.server_url = server_url
        self.max_step_ups = max_step_ups
        self.unauthorized = self.step_ups = self.nonces = 0
        self.fresh = False  # a new authorization was made for this request

    def nonce(self, challenge: Challenge) -> bool:
        """Whether to retry at once with the nonce the server just gave."""
        self.nonces += 1
        return challenge.error == USE_DPOP_NONCE and self.nonces <= MAX_NONCES

    def charge(self, status: int, challenge: Challenge) -> bool:
        """Count a renewal; False for a 403 no renewal can help.

        Raises:
            AuthorizationError: the request has used up its renewals.
        """
        if status == 403:
            if challenge.error != "insufficient_scope":
                return False
            self.step_ups += 1
            if self.step_ups > self.max_step_ups:
                raise AuthorizationError(
                    f"The server at {self.server_url} still needs more scope ({' '.join(challenge.scopes)}) "
                    f"after {self.max_step_ups} re-authorizations; giving up",
                    "insufficient_scope",
                )
            return True
        self.unauthorized += 1
        if self.unauthorized > MAX_UNAUTHORIZED:
            raise AuthorizationError(f"The server at {self.server_url} keeps answering HTTP 401", "unauthorized")
        return True


#: 401s one request may answer: the stored token, a refresh, a new authorization.
MAX_UNAUTHORIZED = 3


#: ``use_dpop_nonce`` retries one request may make (a server rotating nonces on every answer
#: would otherwise loop).
MAX_NONCES = 2


def _signed(request: httpx.Request, binding: Binding | None) -> httpx.Request:
    if binding is not None:
        request.headers["authorization"] = binding.authorization()
        if binding.dpop is not None:  # a new proof for every request, retries included
            request.headers["dpop"] = binding.dpop.proof(request.method, str(request.url), binding.access_token)
    return request
