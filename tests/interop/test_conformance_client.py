"""The official MCP conformance suite's *client* half (``@modelcontextprotocol/conformance``
0.2.0-alpha.12) against the plainmcp client, once per protocol revision.

Each run is ``conformance client --command "<python> -m tests.interop.conformance_client"
--requirements <revision> -o <dir>``: the suite starts a scenario server per scenario (all at once)
and runs the conformance client against it (``tests/interop/conformance_client``, built on the public
client API only). The scenario set of each revision is pinned; one test per scenario asserts, from
the printed summary and that scenario's ``checks.json``, that it passed with no ``FAILURE`` and no
``WARNING``, that the only ``SKIPPED`` checks are the suite's own (named in ``SUITE_SKIPS``), and
that the client process ended its scenario rather than being killed at the timeout (its log,
``stderr.txt``, says ``client done``, or ``client failed`` where the suite expects the client to
refuse to go on; the suite does not report a client's exit code per scenario). For the scenarios played by ``core.py``
the exact checks are pinned too, so a check that silently stops running is noticed.

The ``auth/*`` scenarios are part of the pinned set like any other, scored or not (the suite runs the
client-credentials, enterprise, DPoP and workload-identity extensions under ``--requirements`` as
unscored ``extension`` scenarios): each fails on its own until the client implements it. The skills
extension's client scenarios (``sep-2640-client-*``) are not in any requirement set and run one by
one with ``--scenario``.

The per-revision totals are printed (uncaptured) for the release notes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conformance_results import CLIENT_SUMMARY, Summary, describe_check, parse_summary, read_checks, result_dir
from .http_server import ROOT, node_tools

pytestmark = pytest.mark.interop

#: Bound for one whole suite run (the scenarios run in parallel: a few seconds).
RUN_TIMEOUT = 180.0
SCENARIO_TIMEOUT_MS = 60000
#: What the conformance client logs when a scenario ran to its end, or raised (``__main__.py``).
CLIENT_DONE = "client done"
CLIENT_FAILED = "client failed"

AUTH_BOTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
AUTH_2026 = [
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
#: Extension scenarios the suite runs under ``--requirements`` (unscored, reason ``extension``).
AUTH_EXTENSIONS = [
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
]

# The scenarios the pinned suite runs per revision (``conformance list``, frozen requirement sets).
SCENARIOS = {
    "2025-11-25": [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        *AUTH_BOTH,
        *AUTH_EXTENSIONS,
        "json-schema-2020-12-preservation",
    ],
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        *AUTH_BOTH,
        *AUTH_2026,
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        *AUTH_EXTENSIONS,
        "json-schema-2020-12-preservation",
    ],
}
UNSCORED = {
    revision: {**dict.fromkeys(AUTH_EXTENSIONS, "extension"), "json-schema-2020-12-preservation": "added-after-release"}
    for revision in SCENARIOS
}

#: Extension scenarios outside every requirement set, run with ``--scenario``.
EXTENSION_SCENARIOS = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]

#: Scenarios where the right client refuses to go on, so its error exit is expected and the suite
#: ignores it (``allowClientError``): a retry limit reached, a token for another resource, a wrong or
#: missing ``iss``. The checks judge what it sent; since a client that failed early for another reason
#: (a dropped connection) would pass fewer of them and fail none, their number is pinned, per
#: revision: scenario -> successful checks.
CLIENT_MAY_FAIL: dict[str, dict[str, int]] = {
    "auth/scope-retry-limit": {"2025-11-25": 26, "2026-07-28": 27},
    "auth/resource-mismatch": {"2026-07-28": 2},
    "auth/iss-supported-missing": {"2026-07-28": 8},
    "auth/iss-wrong-issuer": {"2026-07-28": 8},
    "auth/iss-unexpected": {"2026-07-28": 8},
    "auth/iss-normalized": {"2026-07-28": 8},
    "auth/metadata-issuer-mismatch": {"2026-07-28": 3},
}

#: Checks the suite itself reports SKIPPED for a correct client: (revision, scenario) -> check names.
#: A 2026-07-28 client has no ``initialize`` handshake, so the standard-headers scenario cannot see
#: the Mcp-Method header on the two legacy lifecycle messages it lists.
SUITE_SKIPS = {
    ("2026-07-28", "http-standard-headers"): {
        "ClientMcpMethodHeader_initialize",
        "ClientMcpMethodHeader_notifications_initialized",
    },
}

_SCHEMA_PRESERVED = {
    "json-schema-2020-12-client-tool-found": 1,
    "json-schema-2020-12-client-echo-completed": 1,
    "json-schema-2020-12-client-$schema-preserved": 1,
    "json-schema-2020-12-client-$defs-preserved": 1,
    "json-schema-2020-12-client-additionalProperties-preserved": 1,
    "sep-2106-client-composition-keywords-preserved": 1,
    "sep-2106-client-conditional-keywords-preserved": 1,
    "sep-2106-client-anchor-keyword-preserved": 1,
    "wire-schema-valid": 1,
}
#: The successful checks (id -> how many) of each scenario ``core.py`` plays, exactly.
CORE_CHECKS: dict[str, dict[str, int]] = {
    "initialize": {"mcp-client-initialization": 1},
    "tools_call": {"tool-add-numbers": 1, "wire-schema-valid": 1},
    "elicitation-sep1034-client-defaults": {
        f"client-elicitation-sep1034-{kind}-default": 1 for kind in ("string", "integer", "number", "enum", "boolean")
    },
    "sse-retry": {"client-sse-graceful-reconnect": 1, "client-sse-retry-timing": 1, "client-sse-last-event-id": 1},
    "request-metadata": dict.fromkeys(
        [
            "sep-2575-http-client-sends-version-header",
            "sep-2575-client-populates-meta",
            "sep-2575-client-sends-client-info",
            "sep-2575-http-version-header-matches-meta",
            "sep-2575-client-declares-roots-capability",
            "sep-2575-client-declares-sampling-capability",
            "sep-2575-client-declares-elicitation-capability",
            "sep-2575-client-retry-supported-version",
        ],
        1,
    ),
    "sep-2322-client-request-state": dict.fromkeys(
        [
            "sep-2322-client-parallel-isolation",
            "sep-2322-client-request-state-echoed",
            "sep-2322-client-jsonrpc-id-different",
            "sep-2322-client-no-state-omitted",
            "sep-2322-default-result-type-complete",
        ],
        1,
    ),
    # Every method and name header but the two legacy lifecycle ones (SUITE_SKIPS).
    "http-standard-headers": {"sep-2243-client-includes-standard-headers": 9},
    "http-custom-headers": {
        "sep-2243-client-supports-custom-headers": 1,
        "sep-2243-client-mirrors-designated-params": 6,
        "sep-2243-client-encode-values": 3,
        "sep-2243-client-base64-unsafe": 7,
        "sep-2243-client-omit-null": 1,
    },
    "http-invalid-tool-headers": {
        "sep-2243-client-reject-invalid-tool": 1,
        "sep-2243-x-mcp-header-not-empty": 1,
        "sep-2243-x-mcp-header-primitive-only": 4,
        "sep-2243-x-mcp-header-unique": 2,
        "sep-2243-x-mcp-header-charset": 4,
    },
    "json-schema-ref-no-deref": {"sep-2106-no-network-ref-deref": 1},
    "json-schema-2020-12-preservation": _SCHEMA_PRESERVED,
}

# ------------------------------------------------------------------------------------ running


def client_command() -> str:
    """The ``--command`` the suite runs (it splits it on spaces and appends the scenario's URL)."""
    assert " " not in sys.executable, f"the suite splits --command on spaces: {sys.executable!r}"
    return f"{sys.executable} -m tests.interop.conformance_client"


@dataclass
class SuiteRun:
    arguments: list[str]
    returncode: int
    stdout: str
    stderr: str
    output_dir: Path

    @property
    def report(self) -> str:
        tail = "\n".join(self.stderr.splitlines()[-80:])
        return (
            f"command: {self.arguments}\nexit code: {self.returncode}\nstdout:\n{self.stdout}\nstderr (tail):\n{tail}"
        )

    def client_log(self, scenario: str) -> str:
        return (result_dir(self.output_dir, scenario) / "stderr.txt").read_text()


def run_suite(selection: list[str], output_dir: Path, home: Path) -> SuiteRun:
    """``conformance client --command <ours> <selection> -o <output_dir>``, bounded."""
    tools = node_tools()
    arguments = [
        str(tools.conformance),
        "client",
        "--command",
        client_command(),
        *selection,
        "--timeout",
        str(SCENARIO_TIMEOUT_MS),
        "-o",
        str(output_dir),
    ]
    env = tools.env(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    try:
        done = subprocess.run(
            arguments,
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"the conformance suite did not finish within {RUN_TIMEOUT}s: {arguments}\n{timeout.stdout!r}")
    return SuiteRun(arguments, done.returncode, done.stdout, done.stderr, output_dir)


_RUNS: dict[str, tuple[SuiteRun, Summary, dict[str, list[dict[str, Any]]]]] = {}


def requirements_run(revision: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteRun, Summary, Any]:
    """The suite's ``--requirements <revision>`` run, once per test session, parsed."""
    if revision not in _RUNS:
        base = tmp_path_factory.mktemp(f"conformance-client-{revision}")
        (base / "home").mkdir()
        run = run_suite(["--requirements", revision], base / "results", base / "home")
        assert f"Running requirements {revision} ({len(SCENARIOS[revision])} scenarios)" in run.stdout, run.report
        _RUNS[revision] = (run, parse_summary(run.stdout, CLIENT_SUMMARY), read_checks(base / "results", prefix=""))
    return _RUNS[revision]


def assert_scenario_passed(
    revision: str, scenario: str, checks: list[dict[str, Any]], client_log: str, context: str
) -> None:
    """No FAILURE or WARNING, SKIPPED only as the suite's own, something passed, the client finished."""
    statuses = Counter(check["status"] for check in checks)
    assert set(statuses) <= {"SUCCESS", "FAILURE", "WARNING", "INFO", "SKIPPED"}, (scenario, statuses)
    bad = [describe_check(scenario, c) for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, "\n".join(bad) + f"\nclient log:\n{client_log[-3000:]}\n{context}"
    skipped = {c["name"] for c in checks if c["status"] == "SKIPPED"}
    assert skipped == SUITE_SKIPS.get((revision, scenario), set()), [
        describe_check(scenario, c) for c in checks if c["status"] == "SKIPPED"
    ]
    assert statuses["SUCCESS"] >= 1, checks
    if scenario in CLIENT_MAY_FAIL:
        ended = CLIENT_DONE in client_log or CLIENT_FAILED in client_log
        assert statuses["SUCCESS"] == CLIENT_MAY_FAIL[scenario][revision], [describe_check(scenario, c) for c in checks]
    else:
        ended = CLIENT_DONE in client_log and CLIENT_FAILED not in client_log
    assert ended, f"the client did not finish its scenario:\n{client_log[-5000:]}"
    if scenario in CORE_CHECKS:
        passed = Counter(c["id"] for c in checks if c["status"] == "SUCCESS")
        assert passed == CORE_CHECKS[scenario], [describe_check(scenario, c) for c in checks]


# -------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("revision", sorted(SCENARIOS))
def test_conformance_client_suite_runs_the_pinned_scenarios(revision, tmp_path_factory, capsys):
    run, summary, checks = requirements_run(revision, tmp_path_factory)
    assert set(summary.scenarios) == set(SCENARIOS[revision]), run.report
    assert len(SCENARIOS[revision]) == len(set(SCENARIOS[revision]))
    assert set(checks) == set(SCENARIOS[revision]), sorted(checks)
    assert summary.total is not None, run.report
    assert summary.total == (
        sum(p for _, p, _ in summary.scenarios.values()),
        sum(f for _, _, f in summary.scenarios.values()),
    ), run.report
    assert summary.total_warnings == sum(summary.warnings.values()), run.report
    for name, scenario_checks in checks.items():
        statuses = Counter(check["status"] for check in scenario_checks)
        _, passes, fails = summary.scenarios[name]
        assert (statuses["SUCCESS"], statuses["FAILURE"], statuses["WARNING"]) == (
            passes,
            fails,
            summary.warnings[name],
        ), (name, statuses)
    assert {name: reason for name, (_, reason) in summary.unscored.items()} == UNSCORED[revision], run.report
    failing = sorted(name for name, (ok, _, _) in summary.scenarios.items() if not ok)
    with capsys.disabled():
        print(
            f"\nconformance client {revision}: Total: {summary.total[0]} passed, {summary.total[1]} failed, "
            f"{summary.total_warnings} warnings; {len(SCENARIOS[revision])} scenarios, "
            f"{len(SCENARIOS[revision]) - len(failing)} passing; failing: {failing or 'none'}"
        )


@pytest.mark.parametrize(
    ("revision", "scenario"), [(revision, name) for revision, names in SCENARIOS.items() for name in names]
)
def test_conformance_client_scenario(revision, scenario, tmp_path_factory):
    run, summary, checks = requirements_run(revision, tmp_path_factory)
    assert scenario in summary.scenarios, run.report
    ok, passes, fails = summary.scenarios[scenario]
    assert_scenario_passed(revision, scenario, checks[scenario], run.client_log(scenario), run.report)
    assert ok and fails == 0 and passes >= 1 and summary.warnings[scenario] == 0, summary.scenarios[scenario]
    if scenario in summary.unscored:
        assert summary.unscored[scenario][0], summary.unscored[scenario]


@pytest.mark.parametrize("scenario", EXTENSION_SCENARIOS)
def test_conformance_client_extension_scenario(scenario, tmp_path):
    (tmp_path / "home").mkdir()
    run = run_suite(["--scenario", scenario], tmp_path / "results", tmp_path / "home")
    checks = read_checks(tmp_path / "results", prefix="")
    assert set(checks) == {scenario}, run.report
    assert_scenario_passed("extension", scenario, checks[scenario], run.client_log(scenario), run.report)
    # Alone, the suite's exit code covers the client's too (a crash or a timeout is non-zero).
    assert run.returncode == 0, run.report
