"""The core's layering: the wire layer stays sans-I/O (no anyio, nothing async), error codes come
from ``ErrorCode`` only, and the public API stays what ``__all__`` says."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "packages" / "plainmcp" / "src" / "plainmcp"

WIRE_MODULES = [
    "plainmcp.jsonrpc",
    "plainmcp.framing",
    "plainmcp.errors",
    "plainmcp.sse",
    "plainmcp.versions",
    "plainmcp.protocol",
    "plainmcp.uri_template",
    "plainmcp.pagination",
]


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



def _literal_codes(source: str) -> list[int]:
    """The integer literals in JSON-RPC's reserved range (-32768..-32000) in ``source``'s code
    (docstrings and comments may name codes; only code is checked)."""
    return [
        -node.operand.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
        and 32000 <= node.operand.value <= 32768
    ]


def test_error_codes_come_only_from_error_code() -> None:
    # A literal code elsewhere can drift from the specification's table; errors.py is that table.
    literals = {
        str(path.relative_to(CORE)): codes
        for path in sorted(CORE.rglob("*.py"))
        if path.name != "errors.py" and (codes := _literal_codes(path.read_text(encoding="utf-8")))
    }
    assert literals == {}


def test_the_literal_code_check_sees_a_code_but_not_a_docstring() -> None:
    source = '"""Answers -32602."""\npayload = {"code": -32600, "size": -5, "other": 32600}\n'
    assert _literal_codes(source) == [-32600]
