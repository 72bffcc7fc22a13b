"""One upstream HTTP API behind timeouts, retries and a circuit breaker.

:meth:`Upstream.get_json` is the only place this server touches the network. Its failures are
:class:`UpstreamError` values whose ``message`` is a sentence for the model: it names the service
and says what to do, and never carries a URL, a status body or an exception text.
"""

from __future__ import annotations

import json
import logging
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import anyio

from .body import ACCEPT_ENCODING, BadEncoding, TooDense, TooLarge, check_density, read_capped
from .config import MAX_RESPONSE_BYTES
from .redaction import WANTS_SECRETS, redact_url, without_secrets
from .resilience import RETRYABLE_STATUSES, CircuitBreaker, RetryPolicy, parse_retry_after

if TYPE_CHECKING:
    import httpx

    from .sharing import Sharing

logger = logging.getLogger(__name__)

#: Redirects followed in one attempt, each on the same upstream (the NWS redirects long coordinates once).
MAX_REDIRECTS = 3
DEFAULT_PORTS = {"http": 80, "https": 443}
#: A wait before a retry is told to the caller at its start and again every this many seconds, so a
#: 30-second ``Retry-After`` is never silent (and a client that resets its timeout on progress keeps waiting).
WAIT_REPORT_EVERY = 5.0
#: A body up to this size is parsed on the event loop (well under a millisecond); a larger one in a
#: worker thread, one at a time (see :meth:`Upstream._parse`).
INLINE_JSON_BYTES = 64 * 1024


def _finite_or_none(text: str) -> float | None:
    number = float(text)
    return number if math.isfinite(number) else None


def loads(body: bytes | bytearray) -> Any:
    """An upstream's JSON, where ``NaN``, ``Infinity`` (which Python's parser accepts, JSON does not)
    and a number too large for a float (``1e999``) are missing values (None): they could not be
    served as JSON, nor computed with."""
    return json.loads(body, parse_constant=lambda _: None, parse_float=_finite_or_none)


@dataclass(frozen=True, slots=True)
class Wait:
    """A wait before retry ``retry`` of ``retries``: ``remaining`` seconds to go, ``waited`` already
    spent waiting in this call (it only grows: a progress value). ``problem`` names the upstream and
    what it did ("The Open-Meteo forecast service is rate-limiting requests"), never a URL or a body."""

    problem: str
    retry: int
    retries: int
    remaining: float
    waited: float

    def message(self) -> str:
        """The sentence for the client: what happened and how long until the next attempt."""
        return f"{self.problem}; retry {self.retry} of {self.retries} in {max(0, round(self.remaining))} s."


#: Told about each :class:`Wait` (see :meth:`Upstream.get_json`).
OnWait = Callable[[Wait], Awaitable[None]]


