"""File names that are not valid UTF-8: a reversible, valid-Unicode form for the wire, and back.

POSIX names are bytes. Python reads a byte that is not part of valid UTF-8 as a lone surrogate
(``surrogateescape``: ``0xE9`` becomes ``"\\udce9"``), which is not valid Unicode: JSON holding it
is refused or mangled by other clients. So every name that goes out passes through :func:`wire_name`,
and every path that comes in through :func:`from_wire`:

- A name that is valid UTF-8 is written as it is.
- A name that is not is written ``bytes:`` followed by the name, where each byte that is not part of
  valid UTF-8 is ``%XX`` (two hex digits) and ``%`` itself is ``%25``; the rest stays as it is:
  ``caf\\xe9.txt`` is ``bytes:caf%E9.txt``. :func:`human_name` gives the U+FFFD form for people.
- A valid name that already reads as such a form (``bytes:`` and every ``%`` before two hex digits)
  is escaped the same way (``bytes:x`` is ``bytes:bytes:x``), so the mapping is one to one.

A path is converted one component at a time (split at ``/``): a client may join a listed
``bytes:`` name to a directory as it would any name. A ``bytes:`` component that would hold ``/``
or NUL, or be empty, ``.`` or ``..``, is refused: no form this module writes decodes to one.
"""

from __future__ import annotations

import os
import re

PREFIX = "bytes:"
#: What follows PREFIX in a well-formed escaped name: no "%" without two hex digits after it.
_WELL_FORMED = re.compile(r"(?:[^%]|%[0-9A-Fa-f]{2})*", re.DOTALL)
#: The characters surrogateescape uses for undecodable bytes (0x80-0xFF).
_ESCAPED = re.compile("[\udc80-\udcff]")
#: Surrogates that are no escaped byte: a client's string holding one names no file.
_FOREIGN_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


class BadName(ValueError):
    """A client's ``bytes:`` name (or a path with a lone surrogate) that names no file name."""


def _is_escape_form(name: str) -> bool:
    return name.startswith(PREFIX) and _WELL_FORMED.fullmatch(name, len(PREFIX)) is not None


def wire_name(name: str) -> str:
    """One name (no ``/``), as read from the system (``surrogateescape``), in its wire form."""
    if _ESCAPED.search(name) is None and not _is_escape_form(name):
        return name
    escaped = name.replace("%", "%25")
    return PREFIX + _ESCAPED.sub(lambda found: f"%{ord(found.group()) - 0xDC00:02X}", escaped)


def wire_path(path: str) -> str:
    """A ``/``-separated path (absolute or relative), each component in its wire form."""
    if _ESCAPED.search(path) is None and PREFIX not in path:
        return path  # the common case: nothing to look at per component
    return "/".join(wire_name(part) for part in path.split("/"))


def human_name(name: str) -> str:
    """A name for people: undecodable bytes as U+FFFD (not reversible: two names may read the same)."""
    return os.fsencode(name).decode("utf-8", "replace")


def labelled(wire: str) -> str:
    """A wire-form name for a text listing: a ``bytes:`` form is followed by its readable form."""
    if not _is_escape_form(wire) or "/" in wire:
        return wire
    return f"{wire}  ({human_name(name_from_wire(wire))})"


def name_from_wire(part: str) -> str:
    """One component as a client wrote it, as the system name (``surrogateescape``).

    Raises:
        BadName: a ``bytes:`` form naming no valid name, or a lone surrogate outside the escapes.
    """
    if not _is_escape_form(part):
        if _FOREIGN_SURROGATE.search(part) is not None:
            raise BadName("the path holds a lone surrogate that is no file name (not valid Unicode)")
        return part
    raw = bytearray()
    rest = part[len(PREFIX) :]
    index = 0
    while index < len(rest):
        char = rest[index]
        if char == "%":
            raw.append(int(rest[index + 1 : index + 3], 16))
            index += 3
            continue
        try:
            raw += char.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise BadName("the path holds a lone surrogate that is no file name (not valid Unicode)") from None
        index += 1
    name = bytes(raw)
    if name in (b"", b".", b"..") or b"/" in name or b"\0" in name:
        raise BadName(f"a {PREFIX} name must decode to a file name (not empty, '.', '..', no '/' or NUL)")
    return os.fsdecode(name)


def from_wire(path: str) -> str:
    """A client's path with each ``bytes:`` component decoded (see :func:`name_from_wire`).

    Raises:
        BadName: as :func:`name_from_wire`.
    """
    if PREFIX not in path and _FOREIGN_SURROGATE.search(path) is None:
        return path
    return "/".join(name_from_wire(part) for part in path.split("/"))
