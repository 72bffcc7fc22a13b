"""log_later on a running event loop: the lines wait, are made together, stay in order with the lines of
records, and none is lost (a loop that ends first, a line that cannot be made, the program's exit).

Real pipes, a real writer thread and real event loops (anyio on asyncio).
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from plainmcp import log_sink
from plainmcp.log_sink import log_later
from plainmcp.logs import StderrLines, TextFormatter


def line(number: int, *, brief: bool) -> tuple[str, dict[str, Any]]:
    return f"later {number}", {"request_id": f"r{number}"}


class Captured:
    """A logger whose lines go through a StderrLines handler into a pipe that a thread of this test reads."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self._stream = os.fdopen(write, "w", encoding="utf-8")
        self._received: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(read,), daemon=True)
        self._reader.start()
        self.handler = StderrLines(self._stream)
        self.handler.setFormatter(TextFormatter())
        self.logger = logging.getLogger("plainmcp.latertest")
        self.logger.propagate = False
        self.logger.setLevel(logging.INFO)

    def _read(self, fd: int) -> None:
        with os.fdopen(fd, encoding="utf-8") as reader:
            self._received.extend(reader.read().splitlines())

    def attach(self) -> logging.Logger:
        """The logger, with this handler alone (pytest adds its capture handlers as each test starts:
        those would get real records at once, as any handler other than a LineHandler does)."""
        self.logger.handlers[:] = [self.handler]
        return self.logger

    def accepted(self) -> int:
        """Lines the handler's sink has taken so far (buffered, or written at once)."""
        return self.handler.sink._accepted + self.handler.sink._direct

    def messages(self) -> list[str]:
        """Every line written, as its message (and request id), once the writer is done."""
        self.close()
        return [text.split(": ", 1)[1] for text in self._received]

    def close(self) -> None:
        self.handler.flush()  # the lines still waiting, while the handler is the logger's
        self.logger.handlers[:] = []
        self.logger.propagate = True
        if not self._stream.closed:
            assert self.handler.sink.flush(timeout=10)
            self._stream.close()  # the writer writes to the descriptor's number: closed only once it is done
            self._reader.join(10)


@pytest.fixture
def captured() -> Iterator[Captured]:
    target = Captured()
    try:
        yield target
    finally:
        target.close()


def test_on_a_loop_the_lines_wait_and_are_made_together_after_the_interval(captured: Captured) -> None:
    logger = captured.attach()

    async def main() -> tuple[int, int]:
        for number in range(100):
            log_later(logger, logging.INFO, line, (number,))
        waiting = captured.accepted()  # nothing awaited yet: no callback has run
        await anyio.sleep(log_sink.INTERVAL * 4)
        return waiting, captured.accepted()

    waiting, made = anyio.run(main)
    assert (waiting, made) == (0, 100)
    assert captured.messages() == [f"later {n} request_id=r{n}" for n in range(100)]


def test_the_lines_of_records_come_after_the_lines_logged_before_them(captured: Captured) -> None:
    logger = captured.attach()

    async def main() -> None:
        for number in range(300):
            log_later(logger, logging.INFO, line, (number,))
            if number % 7 == 0:
                logger.warning("record %d", number)
            if number % 50 == 0:
                await anyio.sleep(0)

    anyio.run(main)
    expected = []
    for number in range(300):
        expected.append(f"later {number} request_id=r{number}")
        if number % 7 == 0:
            expected.append(f"record {number}")
    assert captured.messages() == expected


def test_a_busy_loop_has_a_batch_made_at_its_next_turn(captured: Captured) -> None:
    logger = captured.attach()

    async def main() -> int:
        for number in range(log_sink.BATCH_LINES):
            log_later(logger, logging.INFO, line, (number,))
        await anyio.sleep(0)  # one turn, far less than the interval
        await anyio.sleep(0)
        return captured.accepted()

    assert anyio.run(main) == log_sink.BATCH_LINES


