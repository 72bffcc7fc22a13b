"""What the chat shows: one line per step, and nothing a model or a server sends can drive the terminal."""

from __future__ import annotations

import io

from plainmcp_bridge.terminal import TerminalHooks, printable


async def _never(prompt: str) -> str | None:
    raise AssertionError("no question expected")


def test_steps_are_one_line_each() -> None:
    out = io.StringIO()
    hooks = TerminalHooks(out, _never)
    hooks.text("Let me ")
    hooks.text("check.")
    hooks.event(
        {
            "type": "call",
            "name": "describe_table",
            "arguments": {"table": "books"},
            "notes": ["the arguments arrived as a JSON string and were parsed"],
        }
    )
    hooks.event({"type": "result", "name": "describe_table", "is_error": True, "text": "no such\n  table: bookz"})
    hooks.event(
        {
            "type": "rejected",
            "name": "query",
            "problems": ["sql: expected a string; sent 5 (an integer)"],
            "unknown_tool": False,
            "round": 1,
        }
    )
    assert out.getvalue().splitlines() == [
        "Let me check.",
        '-> describe_table {"table": "books"}  (the arguments arrived as a JSON string and were parsed)',
        "<- error: no such table: bookz",
        "x  query not sent (sql: expected a string; sent 5 (an integer)); asking the model to repair it",
    ]


def test_control_characters_from_the_model_or_a_server_are_shown_not_obeyed() -> None:
    out = io.StringIO()
    hooks = TerminalHooks(out, _never)
    hooks.text("fine\x1b[2K\r-> read_file {}\x07")
    hooks.event({"type": "result", "name": "t", "is_error": False, "text": "\x1b]0;owned\x07ok\x9b31m"})
    shown = out.getvalue()
    assert "\x1b" not in shown and "\r" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "fine\\x1b[2K\\x0d-> read_file {}\\x07" in shown
    assert printable("tabs\tand\nnewlines stay") == "tabs\tand\nnewlines stay"
