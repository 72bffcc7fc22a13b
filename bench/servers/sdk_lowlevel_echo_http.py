"""Benchmark server: ``sdk_lowlevel_echo.py``'s SDK low-level ``Server`` over Streamable HTTP on 127.0.0.1.

    python bench/servers/sdk_lowlevel_echo_http.py PORT

The SDK's own app (``Server.streamable_http_app``, defaults: stateful sessions, SSE responses,
DNS-rebinding protection for 127.0.0.1) under uvicorn, configured as plainmcp's ``run_http``.
"""

import sys

from sdk_http import serve  # this directory is on sys.path when run as a script
from sdk_lowlevel_echo import server

if __name__ == "__main__":
    serve(server.streamable_http_app(host="127.0.0.1"), int(sys.argv[1]))
