"""What an HTTP server measures about MCP: calls by method, tool and outcome, payload sizes,
sessions and streams, HTTP answers by route and status. Served at ``/metrics``.

Calls are observed by the session (``Session(observer=...)``), so every request is counted the
same way whatever transport or era brought it. Label values come from bounded sets only: the
protocol's method names and the registered tools; anything else is ``other`` / ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import protocol
from ..jsonrpc import ErrorResponse, Message, Request, Response, encode
from .metrics import Registry

if TYPE_CHECKING:
    from ..server import Server

DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
SIZE_BUCKETS = tuple(float(64 * 4**n) for n in range(10))  # 64 B .. 16 MiB

#: Outcomes of a call: answered with a result, a JSON-RPC error, a tool's ``isError`` result, a
#: 2026-07-28 ``input_required`` round, or no answer because it was cancelled.
OUTCOMES = ("ok", "error", "tool_error", "input_required", "cancelled")


def call_outcome(reply: Message | None) -> str:
    if reply is None:
        return "cancelled"
    if isinstance(reply, ErrorResponse):
        return "error"
    result = reply.result if isinstance(reply, Response) else None
    if isinstance(result, dict):
        if result.get("isError") is True:
            return "tool_error"
        if result.get("resultType") == "input_required":
            return "input_required"
    return "ok"


def _size(message: Message) -> int:
    try:
        return len(encode(message))
    except (TypeError, ValueError):
        return 0


class HTTPMetrics:
    """The metrics of one :class:`~plainmcp.http.app.MCPApp`."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.registry = registry = Registry()
        self.call_duration = registry.histogram(
            "mcp_call_duration_seconds",
            "Time to answer an MCP request, by method and tool.",
            DURATION_BUCKETS,
            ("method", "tool"),
        )
        self.call_total = registry.counter(
            "mcp_call_total",
            "MCP requests answered (or cancelled), by method, tool and outcome.",
            ("method", "tool", "outcome"),
        )
        self.input_size = registry.histogram(
            "mcp_input_size_bytes",
            "Size of each MCP request as JSON, by method and tool.",
            SIZE_BUCKETS,
            ("method", "tool"),
        )
        self.output_size = registry.histogram(
            "mcp_output_size_bytes",
            "Size of each MCP response as JSON, by method and tool.",
            SIZE_BUCKETS,
            ("method", "tool"),
        )
        self.active_sessions = registry.gauge("mcp_active_sessions", "Open MCP sessions, by transport.", ("transport",))
        self.active_streams = registry.gauge(
            "mcp_active_streams", "Open SSE response streams, by transport.", ("transport",)
        )
        self.http_responses = registry.counter(
            "mcp_http_responses_total",
            "HTTP responses, by route and status code.",
            ("route", "status"),
        )

    def track_shared_state(self) -> None:
        """``mcp_shared_state_up`` and ``mcp_shared_state_failures`` of the server's shared state, at every scrape."""
        server = self.server
        up = self.registry.gauge(
            "mcp_shared_state_up", "1 when the shared state store answered its last command.", ("kind",)
        )
        failures = self.registry.gauge(
            "mcp_shared_state_failures", "Commands that could not reach the shared state store, since start.", ("kind",)
        )
        up.collect_with(lambda: [({"kind": server.shared.kind}, server.shared.counters()["up"])])
        failures.collect_with(lambda: [({"kind": server.shared.kind}, server.shared.counters()["failures"])])

    def track_sessions(self, transport: str, count: Callable[[], int]) -> None:
        """Report ``count()`` as the open sessions of ``transport`` at every scrape."""
        self.active_sessions.collect_with(lambda: [({"transport": transport}, float(count()))])

    def observe_call(self, request: Request, reply: Message | None, seconds: float) -> None:
        """The session observer (``Session(observer=...)``)."""
        method = request.method if request.method in protocol.SERVER_REQUEST_METHODS else "other"
        tool = ""
        if method == protocol.TOOLS_CALL:
            name = (request.params or {}).get("name")
            tool = name if isinstance(name, str) and name in self.server.tools else "unknown"
        # Label values in the order the metrics declare them: (method, tool[, outcome]).
        key = (method, tool)
        self.call_duration.observe_at(key, seconds)
        self.call_total.inc_at((method, tool, call_outcome(reply)))
        self.input_size.observe_at(key, _size(request))
        if reply is not None:
            self.output_size.observe_at(key, _size(reply))

    def exposition(self) -> bytes:
        return self.registry.exposition()
