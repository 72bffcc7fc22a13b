"""The README's first command ends in `plainmcp demo`: it must run and show real answers."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_scripted_sessions_with_real_servers() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", "demo"], capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "plainmcp-notes-example 0.1.0, protocol 2025-11-25" in out
    assert '{"title": "groceries", "created": true}' in out
    assert "error -32002: Resource not found: note://nothing" in out
    assert "notifications/resources/updated note://groceries" in out
    assert "plainmcp-everything 0.1.0, versions ['2026-07-28'" in out
    assert "LLM response: Paris" in out
    assert "This is the content of the static text resource." in out
