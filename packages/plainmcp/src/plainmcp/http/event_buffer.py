"""One SSE stream's messages: numbered, kept in a bounded history, readable from any point.

The legacy Streamable HTTP transport writes every message meant for a stream here; whoever is
connected (the POST that started it, or a GET resuming it with ``Last-Event-ID``) reads from the
position it has reached. So a client that drops a stream and comes back loses nothing that is
still in the history, and a message is never delivered on two streams.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

logger = logging.getLogger(__name__)


class EventBuffer:
    """Numbered events of one stream. Event ids are ``<key>-<seq>``, unique across the session."""

    def __init__(self, limit: int = 256, key: str | None = None, *, max_bytes: int | None = None) -> None:
        self.key = key or secrets.token_hex(6)
        self.seq = 0
        self.history: deque[tuple[int, bytes]] = deque(maxlen=limit)
        #: The history is kept under this many bytes too (the newest event always stays).
        self.max_bytes = max_bytes
        self.size = 0
        self.finished = False
        self.readers = 0
        #: Bumped to make current readers stop early (SSE polling); the stream itself goes on.
        self.interruptions = 0
        #: The answer that finished a request's stream, as a batch member (``framing.BatchPart``):
        #: (the request id if it is a result, else None; its JSON). Set by the session's router.
        self.reply: tuple[Any, bytes] | None = None
        # Made only when someone waits: most request streams are answered before anyone does.
        self._changed: anyio.Event | None = None
        #: Told of every event pushed, once :meth:`mirror` was called: (seq, JSON, ends the stream).
        self._on_push: Callable[[int, bytes, bool], None] | None = None

    def event_id(self, seq: int) -> str:
        return f"{self.key}-{seq}"

    def mirror(self, on_push: Callable[[int, bytes, bool], None]) -> None:
        """Copy this stream elsewhere (a shared event store): ``on_push`` gets the events still in
        the history now, then each new one, as (seq, JSON, whether it is the stream's last)."""
        if self._on_push is None:
            ended = self.finished and self.reply is not None  # the last event is the answer
            for seq, data in self.history:
                on_push(seq, data, ended and seq == self.seq)
            self._on_push = on_push

    def push(self, data: bytes, last: bool = False) -> int:
        """Append one event's JSON (``last``: the answer that ends a request's stream); returns its
        sequence number."""
        self.seq += 1
        if len(self.history) == self.history.maxlen:
            self.size -= len(self.history[0][1])  # the append below drops it
        self.history.append((self.seq, data))
        self.size += len(data)
        while self.max_bytes is not None and self.size > self.max_bytes and len(self.history) > 1:
            self.size -= len(self.history.popleft()[1])
        if self._on_push is not None:
            self._on_push(self.seq, data, last)
        self._wake()
        return self.seq

    def finish(self) -> None:
        """No more events will come: readers stop after the last one."""
        self.finished = True
        self._wake()

    def interrupt(self) -> None:
        """End the current readers' streams (they resume later with ``Last-Event-ID``)."""
        self.interruptions += 1
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _next_change(self) -> anyio.Event:
        """Set at the next change of this buffer."""
        if self._changed is None:
            self._changed = anyio.Event()
        return self._changed

    async def read_from(self, after: int, interruptions: int | None = None) -> AsyncIterator[tuple[int, bytes]]:
        """Every event numbered above ``after``, then live ones, until the stream is finished or
        interrupted (after ``interruptions``, by default the count when reading starts)."""
        cursor = after
        baseline = self.interruptions if interruptions is None else interruptions
        self.readers += 1
        try:
            while True:
                changed = self._next_change()  # taken before the yields below: a change during them counts
                oldest = self.history[0][0] if self.history else self.seq + 1
                if cursor + 1 < oldest and cursor < self.seq:
                    logger.warning(
                        "stream %s: events %d..%d fell out of the replay buffer", self.key, cursor + 1, oldest - 1
                    )
                for seq, data in list(self.history):
                    if seq > cursor:
                        cursor = seq
                        yield seq, data
                if (self.finished and cursor >= self.seq) or self.interruptions != baseline:
                    return
                await changed.wait()
        finally:
            self.readers -= 1

    async def wait_finished(self) -> None:
        """Wait until no more events will come."""
        while not self.finished:
            await self._next_change().wait()

    async def wait_started(self) -> None:
        """Wait until the stream has an event, has finished, or was interrupted."""
        while not self.history and not self.finished and not self.interruptions:
            await self._next_change().wait()


_EVENT_ID = re.compile(r"([0-9a-f]{1,64})-([0-9]{1,18})")


def parse_event_id(value: str | None) -> tuple[str, int] | None:
    """(stream key, sequence) of a ``Last-Event-ID`` we issued; None for anything else (of any
    length or alphabet: only the shape we issue is read)."""
    found = _EVENT_ID.fullmatch(value) if value else None
    return (found.group(1), int(found.group(2))) if found else None
