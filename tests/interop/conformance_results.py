"""Reading what the official conformance suite (``@modelcontextprotocol/conformance``) writes, for
both of its halves: the printed summary and the per-scenario ``checks.json`` files.

The server half (``conformance server``) prints ``=== SUMMARY ===`` and keeps each scenario's
results in ``<out>/server-<name>-<timestamp>/``; the client half (``conformance client --suite`` or
``--requirements``) prints ``=== SUITE SUMMARY ===`` and keeps them in ``<out>/<name>-<timestamp>/``,
where a name with a slash (``auth/basic-cimd``) is a subdirectory. Both print a scenario per line
(``✓ name: N passed, M failed`` and, on the client side, ``, K warnings`` when there are any),
a total, and under ``--requirements`` the ``Not scored for <revision>`` list.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER_SUMMARY = "=== SUMMARY ==="
CLIENT_SUMMARY = "=== SUITE SUMMARY ==="

SCENARIO_LINE = re.compile(
    r"^(?P<mark>[✓✗]) (?P<name>[a-z0-9_/-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed"
    r"(?:, (?P<warnings>\d+) warnings)?$"
)
TOTAL_LINE = re.compile(
    r"^Total: (?P<passed>\d+) passed, (?P<failed>\d+) failed(?:, (?P<warnings>\d+) warnings)?(?:, \d+ skipped)?$"
)
UNSCORED_HEADER = re.compile(
    r"^Not scored for (?P<revision>[\d-]+): (?P<run>\d+) scenario\(s\) run, (?P<failing>\d+) failing\."
)
UNSCORED_LINE = re.compile(r"^  (?P<mark>[✓✗]) (?P<name>[a-z0-9_/-]+) \((?P<reason>[a-z -]+)\)$")
TIMESTAMP = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z"


@dataclass
class Summary:
    scenarios: dict[str, tuple[bool, int, int]] = field(default_factory=dict)  # name -> (ok mark, passed, failed)
    warnings: dict[str, int] = field(default_factory=dict)  # name -> warnings, where the line says them
    total: tuple[int, int] | None = None  # (passed, failed)
    total_warnings: int | None = None
    unscored: dict[str, tuple[bool, str]] = field(default_factory=dict)  # name -> (ok mark, reason)
    unscored_header: tuple[str, int, int] | None = None  # (revision, run, failing)


def parse_summary(stdout: str, header: str = SERVER_SUMMARY) -> Summary:
    """The part of the suite's output after ``header``; any line it does not know fails."""
    assert stdout.count(header) == 1, stdout
    summary = Summary()
    in_unscored = False
    for line in stdout.split(header, 1)[1].splitlines():
        if match := SCENARIO_LINE.match(line):
            assert match["name"] not in summary.scenarios, f"scenario listed twice: {line}"
            summary.scenarios[match["name"]] = (match["mark"] == "✓", int(match["passed"]), int(match["failed"]))
            summary.warnings[match["name"]] = int(match["warnings"] or 0)
        elif match := TOTAL_LINE.match(line):
            summary.total = (int(match["passed"]), int(match["failed"]))
            summary.total_warnings = int(match["warnings"]) if match["warnings"] is not None else None
        elif match := UNSCORED_HEADER.match(line):
            summary.unscored_header = (match["revision"], int(match["run"]), int(match["failing"]))
            in_unscored = True
        elif in_unscored and (match := UNSCORED_LINE.match(line)):
            summary.unscored[match["name"]] = (match["mark"] == "✓", match["reason"])
        else:
            assert not line.strip(), f"unexpected summary line {line!r}"
    return summary


def read_checks(output_dir: Path, prefix: str = "server-") -> dict[str, list[dict[str, Any]]]:
    """scenario name -> its checks, from ``<output_dir>/<prefix><name>-<timestamp>/checks.json``
    (a name's slashes are subdirectories). Every leaf directory must be one scenario's results."""
    pattern = re.compile(rf"^{re.escape(prefix)}(?P<name>[a-z0-9_/-]+)-{TIMESTAMP}$")
    checks: dict[str, list[dict[str, Any]]] = {}
    for directory in sorted(path for path in output_dir.rglob("*") if path.is_dir()):
        if any(child.is_dir() for child in directory.iterdir()):
            continue  # a scenario family's folder (``auth/``)
        match = pattern.match(directory.relative_to(output_dir).as_posix())
        assert match is not None, f"unexpected entry in the output dir: {directory}"
        assert match["name"] not in checks, f"two result directories for {match['name']}"
        checks[match["name"]] = json.loads((directory / "checks.json").read_text())
    for entry in output_dir.iterdir():
        assert entry.is_dir(), f"unexpected file in the output dir: {entry}"
    return checks


def result_dir(output_dir: Path, name: str, prefix: str = "") -> Path:
    """The one results directory of scenario ``name`` (``stderr.txt`` holds the client's log)."""
    parent, _, leaf = f"{prefix}{name}".rpartition("/")
    found = [p for p in (output_dir / parent).iterdir() if re.fullmatch(rf"{re.escape(leaf)}-{TIMESTAMP}", p.name)]
    assert len(found) == 1, (name, found)
    return found[0]


def describe_check(scenario: str, check: dict[str, Any]) -> str:
    message = check.get("errorMessage") or json.dumps(check.get("details"))[:300]
    return f"{scenario}: {check['id']} {check['status']}: {message}"
