"""Log lines made without a LogRecord are the lines a record makes, and the buffered writer behind
stderr never blocks, stays bounded, says what it dropped and writes everything out at exit.

Real pipes and real threads: the reader that stops reading is a pipe nobody reads.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from plainmcp.log_sink import LineSink, log_later
from plainmcp.logs import DependencyCap, JsonFormatter, StderrLines, TextFormatter

ACCESS_FORMAT = "%s %s %s %.1f ms"
TOKEN = "0123456789abcdef0123456789abcdef"


def access_fields(path: str, request_id: str = "7d569c7d-7efb-4b42-9383-24ee3a0a9b88") -> dict[str, Any]:
    return {
        "request_id": request_id,
        "method": "POST",
        "path": path,
        "status": 200,
        "duration_ms": 0.12,
        "bytes_in": 229,
        "bytes_out": 239,
        "mcp_method": "tools/call",
    }


def record_line(formatter: logging.Formatter, created: float, args: tuple[Any, ...], fields: dict[str, Any]) -> str:
    """The line the formatter makes of a real record logged with these values at ``created``."""
    logger = logging.getLogger("plainmcp.http.exchange")
    record = logger.makeRecord(logger.name, logging.INFO, "exchange.py", 1, ACCESS_FORMAT, args, None, extra=fields)
    record.created = created
    record.msecs = int((created - int(created)) * 1000) + 0.0
    return formatter.format(record)


@pytest.mark.parametrize("formatter_type", [TextFormatter, JsonFormatter])
@pytest.mark.parametrize(
    "path",
    [
        "/mcp",
        f"/mcp/token={TOKEN}",  # a credential in the path: redacted either way
        "/mcp\n2026-01-01 00:00:00,000 ERROR forged\x1b[31m\u2028",  # a forged line: escaped either way
        "/ü" + "x" * 20000,  # a huge path: cut either way
    ],
)
@pytest.mark.parametrize("request_id", [f"Bearer {TOKEN}", "7d569c7d-7efb-4b42-9383-24ee3a0a9b88", "r\x1b[2J"])
def test_a_line_made_without_a_record_is_the_records_line(
    formatter_type: type[logging.Formatter], path: str, request_id: str
) -> None:
    formatter = formatter_type()
    created = 1764633600.4567
    args = ("POST", path, 200, 0.123)
    fields = access_fields(path, request_id=request_id)
    made = formatter.format_fields(created, logging.INFO, "plainmcp.http.exchange", ACCESS_FORMAT % args, fields)  # type: ignore[attr-defined]  # both formatters have it
    assert made == record_line(formatter, created, args, fields)
    assert TOKEN not in made and "\n" not in made and "\x1b" not in made
    if formatter_type is JsonFormatter:
        assert json.loads(made)["status"] == 200


@pytest.mark.parametrize("formatter_type", [TextFormatter])  # the formatters that make a batch in one pass
def test_a_batch_of_lines_is_each_records_line_clean_or_not(formatter_type: type[logging.Formatter]) -> None:
    """format_batch makes the usual batch in one pass: a batch with one line that needs redaction, escaping
    or cutting must still give every line exactly as its record would."""
    formatter = formatter_type()
    paths = ["/mcp", f"/mcp/token={TOKEN}", "/mcp\n2026-01-01 00:00:00,000 ERROR forged\x1b[31m", "/ü" + "x" * 20000]
    for dirty in paths:
        batch_paths = ["/mcp", "/mcp/a", dirty, "/mcp/b"]
        created = [1764633600.4567 + 0.7 * number for number in range(len(batch_paths))]  # across a second
        entries = []
        expected = []
        for when, path in zip(created, batch_paths, strict=True):
            args = ("POST", path, 200, 0.123)
            fields = access_fields(path, request_id=f"r-{len(entries)}")
            entries.append((when, logging.INFO, "plainmcp.http.exchange", ACCESS_FORMAT % args, fields))
            expected.append(record_line(formatter, when, args, fields))
        assert formatter.format_batch(entries) == expected  # type: ignore[attr-defined]  # checked above


@pytest.mark.parametrize(
    ("path", "request_id", "name"),
    [
        (f"/mcp/TOKEN={TOKEN}", "r-1", "plainmcp.http.exchange"),  # a hint in capitals
        ("/mcp", f"token={TOKEN}", "plainmcp.http.exchange"),  # a credential as the client's request id
        ("/mcp", "ig-7", "plainmcp.http.exchange"),  # "...ms" + "ig-7": a hint made only by joining the parts
        ("/mcp", "r-1", "plainmcp.x\x1b[31mforged"),  # a control character in the logger's name
        ("/mcp", "r-1", "plainmcp.secret_keys"),  # a hint in the logger's name (never redacted)
    ],
)
def test_a_batch_line_is_its_records_line_whatever_part_is_dirty(path: str, request_id: str, name: str) -> None:
    formatter = TextFormatter()
    when = 1764633600.4567
    args = ("POST", path, 200, 0.123)
    fields = access_fields(path, request_id=request_id)
    clean = (
        when,
        logging.INFO,
        "plainmcp.http.exchange",
        ACCESS_FORMAT % ("POST", "/mcp", 200, 0.5),
        {"request_id": "r-0"},
    )
    record = logging.getLogger(name).makeRecord(name, logging.INFO, "x.py", 1, ACCESS_FORMAT, args, None, extra=fields)
    record.created, record.msecs = when, int((when - int(when)) * 1000) + 0.0
    batch = formatter.format_batch([clean, (when, logging.INFO, name, ACCESS_FORMAT % args, fields)])
    assert batch == [formatter.format_fields(*clean), formatter.format(record)]


def test_every_secret_hint_holds_one_of_the_letters_that_rule_texts_out_fast() -> None:
    """may_hold_secret_in first looks for single letters; a hint without one of them would never be found."""
    from plainmcp import redaction

    assert all(any(letter in hint for letter in redaction._HINT_LETTERS) for hint in redaction._HINTS)
    assert redaction.may_hold_secret_in("POST /mcp 200 0.8 ms\n" * 100 + "X-API-KEY") is True
    assert redaction.may_hold_secret_in("POST /mcp 200 0.8 ms\n7d569c7d-7efb-4b42-9383-24ee3a0a9b88\n" * 100) is False


def rendered(message: str, fields: dict[str, Any]) -> Any:
    """A ``render`` for log_later that gives this message and these fields."""
    return lambda *, brief: (message, fields)


def test_log_later_hands_foreign_handlers_a_real_record_at_once(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("plainmcp.http.exchange")
    with caplog.at_level(logging.INFO, logger="plainmcp.http.exchange"):
        log_later(logger, logging.INFO, rendered("POST /mcp 200 0.5 ms", access_fields("/mcp")), ())
    (record,) = caplog.records
    assert record.getMessage() == "POST /mcp 200 0.5 ms"
    assert record.request_id == "7d569c7d-7efb-4b42-9383-24ee3a0a9b88"  # type: ignore[attr-defined]  # an extra field
    assert record.funcName == "test_log_later_hands_foreign_handlers_a_real_record_at_once"  # the caller's place


def test_log_later_skips_what_the_level_or_the_dependency_cap_refuses() -> None:
    read, write = os.pipe()
    stream = os.fdopen(write, "w", encoding="utf-8")
    handler = StderrLines(stream)
    handler.setFormatter(TextFormatter())
    handler.addFilter(DependencyCap())
    own, dependency = logging.getLogger("plainmcp.sinktest"), logging.getLogger("somelib.sinktest")
    for logger in (own, dependency):
        logger.propagate = False
        logger.handlers[:] = [handler]
        logger.setLevel(logging.DEBUG)
    try:
        log_later(dependency, logging.INFO, rendered("a dependency's info line", {}), ())
        log_later(own, logging.INFO, rendered("our info line", {"request_id": "r1"}), ())
        log_later(dependency, logging.WARNING, rendered("a dependency's warning", {}), ())
        assert handler.sink.flush(timeout=10)
        stream.close()
        with os.fdopen(read, encoding="utf-8") as reader:
            lines = reader.read().splitlines()
    finally:
        for logger in (own, dependency):
            logger.handlers[:] = []
            logger.propagate = True
    assert [line.split(": ", 1)[1] for line in lines] == ["our info line request_id=r1", "a dependency's warning"]


def fill(pipe: int) -> None:
    """Fill the pipe to the brim with ``f`` lines, as a reader that stopped reading leaves it."""
    os.set_blocking(pipe, False)
    for chunk in (b"f\n" * 2048, b"f\n"):  # writes up to PIPE_BUF are all or nothing
        try:
            while True:
                os.write(pipe, chunk)
        except BlockingIOError:
            pass
    os.set_blocking(pipe, True)


def test_a_stream_nobody_reads_keeps_the_buffer_bounded_and_says_what_it_dropped() -> None:
    read, write = os.pipe()
    fill(write)
    stream = os.fdopen(write, "w", encoding="utf-8")
    sink = LineSink(stream, limit=32 * 1024, dropped_line=lambda count: f"dropped {count}")
    line = "x" * 200
    total = 3000  # 600 KB into a full pipe: the buffer (32 KiB) holds a fraction
    started = time.monotonic()
    for number in range(total):
        sink.put(f"{number} {line}")  # never blocks, though nobody reads
    assert time.monotonic() - started < 10  # liveness: 3000 puts on a stuck stream return
    assert sink._size <= sink.limit  # the buffer itself stays bounded
    assert not sink.flush(timeout=0.2)  # the stuck reader: flush gives up instead of hanging

    received: list[str] = []
    reader = threading.Thread(target=lambda: received.extend(os.fdopen(read, encoding="utf-8").read().splitlines()))
    reader.start()  # the reader comes back
    assert sink.flush(timeout=10)
    stream.close()
    reader.join(10)
    received = [entry for entry in received if entry != "f"]
    kept = [entry for entry in received if not entry.startswith("dropped ")]
    notices = [int(entry.split()[1]) for entry in received if entry.startswith("dropped ")]
    assert notices and len(kept) + sum(notices) == total  # every line written or counted, no other line
    numbers = [int(entry.split()[0]) for entry in kept]
    assert numbers == sorted(numbers) and numbers[0] == 0  # in order, from the first


PROGRAM = """
import logging, sys
from plainmcp.logs import configure_logging
from plainmcp.log_sink import log_later
configure_logging("info", sys.argv[1])
logger = logging.getLogger("plainmcp.sinktest")
line = lambda number, brief: (f"line {number}", {"request_id": str(number)})
for number in range(2000):
    log_later(logger, logging.INFO, line, (number,))
    logger.info("record %d", number)
