"""The model client: one turn against Ollama's ``/api/chat`` or an OpenAI-compatible ``/chat/completions``.

Written on httpx for both APIs, on purpose. The official ``ollama`` client (0.6) validates answers with
its pydantic types, which reject a tool call whose ``arguments`` is a string (a ValidationError instead of
a call the interceptor could repair), and it re-types the tools it sends, dropping every JSON Schema
keyword it does not model (``minimum``, ``default``, ``additionalProperties``, nested ``properties``...),
so the model would never see the constraints the interceptor enforces. The ``openai`` client would add a
second stack of types and retries, and ``import openai`` alone takes 0.4-0.5 s (this module, 0.1 s) for one POST. The official
clients' types still check our stand-in's answers in the tests, so neither API can drift.

Every turn has one deadline (``turn_timeout``) covering connection, retries and the whole stream; within
it, connection failures, 429 and 5xx are retried by :class:`~plainmcp_bridge.retry.RetryPolicy`. Cancelling
the caller's scope (Ctrl-C) closes the HTTP request at once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from .chat_apis import (
    APIS,
    OLLAMA,
    ModelError,
    ModelTurn,
    StreamReader,
    error_text,
    path_for,
    read_answer,
    request_body,
)
from .constrain import CONSTRAINED, OFF, answer_text, request_fields
from .retry import RETRY_STATUSES, RetryPolicy

logger = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 1024
DEFAULT_URLS = {OLLAMA: "http://127.0.0.1:11434", "openai": "http://127.0.0.1:11434/v1"}
#: The most of one answer kept in memory (text and calls); a longer one is an error, not an allocation.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
#: Error bodies are read up to this size.
MAX_ERROR_BYTES = 64 * 1024

_RETRIED_ERRORS = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
)


@dataclass(frozen=True)
class ModelSettings:
    """Where the model is and how to ask it. ``base_url`` defaults to the local Ollama for either API
    (its OpenAI-compatible endpoint is ``/v1``)."""

    api: str = OLLAMA
    model: str = "llama3.2"
    base_url: str | None = None
    api_key: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    stream: bool = True
    turn_timeout: float = 120.0
    connect_timeout: float = 10.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: ``format``, ``grammar``, ``decide``, ``tool-choice``: the answer is held to a shape built from the
    #: tools (:mod:`plainmcp_bridge.constrain`); ``off``.
    constrain: str = OFF
    #: Sent as ``max_tokens`` (Ollama: ``num_predict``) unless ``options`` sets it: a small model left
    #: unbounded can write until the context is full.
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        if self.api not in APIS:
            raise ValueError(f"the API must be one of {', '.join(APIS)}; got {self.api!r}")
        if self.turn_timeout <= 0:
            raise ValueError("the turn timeout must be positive")

    @property
    def url(self) -> str:
        return (self.base_url or DEFAULT_URLS[self.api]).rstrip("/") + path_for(self.api)


class _Retry(Exception):
    def __init__(self, reason: str, retry_after: str | None = None, status: int | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.status = status


class ChatModel:
    """Asks the model for one turn at a time. Use as an async context manager (it owns an HTTP client),
    or pass ``http`` to share one."""

    def __init__(self, settings: ModelSettings, *, http: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(None, connect=settings.connect_timeout))
        #: Tries of the last turn (1 when it needed no retry), and the waits between them in seconds.
        self.last_attempts = 0
        self.last_waits: list[float] = []

    async def __aenter__(self) -> ChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._own_http:
            await self._http.aclose()

    async def complete(
        self,
        messages: Iterable[Mapping[str, Any]],
        tools: Iterable[Mapping[str, Any]] = (),
        *,
        on_text: Callable[[str], Any] | None = None,
        answer_only: bool = False,
        shape: str | None = None,
    ) -> ModelTurn:
        """One model turn. ``on_text`` receives streamed text as it comes (streaming only); ``answer_only``
        (constrained mode): the answer must be in words, no call; ``shape`` (constrained mode) names the
        answer's shape instead (see :mod:`plainmcp_bridge.constrain`). Raises
        ModelError (with the endpoint's own message when it sent one), including when the turn took
        longer than ``turn_timeout``."""
        settings = self.settings
        tools = list(tools)
        constrained = settings.constrain in CONSTRAINED
        limit_key = "num_predict" if settings.api == OLLAMA else "max_tokens"
        options = {limit_key: settings.max_tokens, **settings.options}
        # Constrained, the tools are described once, in the system prompt; the schema does the rest.
        body = request_body(
            settings.api,
            settings.model,
            list(messages),
            [] if constrained else tools,
            stream=settings.stream,
            options=options,
        )
        if constrained:
            body.update(
                request_fields(settings.api, tools, answer_only=answer_only, shape=shape, mode=settings.constrain)
            )
            on_text = None  # the raw JSON is not for the user's eyes; the answer is unwrapped below
        try:
            with anyio.fail_after(settings.turn_timeout):
                turn = await self._with_retries(body, on_text)
        except TimeoutError:
            raise ModelError(f"the model did not answer within {settings.turn_timeout:g} s") from None
        if constrained and not turn.calls:
            turn.text = answer_text(turn.text)
        return turn

    async def _with_retries(self, body: dict[str, Any], on_text: Callable[[str], Any] | None) -> ModelTurn:
        attempt = 0
        self.last_waits = []
        while True:
            attempt += 1
            self.last_attempts = attempt
            reader = StreamReader(self.settings.api, on_text)
            try:
                return await self._once(body, reader)
            except _Retry as failure:
                if reader.started:
                    raise ModelError(f"the model's answer broke off: {failure}", status=failure.status) from None
                delay = self.settings.retry.delay(attempt, failure.retry_after)
                if delay is None:
                    raise ModelError(_gave_up(failure, attempt, self.settings.retry), status=failure.status) from None
                logger.info("model endpoint: %s; try %d in %.2f s", failure, attempt + 1, delay)
                self.last_waits.append(delay)
                await anyio.sleep(delay)

    async def _once(self, body: dict[str, Any], reader: StreamReader) -> ModelTurn:
        headers = {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        try:
            async with self._http.stream("POST", self.settings.url, json=body, headers=headers) as response:
                if response.status_code >= 400:
                    await self._fail(response)
                if not self.settings.stream:
                    return read_answer(self.settings.api, _json(await _read_bounded(response, MAX_ANSWER_BYTES)))
                async for line in _bounded_lines(response, MAX_ANSWER_BYTES):
                    reader.feed(line)
                    if reader.done:
                        break
                if not reader.done:
                    raise _Retry("the stream ended before its end marker")
                return reader.turn()
        except _RETRIED_ERRORS as error:
            raise _Retry(_network_words(error, self.settings.url)) from None

    async def _fail(self, response: httpx.Response) -> None:
        text = error_text(self.settings.api, await _read_bounded(response, MAX_ERROR_BYTES, cut=True))
        reason = f"HTTP {response.status_code}: {text}" if text else f"HTTP {response.status_code}"
        if response.status_code == 404 and self.settings.api == OLLAMA and "model" not in text.lower():
            reason += (
                " (no Ollama API there: for an OpenAI-compatible server such as llama-server or vLLM, use --api openai)"
            )
        if response.status_code in RETRY_STATUSES:
            raise _Retry(reason, response.headers.get("retry-after"), response.status_code)
        raise ModelError(f"the model endpoint answered {reason}", status=response.status_code)


async def _bounded_lines(response: httpx.Response, limit: int) -> AsyncIterator[str]:
    """The body's lines, counting bytes as they arrive: past ``limit`` it is an error, even within one
    line (httpx's own line reader would hold an endless line in memory)."""
    received = 0
    pending = bytearray()
    async for chunk in response.aiter_bytes():
        received += len(chunk)
        if received > limit:
            raise ModelError(f"the model's answer exceeded {limit} bytes")
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[:end])
            del pending[: end + 1]
            yield line.decode("utf-8", "replace").rstrip("\r")
    if pending:
        yield pending.decode("utf-8", "replace").rstrip("\r")


async def _read_bounded(response: httpx.Response, limit: int, *, cut: bool = False) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > limit:
            if cut:
                return bytes(data[:limit])
            raise ModelError(f"the model's answer exceeded {limit} bytes")
    return bytes(data)


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise ModelError("the model endpoint's answer is not JSON") from None


def _network_words(error: Exception, url: str) -> str:
    """What went wrong on the way to ``url``, with the URL and what to check when nothing answered."""
    hint = "is the model server running (Ollama: 'ollama serve')? --base-url points elsewhere"
    kinds: dict[type[Exception], str] = {
        httpx.ConnectError: f"cannot connect to {url} ({hint})",
        httpx.ConnectTimeout: f"connecting to {url} timed out ({hint})",
    }
    kind = kinds.get(type(error))
    return kind or "the connection broke"


def _gave_up(failure: _Retry, attempts: int, policy: RetryPolicy) -> str:
    if attempts < policy.attempts:
        return f"the model endpoint is busy ({failure}) and asks to wait longer than {policy.max_retry_after:g} s"
    tries = "1 try" if attempts == 1 else f"{attempts} tries"
    return f"the model endpoint failed after {tries}: {failure}"
