"""The official conformance suite's skills-extension scenarios (SEP-2640, issue 29.3), both halves, in
both eras (``--spec-version 2025-11-25`` and ``2026-07-28``; extension scenarios are not on the
revision timeline, so each run says ``--force``):

- server: ``sep-2640-skills-directory``, ``-enumeration`` and ``-manifest`` against a real
  ``plainmcp-prompts`` process serving Streamable HTTP on 127.0.0.1 over a skills folder written
  here (a skill with a subfolder and a binary file: what the directory checks descend into). Every
  check of the pinned list is ``SUCCESS``; the one exception is the pair of caching checks, which
  the suite itself skips below 2026-07-28 ("not applicable on negotiated protocol"), and only there.
- client: ``sep-2640-client-no-prefetch``, ``-verify-digest``, ``-verify-size`` and
  ``-verify-frontmatter``, the suite's scenario servers driving
  ``python -m tests.interop.conformance_client`` (the plainmcp client through its public API);
  each scenario's check is ``SUCCESS``, and the client's log shows the era it spoke.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.http_server import free_port, stop_process, wait_healthy

from .http_server import HOST, ROOT, node_tools

pytestmark = pytest.mark.interop

ERAS = ["2025-11-25", "2026-07-28"]
RUN_TIMEOUT = 120.0
SCENARIO_TIMEOUT_MS = 20000
START_TIMEOUT = 20.0

#: Every check each server scenario makes (pinned: one that disappears, or a new one, is noticed).
SERVER_CHECKS = {
    "sep-2640-skills-directory": {
        "sep-2640-capability-directory-read-flag",
        "sep-2640-directory-read-method-registered",
        "sep-2640-directory-read-result-resources-shape",
        "sep-2640-directory-read-subdir-mimetype",
        "sep-2640-directory-read-invalid-params",
        "sep-2640-directory-read-pagination",
    },
    "sep-2640-skills-enumeration": {
        "sep-2640-capability-declaration-inline",
        "sep-2640-capability-requires-resources",
        "sep-2640-capability-commits-to-methods",
        "sep-2640-capability-empty-object",
        "sep-2640-skills-list-implemented",
        "sep-2640-skills-list-pagination",
        "sep-2640-skills-list-entry-atomic",
        "sep-2640-skills-list-cache-attributes",
        "sep-2640-entry-uri-required",
        "sep-2640-entry-frontmatter-required",
        "sep-2640-entry-uri-matches-frontmatter-name",
        "sep-2640-skill-uri-scheme",
        "sep-2640-entry-resources-required",
        "sep-2640-resources-complete",
        "sep-2640-resources-uri-within-skill",
        "sep-2640-resources-digest-format",
        "sep-2640-resources-size-required",
        "sep-2640-limit-resources-per-skill",
        "sep-2640-limit-total-size",
        "sep-2640-metadata-reserved-prefix",
        "sep-2640-name-naming-rules",
        "sep-2640-authority-reg-name",
        "sep-2640-names-should-be-unique",
        "sep-2640-skills-get-implemented",
        "sep-2640-skills-get-entry-shape",
        "sep-2640-skills-get-cache-attributes",
        "sep-2640-skills-get-no-cursor",
        "sep-2640-skills-get-unknown-uri-invalid-params",
        "sep-2640-skillmd-required",
        "sep-2640-skillmd-frontmatter",
        "sep-2640-entry-frontmatter-identical",
    },
    "sep-2640-skills-manifest": {
        "sep-2640-skillmd-mimetype",
        "sep-2640-skillmd-metadata-name",
        "sep-2640-skillmd-metadata-description",
        "sep-2640-final-segment-equals-name",
        "sep-2640-meta-prefix",
    },
}
#: The suite's own skips: caching attributes exist from 2026-07-28 on.
SUITE_SKIPS = {
    "2025-11-25": {"sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"},
    "2026-07-28": set(),
}
CLIENT_CHECKS = {
    "sep-2640-client-no-prefetch": "sep-2640-host-no-prefetch",
    "sep-2640-client-verify-digest": "sep-2640-host-verify-digest",
    "sep-2640-client-verify-size": "sep-2640-host-size-mismatch-failure",
    "sep-2640-client-verify-frontmatter": "sep-2640-host-frontmatter-comparison",
}

SKILL = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  version: "2.1.0"
---
# PDF processing

Read references/FORMS.md, then pick a template from templates/.
"""


