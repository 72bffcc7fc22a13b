"""The one thread that owns one ``sqlite3`` connection (SQLite's objects stay on the thread that made them):
calls queued in order, one at a time, each one thread hop for the event loop."""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from typing import Any

logger = logging.getLogger(__name__)


class Worker:
    """The one thread that owns one ``sqlite3`` connection: every call on the connection runs here,
    one at a time, in the order it was submitted (SQLite's objects stay on the thread that made them).

    A call is one thread hop: the event loop puts it in a queue and is woken with its result.
    """

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[tuple[asyncio.Future[Any] | None, Any, tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (call := self._calls.get()) is not None:
            future, function, args = call
            try:
                result, failure = function(*args), None
            except BaseException as error:  # handed to the caller, whatever it is
                result, failure = None, error
            if future is None:  # posted: nobody waits for it
                if failure is not None:
                    logger.warning(
                        "%s failed on a retired connection: %s", getattr(function, "__name__", function), failure
                    )
            else:
                try:
                    future.get_loop().call_soon_threadsafe(_settle, future, result, failure)
                except RuntimeError:  # the event loop is closed: nobody is waiting any more
                    pass
            del call, future, result, failure  # hold no row past the call

    @property
    def alive(self) -> bool:
        """Whether the thread still runs (a retired worker ends after its last call)."""
        return self._thread.is_alive()

    def post(self, function: Any, *args: Any) -> None:
        """Queue ``function(*args)`` with nobody waiting for it (a failure is logged)."""
        self._calls.put((None, function, args))

    async def call(self, function: Any, *args: Any) -> Any:
        """Run ``function(*args)`` on the thread; its result, or its exception raised here.

        When the caller is cancelled the call still runs to its end on the thread; a later call
        starts only after it (see :meth:`Database.run`)."""
        future = asyncio.get_running_loop().create_future()
        self._calls.put((future, function, args))
        return await future

    def stop(self) -> None:
        """End the thread after the calls already queued."""
        self._calls.put(None)


def _settle(future: asyncio.Future[Any], result: Any, failure: BaseException | None) -> None:
    if future.done():  # the caller was cancelled
        return
    if failure is not None:
        future.set_exception(failure)
    else:
        future.set_result(result)
