"""Benchmark server: ``plainmcp_echo.py``'s server over Streamable HTTP on 127.0.0.1.

    python bench/servers/plainmcp_echo_http.py PORT

Served by plainmcp's own entry point, ``plainmcp.http.app.run_http`` (uvicorn, access log off).
"""

import sys

from plainmcp.http.app import run_http
from plainmcp_echo import server  # this directory is on sys.path when run as a script

if __name__ == "__main__":
    run_http(server, host="127.0.0.1", port=int(sys.argv[1]), transport="http")
