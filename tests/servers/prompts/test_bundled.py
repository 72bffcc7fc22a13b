"""The bundled library: every prompt parses cleanly and renders with its required arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from plainmcp_prompts.completion import History
from plainmcp_prompts.config import BUNDLED_DIR
from plainmcp_prompts.library import Library
from plainmcp_prompts.rendering import render_prompt

BUNDLED = Library([BUNDLED_DIR])
BUNDLED.scan()


def test_bundled_library_has_no_problems_and_enough_prompts():
    assert BUNDLED.problems == []
    assert 6 <= len(BUNDLED.prompts) <= 10
    assert all(spec.description and spec.title for spec in BUNDLED.prompts.values())


def test_bundled_library_has_multi_turn_prompts_and_allowed_values():
    assert any(len({m.role for m in spec.messages}) == 2 for spec in BUNDLED.prompts.values())
    assert any(a.values for spec in BUNDLED.prompts.values() for a in spec.arguments)


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(BUNDLED.prompts))
async def test_bundled_prompt_renders_with_its_required_arguments(name):
    spec = BUNDLED.prompts[name]
    values = {a.name: f"<{a.name}>" for a in spec.arguments if a.required}
    result = await render_prompt(BUNDLED, History(), spec, values)
    text = "\n".join(m["content"].get("text") or m["content"]["resource"]["text"] for m in result["messages"])
    assert all(value in text for value in values.values())
    assert "{{" not in text  # every placeholder was substituted


def test_bench_quick_run_serves_both_sides():
    bench = Path(__file__).resolve().parents[3] / "bench" / "prompts_bench.py"
    run = subprocess.run([sys.executable, str(bench), "--quick"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "prompts/list" in run.stdout and "prompts/get" in run.stdout
