"""The bridge's demo scene (plainmcp_bridge/scene.py) played here, in-process, as ``plainmcp demo`` plays it in
the bridge's own Python. Its sqlite act runs in the demo itself (tests/e2e/test_demo.py); here, the act for a
bridge installed without the sqlite server, and a failing ``ask`` failing the scene."""

from __future__ import annotations

import sys

import anyio
import pytest
from plainmcp.demo import Stage
from plainmcp_bridge import scene

BRIDGE = (sys.executable, "-m", "plainmcp_bridge")


def test_scene_without_the_sqlite_server_beside_it_repairs_a_call_to_the_notes_example(monkeypatch, capsys) -> None:
    real = scene.find_spec
    monkeypatch.setattr(scene, "find_spec", lambda name: None if name == "plainmcp_sqlite" else real(name))
    anyio.run(scene.play, Stage("bridge", BRIDGE, "the bridge under test"))
    out = capsys.readouterr().out
    assert "== bridge with a scripted stand-in model and the core's notes example" in out
    assert "  using the bridge under test\n" in out
    assert 'model: search_notes(word=["plainmcp"])   -> not sent: word: expected a string; sent ["plainmcp"]' in out
    assert "repair message to the model              -> Your call to search_notes was not run: 1 problem" in out
    assert 'model: search_notes(word="plainmcp")     -> valid: tools/call sent to the server' in out
    assert "search_notes result                      -> welcome\n" in out  # the notes server's real answer
    assert "tool calls: 2 proposed, 0 valid at first try, 1 repaired, 1 rejected" in out


def test_scene_fails_with_the_bridges_last_words_when_ask_fails(capsys) -> None:
    # Not the bridge: a command that fails as it would (exit 1, one line on stderr). The scene must not
    # print a transcript it does not have; plainmcp demo reports the error as the scene's failure.
    failing = (
        sys.executable,
        "-c",
        "import sys; print('plainmcp-bridge: cannot use server', file=sys.stderr); exit(1)",
    )
    with pytest.raises(RuntimeError, match="^plainmcp-bridge ask exited with 1: plainmcp-bridge: cannot use server$"):
        anyio.run(scene.play, Stage("bridge", failing, "a failing bridge"))
    assert "-> valid" not in capsys.readouterr().out
