"""The bounded ``printf()`` (``bounded_printf.py``): the same results as SQLite's own wherever they
fit the value limit, NULL without the work where they do not; and the server answers at once a
``printf`` that would keep SQLite's own busy for minutes on some builds (3.40 among them)."""

from __future__ import annotations

import sqlite3

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_sqlite import bounded_printf

from .support import STDIO_COMMAND, make_shop

LIMIT = 1_000_000

# Formats and arguments, each compared with SQLite's own printf.
SAME_AS_SQLITE = [
    ("%.2f", 3.14159),
    ("%5d|%-5d|", 3, 4),
    ("%s and %s", "a", None),
    ("%*d|", "7", 5),
    ("%*d|", -7, 5),
    ("%.*s|", -3, "abcdef"),
    ("%n%d", 5),
    ("%,d", 1234567),
    ("%q", "it's"),
    ("%Q", None),
    ("%w", 'a"b'),
    ("%x %X %o", 255, 255, 8),
    ("%e %g %G", 1e10, 0.0001, 1e-10),
    ("%c%c", "ab", "cd"),
    ("%.3c|", "xy"),
    ("%%|%5%|",),
    ("%!.3f", 1.0),
    ("%lld %y %d", 1, 2),
    (5,),
    (1e20,),
    ("%s", b"bytes"),
    ("%5,d|", 12345),
    ("%.*c", LIMIT - 1, "a"),
    ("%0*d", 20, 42),
    ("no directive",),
    ("%s", "é" * 10),
    ("%.*f", 5, 2.5),
]


def call(connection: sqlite3.Connection, args: tuple) -> object:
    placeholders = ", ?" * (len(args) - 1)
    return connection.execute(f"SELECT printf(?{placeholders})", args).fetchone()[0]


@pytest.mark.parametrize("args", SAME_AS_SQLITE, ids=[repr(a)[:30] for a in SAME_AS_SQLITE])
def test_bounded_printf_matches_sqlite(args):
    plain = sqlite3.connect(":memory:")
    plain.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LIMIT)
    replaced = sqlite3.connect(":memory:")
    replaced.create_function("printf", -1, bounded_printf.bounded(lambda: LIMIT), deterministic=True)
    assert call(replaced, args) == call(plain, args)


# Each would repeat or pad past the limit: NULL at once, without handing the format to SQLite.
PAST_THE_LIMIT = [
    ("%.2000000000c", "x"),
    ("%.*c", 2_000_000_000, "x"),
    ("%.*c%.*c", 600_000, "x", 600_000, "y"),
    ("%2000000000d", 1),
    ("%*s", "99999999999", "a"),
    ("%.*d", -2_000_000, 7),
    ("%.1000001f", 1.5),
    ("%.*c", 1e12, "x"),
    ("%.*c", b"3000000", "x"),
    ("%.*c", " 2e9", "x"),
]


@pytest.mark.parametrize("args", PAST_THE_LIMIT, ids=[repr(a)[:30] for a in PAST_THE_LIMIT])
def test_bounded_printf_answers_null_past_the_limit(args):
    assert bounded_printf.output_bound(str(args[0]), args[1:]) > LIMIT
    replaced = sqlite3.connect(":memory:")
    replaced.create_function("printf", -1, bounded_printf.bounded(lambda: LIMIT), deterministic=True)
    assert call(replaced, args) is None


@pytest.mark.anyio
async def test_server_answers_huge_char_repetitions_at_once(tmp_path):
    # Fifty directives of two billion repetitions: minutes of one step where SQLite's own printf
    # repeats one character at a time. The deadline is 60 s, so only the bound can answer in time.
    sql = "SELECT printf('" + "%.2000000000c" * 50 + "', " + ", ".join(["'x'"] * 50) + ") AS p"
    path = make_shop(tmp_path)
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path), "--timeout", "60"]) as client:
        with anyio.fail_after(5.0):
            result = await client.call_tool("query", {"sql": sql})
            usual = await client.call_tool("query", {"sql": "SELECT printf('%.2f|%5s', 3.14159, 'ab') AS p"})
    # NULL (SQLite 3.40's answer for a result past the limit), or the limit's error (newer builds).
    if result.get("isError"):
        assert "larger than the limit" in result["content"][0]["text"]
    else:
        assert result["structuredContent"]["rows"] == [[None]]
    assert usual["structuredContent"]["rows"] == [["3.14|   ab"]]
