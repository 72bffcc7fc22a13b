"""The README's first command ends in `plainmcp demo`: it must run and show real answers from every
installed server (each scene is checked on its own, from one run of the demo). The scenes are the
servers' own (``plainmcp.scenes`` entry points, in servers/*/src/plainmcp_*/scene.py); here every server
is installed in the demo's own environment, so each plays in its process. Finding servers installed
elsewhere (pipx, uv, PATH), playing them in their own Python, and a missing server's exit code:
tests/cli/test_demo_locate.py and tests/cli/test_demo_discovery.py."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "plainmcp.cli", "demo"], capture_output=True, text=True, timeout=180)


def needs(server: str) -> None:
    # dev.py installs every server of the repository: a missing one is a broken set-up, not a skip.
    assert importlib.util.find_spec(f"plainmcp_{server}") is not None, f"plainmcp-{server} is not installed"


def test_demo_runs_every_scene_without_failure(demo) -> None:
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "scene failed" not in demo.stdout
    assert "Every line above is a real request to a real server process" in demo.stdout


def test_demo_every_server_scene_says_which_installation_it_runs(demo) -> None:
    # dev.py installs every server into the venv that runs the demo: that is the one each scene uses.
    bin_dir = Path(sys.executable).parent
    for server in ("filesystem", "sqlite", "prompts", "weather", "everything"):
        needs(server)
        assert f"  using plainmcp-{server} from this environment: {bin_dir / f'plainmcp-{server}'}" in demo.stdout
    assert "not installed" not in demo.stdout


def test_demo_plays_the_core_example_first_then_the_servers_by_scene_name(demo) -> None:
    titles = [line for line in demo.stdout.splitlines() if line.startswith("== ")]
    assert titles[0].startswith("== notes example server")
    servers = [title.split()[1] for title in titles[1:]]
    assert servers == sorted(servers) == ["bridge", "everything", "filesystem", "prompts", "sqlite", "weather"]


def test_demo_notes_example_scene(demo) -> None:
    out = demo.stdout
    assert "plainmcp-notes-example 0.1.0, protocol 2025-11-25" in out
    assert '{"title": "groceries", "created": true}' in out
    assert "error -32002: Resource not found: note://nothing" in out
    assert "notifications/resources/updated note://groceries" in out


def test_demo_everything_scene_over_http_modern(demo) -> None:
    out = demo.stdout
    assert "plainmcp-everything 0.1.0, versions ['2026-07-28'" in out
    assert "LLM response: Paris" in out
    assert "This is the content of the static text resource." in out


def test_demo_filesystem_scene_on_a_temporary_directory(demo) -> None:
    needs("filesystem")
    out = demo.stdout
    assert "== filesystem server, read-only, on a temporary directory: plainmcp-demo-" in out
    assert '{"directories": ["src"], "files": ["notes.md", "todo.txt"]}' in out
    assert "isError: Access denied: the path is outside the allowed directories" in out
    assert "tools/list                               -> 9 tools, 9 of them read-only" in out
    assert "subscriptions/listen notes.md + an edit  -> notifications/resources/updated notes.md" in out


def test_demo_sqlite_scene_on_the_sample_database(demo) -> None:
    needs("sqlite")
    out = demo.stdout
    assert "== sqlite server on its bundled sample database (read-only)" in out
    assert '"authors", "book_sales", "books"' in out
    assert "Jane Austen" in out
    assert "isError: Statement refused in read-only mode" in out


def test_demo_prompts_scene_on_the_bundled_library(demo) -> None:
    needs("prompts")
    out = demo.stdout
    assert "plainmcp-prompts 0.1.0, protocol 2026-07-28" in out
    assert '-> ["beginner"]' in out
    assert "error -32602: Missing required argument for prompt 'explain-code': code" in out


def test_demo_weather_scene_against_the_stand_in(demo) -> None:
    needs("weather")
    out = demo.stdout
    assert "== weather server against its local stand-in at http://127.0.0.1:" in out
    assert '["Portland, Oregon", "Portland, Maine"]' in out
    assert "Paris, Île-de-France, France" in out
    assert "isError: No place named 'Atlantis' was found." in out


def test_demo_bridge_scene_repairs_a_wrong_typed_call_against_the_stand_in_model(demo) -> None:
    # The bridge is no server but registers a scene too (packages/plainmcp-bridge): its `ask` as a real
    # process, the stand-in model's scripted turns, the real sqlite server (installed beside it here).
    needs("bridge")
    needs("sqlite")
    out = demo.stdout
    bin_dir = Path(sys.executable).parent
    assert "== bridge with a scripted stand-in model and the sqlite server on its bundled sample database" in out
    assert f"  using plainmcp-bridge from this environment: {bin_dir / 'plainmcp-bridge'}" in out
    start = out.index("== bridge ")
    end = out.find("\n== ", start)
    scene = out[start : end if end != -1 else None]
    steps = [
        'model: query(sql=..., max_rows="1")      -> not sent: max_rows: expected an integer; sent "1" (a string)',
        "repair message to the model              -> Your call to query was not run: 1 problem with its arguments.",
        "model: query(sql=..., max_rows=1)        -> valid: tools/call sent to the server",
        "query result                             -> 1 row (truncated) | author | copies | |---|---| | Jane Austen | 127 |",
        "answer                                   -> Jane Austen sold the most books: 127 copies.",
        "counts                                   -> tool calls: 2 proposed, 0 valid at first try, 1 repaired, 1 rejected",
    ]
    # In this order: the wrong call is refused before anything reaches the server, then repaired.
    positions = [scene.index(step) for step in steps]
    assert positions == sorted(positions), scene
