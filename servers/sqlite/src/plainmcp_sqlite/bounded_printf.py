"""A ``printf()`` / ``format()`` that cannot run for minutes, for SQLite builds whose own one can.

Some SQLite builds (3.40 among them) repeat a ``%c`` with a precision one character at a time and
keep going after the result has passed the length limit: ``printf('%.2000000000c', 'x')`` is about
14 s of one virtual-machine step, which neither the progress handler nor ``sqlite3_interrupt`` can
stop, and one statement may hold thousands of such directives. Newer builds stop at the limit.

Which kind this build is, is measured once (:func:`builtin_is_unbounded`): repeating a character
three million times past a limit of 1,000 takes milliseconds one at a time and microseconds
otherwise, so the answer cannot err towards "bounded". Where it is unbounded, the connection's
``printf`` and ``format`` are replaced by :func:`install`'s function, which first works out the least
output the format produces (every width, and every precision that is a minimum length or a
repetition, literal or taken from an argument) and answers NULL when that passes the statement's
value limit, as SQLite's own does for an over-long result; otherwise SQLite's own ``printf`` formats
it, on a private in-memory connection.

Cost of the replacement: an application-defined function per call (a few µs), and, since the file's
schema is not trusted (``PRAGMA trusted_schema = OFF``), views, triggers and generated columns of the
database that call ``printf()`` or ``format()`` fail with "unsafe use of printf()" on such builds.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

#: A directive: flags, width (digits or ``*``), precision (``.`` then digits or ``*``), length
#: modifiers, the conversion. Flags and width are read the way SQLite reads them, as a superset.
_DIRECTIVE = re.compile(r"%([-+ #!0,]*)(\*|\d*)(?:\.(\*|\d*))?l*(.?)", re.DOTALL)
#: Conversions whose precision is a maximum (it cuts the argument), not a length it produces.
_PRECISION_IS_A_MAXIMUM = frozenset("szqQw")
#: Conversions that take no argument.
_NO_ARGUMENT = frozenset("%n")
#: SQLite reads a width or precision as a C ``int``: never more than this in size.
_INT_LIMIT = 2**31
#: The leading number of a text, read as an integer or a real, whichever SQLite does.
_LEADING_NUMBER = re.compile(r"\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _as_int(value: Any) -> int:
    """The size of ``value`` read as SQLite reads a ``*`` width or precision (an integer, or the
    leading number of a text, whole or as a real), at least as large as SQLite's reading, at most
    :data:`_INT_LIMIT`."""
    if isinstance(value, bool) or value is None:
        return int(bool(value))
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = int(value) if abs(value) < _INT_LIMIT else _INT_LIMIT
    else:
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        match = _LEADING_NUMBER.match(text)
        real = abs(float(match.group(0))) if match else 0.0
        number = int(real) if real < _INT_LIMIT else _INT_LIMIT
    return min(abs(number), _INT_LIMIT)


def output_bound(fmt: str, args: Sequence[Any]) -> int:
    """A lower bound of the length of ``printf(fmt, *args)``: the format's literal text, plus for
    each directive the larger of its width and, where the precision is a minimum length or a
    repetition (``%.5d``, ``%.5c``, ``%.5f``), its precision. Arguments of ``*`` are read in order.

    When it is within a limit, SQLite's own work is too (a few times the bound), so the directive
    that would repeat a character two billion times is never handed to SQLite."""
    total = len(fmt)
    next_arg = 0

    def take() -> Any:
        nonlocal next_arg
        value = args[next_arg] if next_arg < len(args) else None
        next_arg += 1
        return value

    for directive in _DIRECTIVE.finditer(fmt):
        _flags, width, precision, conversion = directive.groups()
        total -= len(directive.group(0))
        least = _as_int(take()) if width == "*" else min(int(width or 0), _INT_LIMIT)
        amount = _as_int(take()) if precision == "*" else min(int(precision or 0), _INT_LIMIT)
        if conversion not in _PRECISION_IS_A_MAXIMUM:
            least = max(least, amount)
        total += least
        if conversion and conversion not in _NO_ARGUMENT:
            take()
    return total


@functools.cache
def builtin_is_unbounded() -> bool:
    """Whether this SQLite's ``printf`` keeps repeating ``%c`` past the length limit (measured once
    per process, in a few ms at most)."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000)
        started = time.perf_counter()
        connection.execute("SELECT printf('%.*c', 3000000, 'x')").close()
        return time.perf_counter() - started > 0.002
    finally:
        connection.close()


def bounded(value_limit: Callable[[], int]) -> Callable[..., Any]:
    """The replacement ``printf``: NULL when the result would pass ``value_limit()``, otherwise
    SQLite's own result, formatted on a private in-memory connection of the calling thread."""
    formatter = sqlite3.connect(":memory:")

    def bounded_printf(fmt: Any = None, *args: Any) -> Any:
        if fmt is None:
            return None
        # Measured as text; handed to SQLite as it came, so SQLite converts it as it always does.
        text = fmt.decode("utf-8", "replace") if isinstance(fmt, bytes) else str(fmt)
        limit = value_limit()
        if output_bound(text, args) > limit:
            return None  # what SQLite answers for a result past the limit
        formatter.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit)
        placeholders = ", ?" * len(args)
        return formatter.execute(f"SELECT printf(?{placeholders})", (fmt, *args)).fetchone()[0]

    return bounded_printf


def install(connection: sqlite3.Connection, value_limit: Callable[[], int]) -> bool:
    """Replace ``printf`` and ``format`` on ``connection`` with :func:`bounded` when this build
    needs it (see the module's docstring); returns whether it did. Call on the connection's own
    thread: the private connection belongs to it."""
    if not builtin_is_unbounded():
        return False
    function = bounded(value_limit)
    for name in ("printf", "format"):
        connection.create_function(name, -1, function, deterministic=True)
    return True