class UpstreamError(Exception):
    """A failed upstream call. ``message`` is safe to show the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unavailable(UpstreamError):
    """The upstream is unwell (timeout, 5xx, 429, unreadable answer): a stale answer may stand in."""


class CircuitOpen(Unavailable):
    """Calls to the upstream are paused after repeated failures."""


class Rejected(UpstreamError):
    """The upstream refused this request (a 4xx other than 429): retrying would not help."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Upstream:
    """Calls to one service (``label`` is how messages name it: "Open-Meteo geocoding").

    Args:
        client: the shared ``httpx.AsyncClient`` (or anything with its ``build_request`` and
            ``send``); its own redirect setting is ignored: redirects are followed here.
        base_url: the configured base URL; a redirect is followed only when it stays on its
            scheme, host and port, at most :data:`MAX_REDIRECTS` times.
        timeout: seconds per attempt, all of it: connecting, redirects, and the whole body (a body
            dripped a byte at a time ends here, not at a per-read timeout).
        max_bytes: the largest body accepted, after decoding (see :mod:`.body`).
        secrets: whether requests ask the transport for the account's secret parameters (the
            Open-Meteo API key; see :mod:`.redaction`).
        parse_limiter: the one-at-a-time limiter for parsing large bodies, shared by the upstreams
            of a server (one of its own when None).
        sleep, rand: injectable for tests (``anyio.sleep``, ``random.random``).
        name: the upstream's short name (``"forecast"``), naming its breaker and rate limit in the
            state replicas share.
        sharing: that state (:mod:`.sharing`): the breaker's failures and open circuit seen by every
            replica, and the rate limit counted across them. None: this process alone.
        rate_limit: requests at most per ``rate_window`` seconds to this upstream (0: no limit).

    ``attempts`` and ``retries`` count requests sent and retries taken, for tests and logs.
    """

    def __init__(
        self,
        label: str,
        client: Any,
        *,
        base_url: str,
        policy: RetryPolicy,
        breaker: CircuitBreaker,
        timeout: float = 10.0,
        max_bytes: int = MAX_RESPONSE_BYTES,
        headers: dict[str, str] | None = None,
        secrets: bool = False,
        parse_limiter: anyio.CapacityLimiter | None = None,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
        rand: Callable[[], float] = random.random,
        name: str = "",
        sharing: Sharing | None = None,
        rate_limit: int = 0,
        rate_window: float = 60.0,
    ) -> None:
        self.label = label
        self.name = name or label
        self.sharing = sharing
        self.rate_limit = rate_limit
        self.rate_window = rate_window
        self.client = client
        self.base_url = base_url
        self.policy = policy
        self.breaker = breaker
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.headers = {"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}
        self.extensions = {WANTS_SECRETS: True} if secrets else {}
        self.parse_limiter = parse_limiter or anyio.CapacityLimiter(1)
        self._sleep = sleep
        self._rand = rand
        self.attempts = 0
        self.retries = 0

    async def get_json(self, url: str, params: dict[str, Any] | None = None, on_wait: OnWait | None = None) -> Any:
        """GET ``url`` and decode its JSON body, retrying what is worth retrying. ``on_wait`` hears
        each wait before a retry (a backoff or a ``Retry-After``), at its start and every
        :data:`WAIT_REPORT_EVERY` seconds.

        Raises:
            see :meth:`fetch`.
        """
        return (await self.fetch(url, params, on_wait))[2]

    async def fetch(
        self,
        url: str,
        params: dict[str, Any] | None = None,
        on_wait: OnWait | None = None,
        conditions: dict[str, str] | None = None,
    ) -> tuple[int, httpx.Headers, Any]:
        """``(status, headers, decoded JSON)`` of a GET, as :meth:`get_json` makes it. With
        ``conditions`` (``If-None-Match`` / ``If-Modified-Since`` headers) a 304 is an answer too:
        ``(304, headers, None)``, the upstream's way of saying nothing changed.

        Raises:
            CircuitOpen: the breaker refuses calls for now.
            Unavailable: every attempt failed (timeout, connection, 429, 5xx), or the answer was
                unacceptable (not JSON, too large, redirected elsewhere): those are not retried.
            Rejected: a 4xx other than 429.
        """
        import httpx  # here, not at the top: the server's cold start does not need it

        retry = 0
        waited = 0.0
        while True:
            if self.sharing is not None:
                self.breaker.trip(await self.sharing.breaker_open_for(self.name))
            if not self.breaker.allow():
                wait = max(1, round(self.breaker.retry_in()))
                raise CircuitOpen(
                    f"The {self.label} service failed repeatedly, so calls to it are paused for about "
                    f"{wait} more seconds. Try again after that."
                )
            await self._within_rate_limit()
            self.attempts += 1
            retry_after: float | None = None
            try:
                with anyio.fail_after(self.timeout):
                    status, headers, body = await self._attempt(url, params, conditions)
            except (TimeoutError, httpx.TimeoutException):
                problem = f"The {self.label} service did not answer in time"
                logger.warning("%s: no complete answer within %g s (attempt %d)", self.label, self.timeout, retry + 1)
            except httpx.HTTPError as error:  # connection refused/reset, a broken response, ...
                problem = f"The {self.label} service could not be reached"
                logger.warning("%s: %s (attempt %d)", self.label, type(error).__name__, retry + 1)
            except _Unacceptable as unacceptable:
                # Not retried: an upstream that answers like this tends to again; it counts against it.
                await self._failed()
                logger.warning("%s: %s", self.label, unacceptable.reason)
                raise Unavailable(unacceptable.message(self.label)) from None
            except BaseException:
                self.breaker.release()  # cancelled: no verdict on the upstream
                raise
            else:
                if status == 200:
                    assert body is not None
                    return status, headers, await self._decode(body)
                if status == 304 and conditions:
                    await self._succeeded()
                    return status, headers, None
                if status not in RETRYABLE_STATUSES:
                    self.breaker.release()
                    logger.info("%s: HTTP %d", self.label, status)
                    raise Rejected(f"The {self.label} service refused the request.", status)
                retry_after = parse_retry_after(headers.get("retry-after"))
                if status == 429:
                    problem = f"The {self.label} service is rate-limiting requests"
                else:
                    problem = f"The {self.label} service is having trouble"
                logger.warning("%s: HTTP %d (attempt %d)", self.label, status, retry + 1)
            await self._failed()
            retry += 1
            delay = self.policy.delay(retry, retry_after, self._rand)
            if delay is None:
                raise Unavailable(_give_up(problem, retry, retry_after))
            self.retries += 1
            waited = await self._wait(delay, Wait(problem, retry, self.policy.retries, delay, waited), on_wait)

    async def _decode(self, body: bytearray) -> Any:
        """The JSON of a 200's body; the answer counts for the upstream, or against it when unreadable.

        Raises:
            Unavailable: not JSON (not retried: garbage from a 200 tends to repeat).
        """
        try:
            data = await self._parse(body)
        except (ValueError, RecursionError):
            await self._failed()
            logger.warning("%s: a 200 answer that is not JSON", self.label)
            raise Unavailable(
                f"The {self.label} service sent an answer that could not be read. Try again later."
            ) from None
        await self._succeeded()
        return data

    async def _failed(self) -> None:
        """A failure that counts against the upstream, here and (shared state) on every replica."""
        self.breaker.record_failure()
        if self.sharing is not None:
            policy = self.breaker
            self.breaker.trip(await self.sharing.breaker_failure(self.name, policy.threshold, policy.cooldown))

    async def _succeeded(self) -> None:
        self.breaker.record_success()
        if self.sharing is not None:
            await self.sharing.breaker_success(self.name)

    async def _within_rate_limit(self) -> None:
        """Wait for room under :attr:`rate_limit` (counted across replicas), at most ``max_retry_after``.

        Raises:
            Unavailable: the wait would be longer (the call fails at once, as for a long ``Retry-After``).
        """
        if self.rate_limit <= 0 or self.sharing is None:
            return
        while (wait := await self.sharing.acquire(self.name, self.rate_limit, self.rate_window)) > 0:
            if wait > self.policy.max_retry_after:
                logger.warning("%s: this server's rate limit is reached for %.0f s more", self.label, wait)
                raise Unavailable(
                    f"This server's request limit for the {self.label} service is reached; "
                    f"try again in about {max(1, round(wait))} seconds."
                )
            await self._sleep(wait)

    async def _wait(self, delay: float, wait: Wait, on_wait: OnWait | None) -> float:
        """Sleep ``delay`` seconds, telling ``on_wait`` at the start and every :data:`WAIT_REPORT_EVERY`
        seconds; returns the seconds waited in this call so far."""
        remaining, waited = delay, wait.waited
        while True:
            if on_wait is not None:
                await on_wait(replace(wait, remaining=remaining, waited=waited))
            step = min(remaining, WAIT_REPORT_EVERY)
            await self._sleep(step)
            remaining -= step
            waited += step
            if remaining <= 0:
                return waited

    async def _parse(self, body: bytearray) -> Any:
        """``json.loads(body)``, off the event loop when the body is large.

        Parsing a few MiB of small JSON values takes a tenth of a second or more, during which a
        loop thread would answer nothing, and twenty such bodies finishing together would run back
        to back in one turn of the loop. In a worker thread, one at a time, the loop gets the GIL
        back between two parses and keeps serving (``ping`` within a second).
        """
        if len(body) <= INLINE_JSON_BYTES:
            return loads(body)
        return await anyio.to_thread.run_sync(loads, body, limiter=self.parse_limiter)

    async def _attempt(
        self, url: str, params: dict[str, Any] | None, conditions: dict[str, str] | None = None
    ) -> tuple[int, httpx.Headers, bytearray | None]:
        """One attempt, redirects included: the final status, its headers, and the body of a 200.

        Raises:
            _Unacceptable: a redirect off this upstream, too many redirects, or a body refused by
                :func:`read_capped`.
            httpx.HTTPError: the request failed.
        """
        import httpx

        request = self.client.build_request(
            "GET",
            url,
            params=params,
            headers={**self.headers, **(conditions or {})},
            timeout=self.timeout,
            extensions=self.extensions,
        )
        for _ in range(MAX_REDIRECTS + 1):
            logger.debug("%s: GET %s", self.label, redact_url(str(request.url)))
            response = await self.client.send(request, stream=True, follow_redirects=False)
            try:
                if response.next_request is not None:  # a 3xx with a Location
                    request = response.next_request
                    if origin(request.url) != origin(httpx.URL(self.base_url)):
                        raise _Unacceptable("redirect", "a redirect to another host")
                    request.url = without_secrets(request.url)
                    continue
                if response.status_code != 200:
                    return response.status_code, response.headers, None
                try:
                    body = await read_capped(response, self.max_bytes)
                    check_density(body, self.max_bytes)
                except (TooLarge, TooDense) as large:
                    raise _Unacceptable("large", f"a body too large ({large})") from None
                except BadEncoding as bad:
                    raise _Unacceptable("unreadable", str(bad)) from None
                return 200, response.headers, body
            finally:
                await response.aclose()
        raise _Unacceptable("redirects", f"more than {MAX_REDIRECTS} redirects")


class _Unacceptable(Exception):
    """An answer refused whatever its status (see :meth:`Upstream._attempt`)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason

    def message(self, label: str) -> str:
        """The sentence for the model: what the upstream did, never what it said."""
        return f"The {label} service {_UNACCEPTABLE[self.kind]}"


_UNACCEPTABLE = {
    "redirect": "redirected the request to another address, which this server does not follow.",
    "redirects": "redirected the request too many times. Try again later.",
    "large": "sent an answer larger than this server accepts. Try again later.",
    "unreadable": "sent an answer that could not be read. Try again later.",
}


def origin(url: httpx.URL) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an absolute URL as httpx parsed it: lower case, an
    internationalized host in one form whether written in Unicode or punycode, and the port
    filled in for http and https."""
    port = url.port if url.port is not None else DEFAULT_PORTS.get(url.scheme, -1)
    return url.scheme, url.host, port


def _give_up(problem: str, attempts: int, retry_after: float | None) -> str:
    tried = "once" if attempts == 1 else f"{attempts} times"
    if retry_after is not None and retry_after > 0:
        return f"{problem} (tried {tried}); it asks to wait about {max(1, round(retry_after))} seconds. Try again then."
    return f"{problem} (tried {tried}). Try again in a minute."
