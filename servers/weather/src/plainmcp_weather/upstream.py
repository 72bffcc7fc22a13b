"""One upstream HTTP API behind timeouts, retries and a circuit breaker.

:meth:`Upstream.get_json` is the only place this server touches the network. Its failures are
:class:`UpstreamError` values whose ``message`` is a sentence for the model: it names the service
and says what to do, and never carries a URL, a status body or an exception text.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from .resilience import RETRYABLE_STATUSES, CircuitBreaker, RetryPolicy, parse_retry_after

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)


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
        client: the shared ``httpx.AsyncClient`` (redirects followed; injected, so tests pass one
            over ``httpx.MockTransport``).
        timeout: seconds per attempt (connect, read, write and pool each).
        sleep, rand: injectable for tests (``anyio.sleep``, ``random.random``).

    ``attempts`` and ``retries`` count requests sent and retries taken, for tests and logs.
    """

    def __init__(
        self,
        label: str,
        client: httpx.AsyncClient,
        *,
        policy: RetryPolicy,
        breaker: CircuitBreaker,
        timeout: float = 10.0,
        headers: dict[str, str] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.label = label
        self.client = client
        self.policy = policy
        self.breaker = breaker
        self.timeout = timeout
        self.headers = headers or {}
        self._sleep = sleep
        self._rand = rand
        self.attempts = 0
        self.retries = 0

    async def get_json(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``url`` and decode its JSON body, retrying what is worth retrying.

        Raises:
            CircuitOpen: the breaker refuses calls for now.
            Unavailable: every attempt failed (timeout, connection, 429, 5xx) or the body was not JSON.
            Rejected: a 4xx other than 429.
        """
        import httpx  # here, not at the top: the server's cold start does not need it

        retry = 0
        while True:
            if not self.breaker.allow():
                wait = max(1, round(self.breaker.retry_in()))
                raise CircuitOpen(
                    f"The {self.label} service failed repeatedly, so calls to it are paused for about "
                    f"{wait} more seconds. Try again after that."
                )
            self.attempts += 1
            retry_after: float | None = None
            try:
                response = await self.client.get(url, params=params, headers=self.headers, timeout=self.timeout)
            except httpx.TimeoutException:
                problem = f"The {self.label} service did not answer in time"
                logger.warning("%s: timeout (attempt %d)", self.label, retry + 1)
            except httpx.HTTPError as error:  # connection refused/reset, too many redirects, ...
                problem = f"The {self.label} service could not be reached"
                logger.warning("%s: %s (attempt %d)", self.label, type(error).__name__, retry + 1)
            else:
                if response.status_code == 200:
                    try:
                        data = response.json()
                    except ValueError:
                        # Not retried: garbage from a 200 tends to repeat; it still counts against the upstream.
                        self.breaker.record_failure()
                        logger.warning("%s: a 200 answer that is not JSON", self.label)
                        raise Unavailable(
                            f"The {self.label} service sent an answer that could not be read. Try again later."
                        ) from None
                    self.breaker.record_success()
                    return data
                if response.status_code not in RETRYABLE_STATUSES:
                    self.breaker.release()
                    logger.info("%s: HTTP %d", self.label, response.status_code)
                    raise Rejected(f"The {self.label} service refused the request.", response.status_code)
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                if response.status_code == 429:
                    problem = f"The {self.label} service is rate-limiting requests"
                else:
                    problem = f"The {self.label} service is having trouble"
                logger.warning("%s: HTTP %d (attempt %d)", self.label, response.status_code, retry + 1)
            self.breaker.record_failure()
            retry += 1
            delay = self.policy.delay(retry, retry_after, self._rand)
            if delay is None:
                raise Unavailable(_give_up(problem, retry, retry_after))
            self.retries += 1
            await self._sleep(delay)


def _give_up(problem: str, attempts: int, retry_after: float | None) -> str:
    tried = "once" if attempts == 1 else f"{attempts} times"
    if retry_after is not None and retry_after > 0:
        return f"{problem} (tried {tried}); it asks to wait about {max(1, round(retry_after))} seconds. Try again then."
    return f"{problem} (tried {tried}). Try again in a minute."