def write_library(root: Path) -> None:
    files = {
        "pdf-processing/SKILL.md": SKILL,
        "pdf-processing/references/FORMS.md": "# Forms\n\nName, date.\n",
        "pdf-processing/templates/invoice.md": "Invoice\n",
        "pdf-processing/templates/regional/eu-invoice.md": "EU invoice\n",
        # Listed second: the directory scenario descends into the first skill listed, and this one has no subfolder.
        "release-notes/SKILL.md": "---\nname: release-notes\ndescription: Write the release notes\n---\nSteps.\n",
        "greet.md": "Hello {{who}}\n",
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "pdf-processing/assets").mkdir()
    (root / "pdf-processing/assets/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")


def read_checks(output_dir: Path) -> list[dict[str, Any]]:
    found = list(output_dir.glob("*/checks.json"))
    assert len(found) == 1, found
    checks: list[dict[str, Any]] = json.loads(found[0].read_text())
    return checks


def run_suite(arguments: list[str], tmp_path: Path, label: str) -> tuple[list[dict[str, Any]], str]:
    """One ``conformance`` run; its checks and a report to quote in failures."""
    tools = node_tools()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    output_dir = tmp_path / f"results-{label}"
    command = [str(tools.conformance), *arguments, "-o", str(output_dir)]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=tools.env(home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"the conformance suite did not finish within {RUN_TIMEOUT}s: {command}\n{timeout.stdout!r}")
    report = f"command: {command}\nexit code: {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return read_checks(output_dir), report


@pytest.fixture(scope="module")
def prompts_server():
    """``plainmcp-prompts`` serving a skills folder over Streamable HTTP on a free loopback port."""
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryFile() as log:
        library = Path(scratch) / "library"
        write_library(library)
        port = free_port()
        command = [
            sys.executable,
            "-m",
            "plainmcp_prompts",
            "--transport",
            "http",
            "--host",
            HOST,
            "--port",
            str(port),
            "--no-bundled",
            "--no-watch",
            "--dir",
            str(library),
        ]
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_healthy(f"http://{HOST}:{port}", time.monotonic() + START_TIMEOUT, lambda: process.poll() is None)
            yield f"http://{HOST}:{port}/mcp", process, log
        finally:
            stop_process(process)


def server_log(log: Any) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", "replace")


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("scenario", sorted(SERVER_CHECKS))
def test_conformance_skills_server_scenario_passes(prompts_server, scenario, era, tmp_path):
    url, process, log = prompts_server
    arguments = ["server", "--url", url, "--scenario", scenario, "--spec-version", era, "--force"]
    arguments += ["--timeout", str(SCENARIO_TIMEOUT_MS)]
    checks, report = run_suite(arguments, tmp_path, scenario)
    statuses = {check["id"]: check["status"] for check in checks}
    assert process.poll() is None, f"the server died\n{server_log(log)}"
    # The suite's schema check of every message sent rides along with each scenario.
    assert set(statuses) == SERVER_CHECKS[scenario] | {"wire-schema-valid"}, report
    skipped = {check_id for check_id, status in statuses.items() if status == "SKIPPED"}
    assert skipped == SERVER_CHECKS[scenario] & SUITE_SKIPS[era], report
    for check in checks:
        if check["id"] in skipped:
            assert f"not applicable on negotiated protocol {era}" in check["errorMessage"], check
        else:
            assert check["status"] == "SUCCESS", f"{check['id']}: {check.get('errorMessage')}\n{report}"
    bad = [line for line in server_log(log).splitlines() if " ERROR " in line or line.startswith("Traceback")]
    assert not bad, bad


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("scenario", sorted(CLIENT_CHECKS))
def test_conformance_skills_client_scenario_passes(scenario, era, tmp_path):
    command = f"{sys.executable} -m tests.interop.conformance_client"
    arguments = ["client", "--command", command, "--scenario", scenario, "--spec-version", era, "--force"]
    arguments += ["--timeout", str(SCENARIO_TIMEOUT_MS)]
    checks, report = run_suite(arguments, tmp_path, scenario)
    statuses = {check["id"]: check["status"] for check in checks}
    assert statuses.get(CLIENT_CHECKS[scenario]) == "SUCCESS", report
    assert all(status == "SUCCESS" for status in statuses.values()), report
    client_log = next((tmp_path / f"results-{scenario}").glob("*/stderr.txt")).read_text()
    assert f"connected at protocol version {era}" in client_log, client_log