def test_lines_left_by_a_loop_that_ended_are_made_by_the_next_loop(captured: Captured) -> None:
    logger = captured.attach()

    async def first() -> None:
        log_later(logger, logging.INFO, line, (1,))  # its callback never runs: the loop ends

    async def second() -> int:
        log_later(logger, logging.INFO, line, (2,))
        await anyio.sleep(log_sink.INTERVAL * 4)
        return captured.accepted()

    anyio.run(first)
    assert anyio.run(second) == 2
    assert captured.messages() == ["later 1 request_id=r1", "later 2 request_id=r2"]


def test_a_line_that_cannot_be_made_is_reported_and_costs_no_other(captured: Captured) -> None:
    logger = captured.attach()

    def broken(number: int, *, brief: bool) -> tuple[str, dict[str, Any]]:
        raise ValueError(f"cannot make {number}")

    reports: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            reports.append(record)

    keeper = Keep()
    logging.getLogger("plainmcp.log_sink").addHandler(keeper)

    async def main() -> None:
        log_later(logger, logging.INFO, line, (1,))
        log_later(logger, logging.INFO, broken, (2,))
        log_later(logger, logging.INFO, line, (3,))
        await anyio.sleep(log_sink.INTERVAL * 4)

    try:
        anyio.run(main)
    finally:
        logging.getLogger("plainmcp.log_sink").removeHandler(keeper)
    assert captured.messages() == ["later 1 request_id=r1", "later 3 request_id=r3"]
    (report,) = reports
    assert report.getMessage() == "a log line of plainmcp.latertest could not be made"
    assert report.exc_info is not None and "cannot make 2" in str(report.exc_info[1])


PROGRAM = """
import asyncio, logging, sys
from plainmcp.logs import configure_logging
from plainmcp.log_sink import log_later
configure_logging("info", sys.argv[1])
logger = logging.getLogger("plainmcp.latertest")
line = lambda number, brief: (f"line {number}", {"request_id": str(number)})

async def main():
    for number in range(2000):
        log_later(logger, logging.INFO, line, (number,))
    # the program ends at once: the lines still wait for their callback

asyncio.run(main())
"""


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_lines_still_waiting_when_the_program_ends_are_on_stderr(log_format: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, log_format], capture_output=True, text=True, timeout=60, check=True
    )
    lines = done.stderr.splitlines()
    assert len(lines) == 2000, done.stderr[-500:]
    assert ("line 1999" in lines[-1]) and ("1999" in lines[-1].rsplit(" ", 1)[-1] or log_format == "json")


def test_one_callback_is_due_at_a_time_however_often_the_lines_are_made_sooner(captured: Captured) -> None:
    """Lines made before the interval is over (a full batch, a record's line) leave the loop's callback due:
    a second one would be armed each time, and they would pile up (and fire every few milliseconds)."""
    logger = captured.attach()

    async def main() -> int:
        loop = asyncio.get_running_loop()
        for number in range(5 * log_sink.BATCH_LINES):  # five full batches, each made at the next turn
            log_later(logger, logging.INFO, line, (number,))
            if number % log_sink.BATCH_LINES == 0:
                logger.warning("record %d", number)  # and lines made before a record's line
                await anyio.sleep(0)
        await anyio.sleep(0)
        return sum(1 for handle in loop._scheduled if not handle.cancelled())  # type: ignore[attr-defined]

    assert anyio.run(main) == 1


def test_a_formatter_without_a_batch_path_still_gets_its_lines(captured: Captured) -> None:
    """format_batch is optional: a formatter with format_fields alone (JsonFormatter, an embedder's own) has
    its lines made one by one."""

    class FieldsOnly(logging.Formatter):
        def format_fields(self, created: float, levelno: int, name: str, message: str, fields: dict[str, Any]) -> str:
            return f"{name}: {message} {fields['request_id']}"

    captured.handler.setFormatter(FieldsOnly())
    logger = captured.attach()

    async def main() -> None:
        for number in range(3):
            log_later(logger, logging.INFO, line, (number,))
        await anyio.sleep(log_sink.INTERVAL * 4)

    anyio.run(main)
    assert captured.messages() == ["later 0 r0", "later 1 r1", "later 2 r2"]