"""


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_every_line_is_on_stderr_when_the_program_ends(log_format: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, log_format], capture_output=True, text=True, timeout=60, check=True
    )
    lines = done.stderr.splitlines()
    assert len(lines) == 4000, done.stderr[-500:]
    if log_format == "json":
        ends = [f"{entry['message']} {entry.get('request_id')}" for entry in map(json.loads, lines[-2:])]
        assert ends == ["line 1999 1999", "record 1999 None"]
    else:
        assert [line.split(": ", 1)[1] for line in lines[-2:]] == ["line 1999 request_id=1999", "record 1999"]


LAST_WORDS = """
import logging, sys
from plainmcp.logs import configure_logging
configure_logging("info", "text")
for number in range(500):
    logging.getLogger("plainmcp.sinktest").info("line %d", number)
raise SystemExit("the last words")
"""


def test_what_is_written_to_stderr_directly_comes_after_the_log_lines_before_it() -> None:
    done = subprocess.run([sys.executable, "-c", LAST_WORDS], capture_output=True, text=True, timeout=60)
    lines = done.stderr.splitlines()
    assert done.returncode == 1
    assert lines[-1] == "the last words"  # a SystemExit's line, printed before atexit flushes the log
    assert len(lines) == 501 and lines[-2].endswith("line 499")


def test_a_batch_is_written_at_once_while_the_pipe_has_room_and_never_blocks_when_it_is_full() -> None:
    read, write = os.pipe()
    stream = os.fdopen(write, "w", encoding="utf-8")
    sink = LineSink(stream)
    sink.put_batch([f"a{number}" for number in range(100)])  # room in the pipe: written by this thread
    assert sink._thread is None
    assert os.read(read, 65536).decode().splitlines() == [f"a{number}" for number in range(100)]

    fill(write)  # the reader stops reading: what does not fit goes to the writer thread
    started = time.monotonic()
    for batch in range(50):
        sink.put_batch([f"b{batch}-{number} " + "x" * 100 for number in range(20)])
    assert time.monotonic() - started < 10  # liveness: 50 batches into a full pipe return
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.extend(os.fdopen(read, encoding="utf-8").read().splitlines()))
    reader.start()  # the reader comes back
    assert sink.flush(timeout=10)
    stream.close()
    reader.join(10)
    lines = [line.split()[0] for line in received if line != "f"]
    assert lines == [f"b{batch}-{number}" for batch in range(50) for number in range(20)]  # all, in order
