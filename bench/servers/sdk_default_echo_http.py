"""Benchmark server: ``sdk_mcpserver_echo.py``'s SDK ``MCPServer`` as its users run it by default.

    python bench/servers/sdk_default_echo_http.py PORT

``server.run("streamable-http")``: the SDK's own uvicorn set-up on an ``anyio.run`` loop, with
uvicorn's access log at its default level. ``pip install mcp`` brings plain ``uvicorn``, without
httptools or uvloop, so uvicorn picks h11: this script hides those two (they are in the benchmark's
environment for the other servers) to serve as a default install would. For information only.
"""

import sys

# A None entry makes `import httptools` fail, as it does where the package is not installed.
sys.modules["httptools"] = None  # type: ignore[assignment]  # hides an installed module
sys.modules["uvloop"] = None  # type: ignore[assignment]  # hides an installed module

from sdk_mcpserver_echo import server  # noqa: E402  (after the hiding above) this directory is on sys.path

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
