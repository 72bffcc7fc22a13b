"""The wire layer stays sans-I/O: it must import without anyio, and import nothing async."""

from __future__ import annotations

import subprocess
import sys

WIRE_MODULES = ["plainmcp.jsonrpc", "plainmcp.errors", "plainmcp.versions", "plainmcp.protocol", "plainmcp.uri_template", "plainmcp.pagination"]


def test_wire_modules_import_without_anyio() -> None:
    # A fresh interpreter where importing anyio fails: the wire modules must still import.
    code = (
        "import sys; sys.modules['anyio'] = None\n"
        f"import importlib\nfor name in {WIRE_MODULES!r}: importlib.import_module(name)\n"
        "assert 'asyncio' not in sys.modules, 'the wire layer pulled in asyncio'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_importing_plainmcp_does_not_load_jsonschema() -> None:
    # jsonschema costs tens of milliseconds; the stdio cold path must not pay for it.
    code = "import sys, plainmcp, plainmcp.stdio, plainmcp.connection; print('jsonschema' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


def test_public_api_all_is_sorted_and_importable() -> None:
    import plainmcp

    assert plainmcp.__all__ == sorted(plainmcp.__all__)
    for name in plainmcp.__all__:
        assert getattr(plainmcp, name) is not None


def test_public_all_matches_the_lazy_export_table() -> None:
    import plainmcp

    assert sorted(plainmcp._EXPORTS) == plainmcp.__all__
