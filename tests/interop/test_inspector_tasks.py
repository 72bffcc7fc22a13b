"""The official MCP Inspector CLI (2.12.0) calling a tool that requires a task, over stdio, in both eras:
``failing_job`` has ``execution.taskSupport: "required"``, so the Inspector runs it as a task (legacy:
``params.task``, then ``tasks/result``; modern: the ``io.modelcontextprotocol/tasks`` extension, then
``tasks/get`` polls). Were the call not a task, the server would refuse it (-32601 in 2025-11-25, -32021
in 2026-07-28) instead of returning the job's tool error."""

from __future__ import annotations

import sys

import pytest

from .test_inspector_cli import inspector  # noqa: F401  (the fixture)

pytestmark = pytest.mark.interop

EVERYTHING = [sys.executable, "-m", "plainmcp_everything"]
FAILING_TEXT = "failing_job failed on purpose"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_runs_a_required_task_to_its_end(inspector, era):  # noqa: F811
    run = inspector.run(EVERYTHING, "--method", "tools/call", "--tool-name", "failing_job", era=era, expect=5)
    result = run.result
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": FAILING_TEXT}]
    if era == "legacy":
        # tasks/result's answer names the task it came from.
        assert set(result["_meta"]["io.modelcontextprotocol/related-task"]) == {"taskId"}
