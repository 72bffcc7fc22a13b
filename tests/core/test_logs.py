"""Log lines the core's formatters write: one record per line whatever a peer sent, no secrets,
dependencies capped (plainmcp.logs, plainmcp.redaction). The end-to-end forms, through a real server
process, are in tests/servers/test_command_lines.py and test_log_lines.py."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from plainmcp.logs import MAX_MESSAGE_CHARS, DependencyCap, JsonFormatter, TextFormatter, escape_controls
from plainmcp.redaction import REDACTED, redact

FORGED = "innocent\n2026-01-01 00:00:00,000 ERROR plainmcp.command_line: forged line\r\x1b[2J\u2028\x85end"


def record(
    message: str,
    *args: object,
    name: str = "plainmcp.connection",
    level: int = logging.INFO,
    exc_info: object = None,
    **extra: object,
) -> logging.LogRecord:
    made = logging.LogRecord(name, level, __file__, 1, message, args, exc_info)  # type: ignore[arg-type]
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_escape_controls_writes_every_line_breaking_or_terminal_character_as_an_escape() -> None:
    escaped = escape_controls(FORGED)
    assert escaped == (
        "innocent\\n2026-01-01 00:00:00,000 ERROR plainmcp.command_line: forged line\\r\\x1b[2J\\u2028\\x85end"
    )
    assert escaped.splitlines() == [escaped]  # str.splitlines breaks on \x85 and \u2028 too
    assert escape_controls("plain text, déjà vu, 東京") == "plain text, déjà vu, 東京"


def test_text_line_of_a_hostile_argument_stays_one_line() -> None:
    line = TextFormatter().format(record("initialized: client %s", FORGED, request_id="r\n1"))
    assert len(line.splitlines()) == 1
    assert "client innocent\\n2026-01-01" in line and line.endswith("end request_id=r\\n1")


def test_json_line_of_a_hostile_argument_is_one_json_object_on_one_line() -> None:
    line = JsonFormatter().format(record("initialized: client %s", FORGED, note=FORGED))
    assert len(line.splitlines()) == 1
    entry = json.loads(line)
    assert entry["message"] == f"initialized: client {FORGED}"  # JSON keeps the text exact, escaped
    assert entry["note"] == FORGED


def test_traceback_lines_are_indented_so_only_records_start_in_the_first_column() -> None:
    try:
        raise ValueError("bad\n2026-01-01 00:00:00,000 INFO plainmcp: forged by an exception message")
    except ValueError:
        line = TextFormatter().format(record("tool failed", level=logging.ERROR, exc_info=sys.exc_info()))
    first, *rest = line.splitlines()
    assert first.endswith("ERROR plainmcp.connection: tool failed")
    assert rest and all(item.startswith("    ") for item in rest)
    assert any("Traceback (most recent call last):" in item for item in rest)


@pytest.mark.parametrize(
    ("text", "kept", "hidden"),
    [
        ("GET /v1/forecast?latitude=1&apikey=s3cr3tKEY123&x=2", "latitude=1&apikey=[redacted]&x=2", "s3cr3tKEY123"),
        ("https://a.example/v1?api_key=abcdef123456", "?api_key=[redacted]", "abcdef123456"),
        ("url=https://x/search?q=1&token=tok_9f8e7d6c", "&token=[redacted]", "tok_9f8e7d6c"),
        (
            "headers: {'Authorization': 'Bearer abcd1234efgh5678'}",
            "'Authorization': 'Bearer [redacted]'",
            "abcd1234efgh5678",
        ),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [redacted]", "dXNlcjpwYXNzd29yZA"),
        ('{"authorization": "sk-live-0123456789"}', '"authorization": "[redacted]"', "sk-live-0123456789"),
        (
            "refused Bearer 0123456789abcdef0123 from 10.0.0.1",
            "refused Bearer [redacted] from 10.0.0.1",
            "0123456789abcdef0123",
        ),
        (
            '{"client_secret": "hunter2hunter2", "user": "ann"}',
            '"client_secret": "[redacted]", "user": "ann"',
            "hunter2",
        ),
        ("--open-meteo-api-key=ABCDEF0123 --port 1", "--open-meteo-api-key=[redacted] --port 1", "ABCDEF0123"),
        ("X-API-Key: 5f4dcc3b5aa765d61d8327deb882cf99", "X-API-Key: [redacted]", "5f4dcc3b5aa7"),
        (
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJlLXBhcnQ in a message",
            f"token {REDACTED} in a message",
            "eyJzdWIiOiJhbm4ifQ",
        ),
    ],
)
def test_redact_hides_credentials_and_keeps_the_words_around_them(text: str, kept: str, hidden: str) -> None:
    redacted = redact(text)
    assert kept in redacted
    assert hidden not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "listening on http://127.0.0.1:8000/mcp",
        "a bearer token is required",  # prose, not a credential
        "tools/call get_forecast latitude=48.85 longitude=2.35 request_id=abc-1",
        "max_tokens=100 monkey=banana",  # names that merely end like a secret's
    ],
)
def test_redact_leaves_ordinary_lines_alone(text: str) -> None:
    assert redact(text) == text


def test_both_formats_redact_message_extras_and_tracebacks() -> None:
    secret = "Bearer 9a8b7c6d5e4f3a2b1c0d"
    try:
        raise RuntimeError(f"upstream said: {secret}")
    except RuntimeError:
        made = record("calling %s", f"https://h/v1?apikey=k3y{secret[-6:]}", exc_info=sys.exc_info(), header=secret)
    for line in (TextFormatter().format(made), JsonFormatter().format(made)):
        assert "9a8b7c6d5e4f3a2b1c0d" not in line and "k3y" not in line
        assert REDACTED in line


def test_dependency_cap_keeps_our_debug_lines_and_only_warnings_of_dependencies() -> None:
    cap = DependencyCap(own=("acme",))
    assert cap.filter(record("x", name="plainmcp.session", level=logging.DEBUG))
    assert cap.filter(record("x", name="plainmcp_prompts.library", level=logging.DEBUG))
    assert cap.filter(record("x", name="acme.tools", level=logging.DEBUG))
    assert cap.filter(record("x", name="__main__", level=logging.INFO))
    assert not cap.filter(record("x", name="markdown_it.rules_block.code", level=logging.DEBUG))
    assert not cap.filter(record("x", name="httpx", level=logging.INFO))
    assert not cap.filter(record("x", name="uvicorn.error", level=logging.INFO))
    assert not cap.filter(record("x", name="plainmcpx", level=logging.INFO))  # not a plainmcp package
    assert cap.filter(record("x", name="httpx", level=logging.WARNING))
    assert DependencyCap(floor=logging.DEBUG).filter(record("x", name="watchfiles.main", level=logging.DEBUG))


def test_a_huge_message_is_cut_in_both_formats() -> None:
    made = record("initialized: client %s", "n" * 1_000_000)
    for line in (TextFormatter().format(made), JsonFormatter().format(made)):
        assert len(line) < MAX_MESSAGE_CHARS + 300
        assert f"... ({1_000_000 + len('initialized: client ') - MAX_MESSAGE_CHARS} more characters)" in line


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abcd1234efgh5678",
        "x?apikey=123456789&a=1",
        "'authorization': 'Basic dXNlcjpwYXNz'",
        "eyJa.eyJb.c",
    ],
)
def test_redacting_twice_gives_the_same_line(text: str) -> None:
    once = redact(text)
    assert once != text and redact(once) == once
