"""plainmcp.startup: collection deferred while a program imports, resumed (and start-up frozen) once."""

from __future__ import annotations

import subprocess
import sys

# Each case runs in a fresh interpreter: the collector is the process's, and pytest's must stay as it is.
DEFER_THEN_RESUME = """
import gc
from plainmcp import startup
default = gc.get_threshold()
startup.defer_collection()
startup.defer_collection()  # idempotent: the saved thresholds stay Python's own
deferred = gc.get_threshold()
frozen_before = gc.get_freeze_count()
startup.resume_collection()
startup.resume_collection()  # once only
print(default, deferred, gc.get_threshold(), frozen_before, gc.get_freeze_count() > 1000)
"""

RESUME_WITHOUT_DEFER = """
import gc
from plainmcp import startup
gc.set_threshold(1234, 5, 6)
startup.resume_collection()
print(gc.get_threshold(), gc.get_freeze_count())
"""

# A server command that ends before serving (here --help) resumes collection on its way out.
HELP_RESUMES = """
import gc, sys
sys.argv = ["plainmcp-everything", "--help"]
from plainmcp_everything.__main__ import main
deferred = gc.get_threshold()
try:
    main()
except SystemExit:
    pass
print(deferred, gc.get_threshold(), gc.get_freeze_count() > 1000, file=sys.stderr)
"""


def run(code: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_deferral_raises_the_threshold_and_resuming_restores_it_and_freezes_what_start_up_made() -> None:
    assert run(DEFER_THEN_RESUME).stdout.split("\n")[0] == "(700, 10, 10) (200000, 10, 10) (700, 10, 10) 0 True"


def test_resuming_without_a_deferral_leaves_the_host_collector_alone() -> None:
    assert run(RESUME_WITHOUT_DEFER).stdout.strip() == "(1234, 5, 6) 0"


def test_a_server_command_that_ends_before_serving_resumes_collection() -> None:
    last = run(HELP_RESUMES).stderr.strip().splitlines()[-1]
    assert last == "(200000, 10, 10) (700, 10, 10) True"


def test_importing_a_server_package_as_a_library_leaves_the_collector_alone() -> None:
    """Only the command (``__main__``) defers: an embedder's ``build_server`` import changes nothing."""
    code = "import gc; from plainmcp_everything import Config, build_server; build_server(Config()); print(gc.get_threshold(), gc.get_freeze_count())"
    assert run(code).stdout.strip() == "(700, 10, 10) 0"
