"""How a command line names its server: a command (one word, quoted, or after --) or a URL."""

from __future__ import annotations

import argparse

import pytest
from plainmcp.cli.targets import (
    UsageError,
    add_target_options,
    protocol_version_of,
    split_command_tail,
    target_from,
)


def options(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_target_options(parser)
    return parser.parse_args(list(argv))


def test_split_command_tail_takes_everything_after_the_first_double_dash() -> None:
    assert split_command_tail(["call", "x", "--", "srv", "--", "-v"]) == (["call", "x"], ["srv", "--", "-v"])
    assert split_command_tail(["inspect", "srv"]) == (["inspect", "srv"], None)


def test_target_quoted_command_is_split_like_a_shell_without_a_shell() -> None:
    target = target_from(options(), "python -m 'my server' --ro", None)
    assert target.command == ("python", "-m", "my server", "--ro")
    assert target.url is None


def test_target_after_double_dash_is_taken_word_for_word() -> None:
    target = target_from(options(), None, ["python", "a b.py", "$HOME"])
    assert target.command == ("python", "a b.py", "$HOME")


def test_target_url_keeps_transport_and_headers() -> None:
    target = target_from(options("--transport", "sse", "--header", "Authorization: Bearer x"), "https://h/sse", None)
    assert target.url == "https://h/sse"
    assert target.transport == "sse"
    assert target.headers == {"Authorization": "Bearer x"}


@pytest.mark.parametrize(
    ("argv", "written", "tail", "complaint"),
    [
        ((), None, None, "give a server command or URL"),
        ((), "srv", ["srv"], "not both"),
        ((), None, [], "nothing after --"),
        ((), "'unclosed", None, "cannot split"),
        (("--header", "Authorization: x"), "srv", None, "apply to a URL"),
        (("--env", "A=1"), "http://h/mcp", None, "applies to a server command"),
        (("--header", "no colon"), "http://h/mcp", None, "expected 'NAME: VALUE'"),
        (("--env", "NOEQUALS"), "srv", None, "expected NAME=VALUE"),
        (("--timeout", "0"), "srv", None, "positive"),
    ],
)
def test_target_refuses_a_malformed_command_line(argv, written, tail, complaint) -> None:
    with pytest.raises(UsageError, match=complaint):
        target_from(options(*argv), written, tail)


def test_protocol_version_follows_era_unless_a_version_is_forced() -> None:
    assert protocol_version_of("auto", None) == "auto"
    assert protocol_version_of("legacy", None) == "2025-11-25"
    assert protocol_version_of("modern", None) == "2026-07-28"
    assert protocol_version_of("modern", "2024-11-05") == "2024-11-05"
