"""Newline framing and the size-limited encoder: bytes in and out, shared by stdio and HTTP.

Sans-I/O and synchronous, like :mod:`plainmcp.jsonrpc`: :class:`LineDecoder` turns a byte stream
into decoded messages with a bound on each line, :func:`frame` turns a message into one line that
never exceeds the limit (an oversized result becomes a small error for the same id), and
:func:`join_batch` does the same for a batch reply. Every transport frames through here, so the
limit means the same on each.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .errors import ErrorCode
from .jsonrpc import Decoded, ErrorResponse, Invalid, Message, RequestId, Response, decode, encode, error_response

logger = logging.getLogger(__name__)

#: The default bound on one message, in bytes, on every transport.
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class LineDecoder:
    """Splits a byte stream into lines and decodes each one; bounded line length.

    A line longer than ``max_bytes`` is skipped whole and reported as one ``-32600``, so a huge or
    runaway input costs bounded memory and the stream stays in sync at the next newline.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._skipping = False

    def _too_large(self) -> Invalid:
        return Invalid(
            error_response(None, ErrorCode.INVALID_REQUEST, f"Invalid Request: message exceeds {self.max_bytes} bytes"),
            "too large",
        )

    def feed(self, chunk: bytes) -> list[Decoded]:
        """Decode every complete line in ``chunk`` (plus what earlier chunks left over)."""
        buffer = self._buffer
        buffer += chunk
        out: list[Decoded] = []
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if self._skipping:
                self._skipping = False
                out.append(self._too_large())
            elif end - start > self.max_bytes:
                out.append(self._too_large())
            else:
                line = bytes(buffer[start:end]).strip()
                if line:
                    out.append(decode(line))
            start = end + 1
        del buffer[:start]
        if len(buffer) > self.max_bytes:
            buffer.clear()
            self._skipping = True
        return out

    def finish(self) -> list[Decoded]:
        """At end of input: a last line without its newline still counts."""
        if self._skipping:
            self._skipping = False
            return [self._too_large()]
        return self.feed(b"\n") if self._buffer.strip() else []


def _replacement(message: Message, reason: str) -> bytes | None:
    """An error response to send instead of a response that cannot be sent; None for others."""
    if isinstance(message, (Response, ErrorResponse)) and message.id is not None:
        return encode(error_response(message.id, ErrorCode.INTERNAL_ERROR, reason))
    return None


def frame(outgoing: Message | list[Message], max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> bytes:
    """Serialize a message (or a batch reply) as one line. A message that cannot be serialized, or
    is larger than ``max_bytes``, is replaced by an error response for the same id (or dropped); a
    batch is joined by :func:`join_batch`, within the same limit."""
    messages = outgoing if isinstance(outgoing, list) else [outgoing]
    parts: list[BatchPart] = []
    for message in messages:
        try:
            data: bytes | None = encode(message)
        except (ValueError, TypeError):
            logger.exception("cannot serialize %s", type(message).__name__)
            data = _replacement(message, "Internal error")
        if data is not None and len(data) > max_bytes:
            logger.error("dropped a %d-byte message (limit %d)", len(data), max_bytes)
            data = _replacement(message, f"Response exceeds the {max_bytes}-byte message limit")
        if data is not None:
            parts.append((message.id if isinstance(message, Response) else None, data))
    if not parts:
        return b""
    if not isinstance(outgoing, list):
        return parts[0][1] + b"\n"
    batch = join_batch(parts, max_bytes)
    return batch + b"\n" if batch else b""


#: One member of a batch reply: its JSON, and the request id when it is a result (a result may be
#: replaced by a small error to keep the batch within the limit; errors are kept as they are).
BatchPart = tuple[RequestId | None, bytes]


def join_batch(parts: Sequence[BatchPart], max_bytes: int) -> bytes:
    """The JSON array of ``parts``, never longer than ``max_bytes`` (b"" when nothing is left).

    The limit is on the whole line: a peer with the same limit would reject a longer one and lose
    every answer. When the whole does not fit, results are kept in order while they fit with room
    left for a small ``-32603`` error for each later result; the others become those errors, so
    every id is still answered. Only a member that cannot fit even so is dropped (logged).
    Linear in the number and size of the parts.
    """
    if 1 + sum(len(data) + 1 for _, data in parts) <= max_bytes:
        return b"[" + b",".join(data for _, data in parts) + b"]" if parts else b""
    reason = f"Response exceeds the {max_bytes}-byte message limit"
    fallback = [
        encode(error_response(result_id, ErrorCode.INTERNAL_ERROR, reason)) if result_id is not None else data
        for result_id, data in parts
    ]
    room_after = [0] * (len(parts) + 1)  # bytes the smallest form of every later member needs
    for index in range(len(parts) - 1, -1, -1):
        room_after[index] = room_after[index + 1] + len(fallback[index]) + 1
    kept: list[bytes] = []
    size = 1  # "["; each member adds its length and one separator ("," or the closing "]")
    replaced = dropped = 0
    for index, (_, data) in enumerate(parts):
        if size + len(data) + 1 + room_after[index + 1] > max_bytes:
            replaced += data is not fallback[index]
            data = fallback[index]
        if size + len(data) + 1 > max_bytes:
            dropped += 1
            continue
        kept.append(data)
        size += len(data) + 1
    logger.error(
        "a batch reply would exceed the %d-byte limit: %d results sent as errors, %d members dropped",
        max_bytes,
        replaced,
        dropped,
    )
    return b"[" + b",".join(kept) + b"]" if kept else b""
