"""The size of an HTTP request head, bounded before it is parsed (and so before authentication).

Neither of uvicorn's parsers bounds a head the same way: httptools keeps every header it is fed
(~120 MiB of small headers took a server past 2 GiB), h11 refuses past 16 KiB of incomplete head
with a 400. The connection guard meters the bytes of each head as they arrive and feeds the parser
only what fits; a head that does not fit gets ``431 Request Header Fields Too Large`` and the
connection is closed, on either parser.

The limits: the whole head (request line, header lines, the blank line) at most
:data:`MAX_HEAD_BYTES`, and at most :data:`MAX_HEADER_FIELDS` header lines. 16 KiB is what Node
allows and what h11 allows by default, so the two stacks refuse the same heads; 100 fields is
Apache's default. A bearer token of several kilobytes fits, as do the ``Mcp-Param-*`` headers of a
tool call with a few arguments.
"""

from __future__ import annotations

import json

from ..errors import ErrorCode

MAX_HEAD_BYTES = 16 * 1024
MAX_HEADER_FIELDS = 100
#: Line ends a head of MAX_HEADER_FIELDS fields may hold: the request line's, one per field, the blank line's.
MAX_HEAD_LINES = MAX_HEADER_FIELDS + 2

_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": int(ErrorCode.INVALID_REQUEST),
            "message": f"Request head too large: at most {MAX_HEAD_BYTES} bytes and {MAX_HEADER_FIELDS} header fields",
        },
    },
    separators=(",", ":"),
).encode()
TOO_LARGE_431 = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n" % len(_BODY) + _BODY
)


class HeadMeter:
    """What has arrived of the head in progress on one connection."""

    __slots__ = ("bytes", "lines")

    def __init__(self) -> None:
        self.bytes = 0
        self.lines = 0

    def reset(self) -> None:
        self.bytes = 0
        self.lines = 0

    def room(self, data: bytes) -> int:
        """How many leading bytes of ``data`` may go to the parser as part of the head, and count
        them: all of ``data`` when it fits, else the part up to either limit (if the head ends
        within that part, the rest is the body or the next request; if not, the head is too large)."""
        end = min(len(data), MAX_HEAD_BYTES - self.bytes)
        lines_left = MAX_HEAD_LINES - self.lines
        lines = data.count(b"\n", 0, end)
        if lines > lines_left:
            # Cut just after the last line end the head may still have.
            position = -1
            for _ in range(lines_left):
                position = data.index(b"\n", position + 1)
            end = position + 1
            lines = lines_left
        self.bytes += end
        self.lines += lines
        return end
