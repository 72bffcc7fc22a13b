"""The server side of HTTP: every module that speaks ASGI, kept apart from the wire and the session.

- :mod:`.app` — :class:`~plainmcp.http.app.MCPApp`, the ASGI application (routing, limits, health,
  metrics), and :func:`~plainmcp.http.app.run_http`, which serves it with uvicorn.
- :mod:`.asgi` — the small ASGI helpers everything here shares (headers, bodies, JSON and SSE answers).
- :mod:`.exchange` — one HTTP exchange's bookkeeping: request ids, access log, body deadline.
- :mod:`.streamable` — Streamable HTTP for the legacy revisions (sessions, SSE streams, resumption)
  and the router that hands 2026-07-28 POSTs to :mod:`.stateless`, one request per exchange.
- :mod:`.legacy_sse` — the 2024-11-05 HTTP+SSE transport; :mod:`.event_buffer` — replay buffers.
- :mod:`.auth`, :mod:`.jwt_auth` — bearer tokens (static, or JWTs with the ``jwt`` extra).
- :mod:`.gateway` — plain JSON-RPC tool calls over HTTP; :mod:`.metrics`, :mod:`.telemetry` —
  Prometheus counters; :mod:`.connection_guard` — connection slots under load.

Nothing outside this package imports it except the command-line kit that starts a server on HTTP;
the client side of HTTP is :mod:`plainmcp.http_client`.
"""
