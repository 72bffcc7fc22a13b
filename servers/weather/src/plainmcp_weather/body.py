"""An upstream's body read as a stream, never more than a cap of it held.

``response.json()`` reads a body whole, and httpx decodes ``gzip`` without bounding what a few
compressed bytes expand to: an endless, huge or compressed-bomb body would grow the server until it
dies. :func:`read_capped` reads the raw bytes chunk by chunk and decodes them itself, asking zlib
for no more than still fits, so such a body ends in :class:`TooLarge` once the cap is passed, with
at most the cap (plus one network chunk) held. Time is the caller's to bound (a deadline around the
whole attempt): a body dripped a byte at a time never passes the cap.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

#: At most one JSON value per this many bytes of the cap (262,144 for 4 MiB). A parsed value costs
#: Python 30 to 200 bytes (a one-key dict is 184) whatever its size in JSON, where ``{},`` is three
#: bytes: a body of nothing but tiny values would grow some 25 times once parsed, and take a tenth of
#: a second to parse. Real answers are far below: a 16-day hourly forecast has a few thousand values,
#: an NWS alert a few hundred delimiters.
BYTES_PER_VALUE = 16
#: What we ask for (``Accept-Encoding``); anything else the upstream sends anyway is refused.
ACCEPT_ENCODING = "gzip"
_ZLIB_ENCODINGS = frozenset({"gzip", "x-gzip", "deflate"})
#: zlib's window bits for "a gzip or a zlib header, whichever comes" (32 + 15).
_AUTO_HEADER = 47


class BodyError(Exception):
    """The body cannot be accepted (the message is ours, never the upstream's)."""


class TooLarge(BodyError):
    """The body (declared, received or decoded) is larger than the cap."""


class TooDense(BodyError):
    """More JSON values than the cap allows (see :data:`BYTES_PER_VALUE`)."""


class BadEncoding(BodyError):
    """A ``Content-Encoding`` we did not ask for, or compressed data that does not decode."""


def declared_length(response: httpx.Response) -> int | None:
    """``Content-Length`` as a number, or None when absent or not one clean number."""
    value = response.headers.get("content-length")
    if value is None or not value.strip().isdigit():
        return None
    return int(value)


async def read_capped(response: httpx.Response, limit: int) -> bytearray:
    """The decoded body of a streamed ``response``, at most ``limit`` bytes.

    A ``Content-Length`` above the cap fails before any of the body is read.

    Raises:
        TooLarge: more than ``limit`` bytes were declared, received or decoded.
        BadEncoding: see the class.
        httpx.HTTPError: the connection failed while reading.
    """
    length = declared_length(response)
    if length is not None and length > limit:
        raise TooLarge(f"declares {length} bytes")
    if response.is_stream_consumed:
        # Built whole in this process (an in-process transport such as httpx.MockTransport), and
        # already decoded by httpx: only the cap is left to apply.
        if len(response.content) > limit:
            raise TooLarge("holds more than the cap")
        return bytearray(response.content)
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity", *_ZLIB_ENCODINGS):
        raise BadEncoding(f"unexpected content encoding {encoding[:40]!r}")
    decoder = zlib.decompressobj(_AUTO_HEADER) if encoding in _ZLIB_ENCODINGS else None
    body = bytearray()
    received = 0
    async for chunk in response.aiter_raw():
        # The raw bytes count too: junk after the end of a gzip stream must not be read forever.
        received += len(chunk)
        if received > limit:
            raise TooLarge("received more than the cap")
        if decoder is None:
            body += chunk
            continue
        if decoder.eof:
            continue
        room = limit - len(body) + 1  # one byte more than fits: getting it means the cap is passed
        try:
            body += decoder.decompress(chunk, room)
        except zlib.error:
            raise BadEncoding("compressed data that does not decode") from None
        if len(body) > limit:
            raise TooLarge("decodes to more than the cap")
        # Output below ``room`` means zlib was not held back, so no input is left in unconsumed_tail.
    if decoder is not None and not decoder.eof:
        raise BadEncoding("compressed data cut short")
    return body


def check_density(body: bytes | bytearray, limit: int) -> None:
    """Refuse a body with more JSON values than ``limit // BYTES_PER_VALUE``, before it is parsed.

    Values are counted by their delimiters (``,``, ``:``, ``{``, ``[``), a few milliseconds for
    MiBs; delimiters inside strings count too, which only errs on the safe side.

    Raises:
        TooDense: see the class.
    """
    values = body.count(b",") + body.count(b":") + body.count(b"{") + body.count(b"[")
    if values > limit // BYTES_PER_VALUE:
        raise TooDense(f"{values} JSON values")
