"""The ASGI scope of a request, for tests that drive an app directly (no server, no socket)."""

from __future__ import annotations

from typing import Any


def post_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """An HTTP/1.1 POST to ``path`` on 127.0.0.1:8000 from 127.0.0.1, with a Host header and ``headers``."""
    return {
        "type": "http",
        "method": "POST",
        "path": path,
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
        "query_string": b"",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
        "http_version": "1.1",
        "root_path": "",
    }
