"""Serving an ASGI app for the HTTP benchmark: uvicorn, configured as plainmcp's ``run_http``
configures it (127.0.0.1, lifespan on, no access log, no log config, at most 1000 connections),
so the servers differ only in the MCP code. uvicorn's default
``http="auto"`` and ``loop="auto"`` pick httptools and uvloop when installed, as ``run_http`` does.

``MCPServer.run("streamable-http")`` would also write uvicorn's access log (a line per request at
its default level "info") and run on a plain ``anyio.run`` loop instead of uvicorn's: that would
not compare like with like, so the SDK servers are served from here.
"""

from typing import Any

import uvicorn


def serve(app: Any, port: int) -> None:
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=3,
        limit_concurrency=1000,
    )
    uvicorn.Server(config).run()
