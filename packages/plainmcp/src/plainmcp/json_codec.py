"""JSON text to values and back, with the wire's rules, as fast as the platform allows.

The rules (every message the core reads or writes goes through here):

- NaN and the infinities are not JSON: :func:`loads` refuses them and :func:`dumps` raises rather
  than writing them (``null`` would silently change a peer's number).
- Integers are exact at any size, both ways (a request id may be ``2**64 + 1``).
- A lone surrogate escape (``"\\ud800"``) is readable (the session decides what to do with it), and
  a string holding one is written escaped, so the output stays valid UTF-8.
- Output is compact (no spaces), in the values' own key order, as UTF-8 bytes.

``orjson`` does most of the work when it is installed (a declared dependency on CPython). It
differs from the rules in three places, each handled here: it reads integers past 64 bits as
floats, writes NaN as ``null``, and refuses lone surrogates, large integers and non-string keys.
Whenever it refuses, or its answer might differ, the standard library's codec (which follows the
rules by itself) does the work instead. One leniency remains: orjson also writes enums and UUIDs,
which the standard library refuses.

Output that holds a ``null`` is read back and compared with the value, to find a NaN written as
null: a value built of dicts and lists passes at C speed, while a tuple (which reads back as a
list) sends the value to the standard library, correct but several times slower; producers of
large results with nulls should use lists. ``PLAINMCP_JSON=stdlib`` selects the standard library
alone.

Sans-I/O and synchronous.
"""

from __future__ import annotations

import json
import os
from types import ModuleType
from typing import Any


def _load_orjson() -> ModuleType | None:
    if os.environ.get("PLAINMCP_JSON", "").strip().lower() == "stdlib":
        return None
    try:
        import orjson
    except ImportError:
        return None
    return orjson


_orjson = _load_orjson()


def backend() -> str:
    """The codec in use: ``"orjson"`` or ``"stdlib"``."""
    return "orjson" if _orjson is not None else "stdlib"


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python's parser would accept them by default.
    raise ValueError(f"{name} is not valid JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)
# No cycle bookkeeping (check_circular): it costs a fifth of encoding a large result, and a cycle
# still fails, as RecursionError, which dumps() reports as ValueError.
_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=False)
_ascii_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False, check_circular=False)

# Digits become "0", everything else ".": an integer orjson would read as a float (past 64 bits)
# has at least 19 digits in a row, which this finds at memchr speed.
_DIGIT_MAP = bytes(48 if 48 <= byte <= 57 else 46 for byte in range(256))
_LONG_NUMBER = b"0" * 19


def loads(data: bytes | str) -> Any:
    """Parse JSON text. Raises ValueError (or RecursionError when nested past the parser's depth)
    for anything that is not JSON, invalid UTF-8 included."""
    if _orjson is not None:
        try:
            value = _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # the standard library decides: lone surrogates and 64-bit overflows are valid
        else:
            raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
            if _LONG_NUMBER not in raw.translate(_DIGIT_MAP):
                return value
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return _decoder.decode(text)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON for ``value``. Raises ValueError for NaN, the infinities and circular
    values, TypeError for values JSON cannot carry (sets, bytes, objects)."""
    if _orjson is not None:
        try:
            data = _orjson.dumps(value, option=_orjson.OPT_PASSTHROUGH_DATETIME | _orjson.OPT_PASSTHROUGH_DATACLASS)
        except TypeError:
            pass  # past 64 bits, a lone surrogate, a non-string key, 255 levels deep, or not JSON
        else:
            # orjson writes a non-finite float as null. Only output holding a null can hide one, and
            # then reading it back gives something else than the value (None where it held NaN):
            # a check at C speed, where walking the value in Python would cost more than encoding.
            if b"null" not in data or _orjson.loads(data) == value:
                return data
    try:
        try:
            return _encoder.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (legal in JSON escapes, illegal in UTF-8): keep them escaped.
            return _ascii_encoder.encode(value).encode("ascii")
    except RecursionError:
        raise ValueError("a value is circular, or nested too deeply for JSON") from None
