"""What the official SDK's client sent and received, recorded: the taps both SDK harnesses put around
the SDK's transport streams (``sdk_client`` for the legacy era, ``sdk_modern`` for 2026-07-28).

``Wire.inbound`` / ``Wire.outbound`` hold every JSON-RPC message in wire order as plain JSON dicts,
so a test can assert what crossed (and what did not) next to what the SDK's typed API returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.shared.message import SessionMessage


def as_json(item: SessionMessage | Exception) -> dict[str, Any]:
    if isinstance(item, Exception):
        return {"exception": repr(item)}
    return item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


@dataclass
class Wire:
    """Everything that crossed the pipe, in order, plus what the SDK surfaced to ``message_handler``."""

    inbound: list[dict[str, Any]] = field(default_factory=list)
    outbound: list[dict[str, Any]] = field(default_factory=list)
    #: Everything the SDK passed to ``message_handler``, transport exceptions included.
    surfaced: list[Any] = field(default_factory=list)
    #: The server notifications among them.
    notifications: list[Any] = field(default_factory=list)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def poke(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def on_message(self, message: Any) -> None:
        """An SDK ``message_handler``: server notifications (and transport exceptions)."""
        self.surfaced.append(message)
        if not isinstance(message, Exception):
            self.notifications.append(message)
        self.poke()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait (bounded) until ``predicate()`` is truthy; return its value."""
        with anyio.fail_after(timeout):
            while not (value := predicate()):
                changed = self._changed
                await changed.wait()
            return value

    def inbound_with(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.inbound if m.get("method") == method]

    def outbound_with(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.outbound if m.get("method") == method]

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.outbound if "method" in m and "id" in m]

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.inbound if "method" not in m and m.get("id") == request_id]

    def response_to(self, request: dict[str, Any]) -> dict[str, Any]:
        (response,) = self.responses_to(request["id"])
        return response

    def last_exchange(self, method: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The last request of ``method`` the SDK sent, and the server's one response to it."""
        request = self.outbound_with(method)[-1]
        return request, self.response_to(request)


class TapRead:
    """A read stream that records what it yields."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        self._wire.inbound.append(as_json(item))
        self._wire.poke()
        return item

    def __aiter__(self) -> TapRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> TapRead:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


class TapWrite:
    """A write stream that records what it sends."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def send(self, item: SessionMessage) -> None:
        self._wire.outbound.append(as_json(item))
        self._wire.poke()
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> TapWrite:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
