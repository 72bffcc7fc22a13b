"""Server-Sent Events: encoding events and decoding a stream of them (the WHATWG event-stream format).

Sans-I/O and synchronous, like the rest of the wire layer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Event:
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def encode(data: str, *, event: str | None = None, id: str | None = None, retry: int | None = None) -> bytes:
    """One event. ``data`` may span lines: each becomes its own ``data:`` field."""
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        if "\n" in id or "\r" in id or "\0" in id:
            raise ValueError("an event id cannot contain newlines or NUL")
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {int(retry)}")
    lines.extend(f"data: {line}" for line in data.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def comment(text: str = "") -> bytes:
    """A comment line: ignored by clients, it keeps idle connections (and proxies) alive."""
    return f": {text}\n\n".encode()


class Decoder:
    """Incremental decoder: feed bytes as they arrive, get complete events back."""

    def __init__(self) -> None:
        self._buffer = ""
        self._pending = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._started = False
        #: The last event id seen, as a client must remember it for ``Last-Event-ID``.
        self.last_event_id: str | None = None
        #: The server's latest reconnection advice (``retry:``), in milliseconds.
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[Event]:
        raw = self._pending + chunk
        try:
            text = raw.decode("utf-8")
            self._pending = b""
        except UnicodeDecodeError as error:
            # A multi-byte character split across chunks: keep its start for the next chunk.
            text = raw[: error.start].decode("utf-8")
            self._pending = raw[error.start :]
        if not self._started and text:
            text = text.removeprefix("\ufeff")
            self._started = True
        self._buffer += text
        events: list[Event] = []
        while True:
            end = _line_end(self._buffer)
            if end is None:
                return events
            line, self._buffer = self._buffer[: end[0]], self._buffer[end[1] :]
            event = self._line(line)
            if event is not None:
                events.append(event)

    def _line(self, line: str) -> Event | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
            self.last_event_id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> Event | None:
        data = "\n".join(self._data)
        event = Event(data, self._event or "message", self._id, self._retry) if data else None
        # An event without data is not dispatched, but its id still counts (a priming event).
        self._data, self._event, self._id, self._retry = [], "", None, None
        return event


def _line_end(buffer: str) -> tuple[int, int] | None:
    """(end of the first line, start of the next) for any of CRLF, LF, CR; None if incomplete."""
    cr, lf = buffer.find("\r"), buffer.find("\n")
    if cr == -1 and lf == -1:
        return None
    if cr == -1 or (lf != -1 and lf < cr):
        return lf, lf + 1
    if cr + 1 == len(buffer):
        return None  # may be the first half of CRLF
    return cr, cr + (2 if buffer[cr + 1] == "\n" else 1)
