"""The stdio transport: newline-delimited JSON-RPC on a process's stdin and stdout.

Server side: :func:`serve_stdio` reads stdin without threads (the event loop waits for the pipe to
be readable, then one ``os.read`` takes whatever is there), and writes each message as it is sent,
without blocking the event loop (:class:`StdoutStream`). End of input or SIGTERM/SIGINT stops reading; in-flight requests get the
session's grace period, what is ready is written, and the process exits 0.

A client that does not read its output gets backpressure, then is dropped: once more than
``high_water`` bytes wait for the pipe, no further request is taken from stdin (the client's own
writes then block), and when the pipe takes nothing for ``write_timeout`` seconds the server stops
serving, as at end of input. Memory stays bounded however long the client keeps writing.

Client side: :func:`spawn_stdio` starts a server process and gives a client the same stream pair,
and :func:`connect_stdio` runs a :class:`~plainmcp.Client` over it;
the server's stderr goes where the client asks (:mod:`plainmcp.spawned`), and closing follows the specification: end of
input, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ObjectReceiveStream, ObjectSendStream, Process

from .connection import ServerConnection
from .errors import MCPError
from .framing import DEFAULT_MAX_MESSAGE_BYTES, LineDecoder, frame
from .jsonrpc import Decoded
from .session import Outbound

if TYPE_CHECKING:
    from .client import Client
    from .server import Server

logger = logging.getLogger(__name__)

_READ_SIZE = 64 * 1024  # a pipe's capacity; larger buffers cost an mmap per read
_WRITE_CHUNK = 256 * 1024  # at most this per write (a pipe takes 64 KiB): no copy of a whole backlog each time


# --------------------------------------------------------------------------------- server side


class StdinStream(ObjectReceiveStream[Decoded]):
    """The session's read stream on stdio: reads the descriptor itself, one message at a time.

    No reader task and no queue in between: when the session asks for a message, one is decoded
    from what was read, or the event loop waits for the pipe to be readable and one ``os.read``
    takes whatever is there (pipes and ttys; regular files are read directly; Windows uses a
    thread). :meth:`end` stops reading (SIGTERM): what is already read is still delivered.
    """

    def __init__(self, fd: int, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, gate: StdoutStream | None = None) -> None:
        self.fd = fd
        #: While ``gate.congested`` (the client is not reading its output), no message is delivered.
        self.gate = gate
        self._decoder = LineDecoder(max_bytes)
        self._ready: deque[Decoded] = deque()
        self._eof = False
        self._eager = False
        self._mode = "file" if stat.S_ISREG(os.fstat(fd).st_mode) else "poll"
        if sys.platform == "win32":
            self._mode = "thread"
        # asyncio fast path: one reader registration kept while messages keep coming. It needs a
        # non-blocking descriptor (a readiness report may be stale by the time we read), so it is
        # used only for a pipe or socket of our own, never for a terminal shared with a shell.
        self._loop: Any = None
        self._more_waiting = True  # the last read filled the buffer: read again before waiting
        self._watching = False
        self._waiter: Any = None
        self._nonblocking = False
        mode = os.fstat(fd).st_mode
        if self._mode == "poll" and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            if os.get_blocking(fd):
                os.set_blocking(fd, False)
                self._nonblocking = True

    def receive_nowait(self) -> Decoded:
        """The next message already read. Raises WouldBlock, or EndOfStream after the last."""
        if self._ready:
            if self.gate is not None and self.gate.congested:
                raise anyio.WouldBlock
            return self._ready.popleft()
        if self._eof:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> Decoded:
        while True:
            if self.gate is not None and self.gate.congested:
                await self.gate.wait_room()  # backpressure: take no more work while output piles up
            if self._ready or self._eof:
                return self.receive_nowait()
            if self._eager:
                # The last read found data waiting: input is flooding in. Let the work already
                # taken run (and its answers show whether the client keeps up) before taking more.
                self._eager = False
                await anyio.lowlevel.checkpoint()
                continue
            chunk = await self._read()
            if chunk:
                self._ready.extend(self._decoder.feed(chunk))
            else:
                self._eof = True
                self._ready.extend(self._decoder.finish())

    async def _read(self) -> bytes:
        if self._nonblocking and (self._loop is not None or _asyncio_loop() is not None):
            return await self._read_asyncio()
        if self._mode == "poll":
            try:
                await anyio.wait_readable(self.fd)
            except anyio.ClosedResourceError:
                return b""  # end() was called
            except (NotImplementedError, OSError):
                self._mode = "thread"
            else:
                return b"" if self._eof else os.read(self.fd, _READ_SIZE)
        if self._mode == "thread":
            return await anyio.to_thread.run_sync(os.read, self.fd, _READ_SIZE, abandon_on_cancel=True)
        await anyio.lowlevel.checkpoint()
        return os.read(self.fd, _READ_SIZE)

    async def _read_asyncio(self) -> bytes:
        """Wait for the descriptor with a reader registration that stays in place between reads,
        instead of one registration (two epoll_ctl calls and a future) per message."""
        loop = self._loop = self._loop or _asyncio_loop()
        waited = False
        while not self._eof:
            # Read at once only after a read that filled the buffer (more is likely waiting) or a
            # readiness report; after a short read the pipe is most likely empty, and a read now
            # would fail, once per message of a client that waits for each answer.
            if waited or self._more_waiting:
                try:
                    data = os.read(self.fd, _READ_SIZE)
                except BlockingIOError:
                    pass  # a stale readiness report: wait again
                else:
                    self._eager = not waited  # found without waiting: input is flooding in
                    self._more_waiting = len(data) == _READ_SIZE
                    return data
            if not self._watching:
                loop.add_reader(self.fd, self._readable)
                self._watching = True
            self._waiter = loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
            waited = True
        return b""

    def _readable(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        else:
            # Readable while nobody reads (the session is busy): stop watching until asked again,
            # or the loop would spin on the level-triggered readiness.
            self._unwatch()

    def _unwatch(self) -> None:
        if self._watching and self._loop is not None:
            self._loop.remove_reader(self.fd)
            self._watching = False

    def end(self) -> None:
        """Stop reading, as at end of input."""
        if not self._eof:
            self._eof = True
            if self._waiter is not None and not self._waiter.done():
                self._waiter.set_result(None)
            elif self._mode == "poll" and self._loop is None:
                anyio.notify_closing(self.fd)  # wakes a pending wait_readable with ClosedResourceError
            self._unwatch()

    def drop(self) -> None:
        """Stop reading and forget what was read but not delivered (the client is being dropped)."""
        self._ready.clear()
        self.end()

    async def aclose(self) -> None:
        self.end()
        if self._nonblocking:
            try:
                os.set_blocking(self.fd, True)
            except OSError:
                pass


def _asyncio_loop() -> Any:
    """The running asyncio loop, or None under another backend."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class StdoutStream(ObjectSendStream[Outbound]):
    """The session's write stream on stdio: each message is framed and written at once.

    Writing in place (no queue, no writer task) saves event-loop turns on every message. The
    descriptor is made non-blocking when it is a pipe or socket of our own (not shared with
    stderr), so a client that is slow to read never blocks the event loop: what the pipe does not
    take waits in a buffer that a drain task empties as the pipe frees up. While that buffer holds
    ``high_water`` bytes or more the stream is :attr:`congested`: senders wait, and the input
    (:class:`StdinStream`'s ``gate``) takes no new requests. When the pipe takes nothing for
    ``write_timeout`` seconds, the buffer is discarded, every later message too, and
    ``on_stall`` is called (the server stops serving). Elsewhere writes are plain blocking writes.

    On asyncio, the first message of an event-loop turn is written at once and the others of the
    same turn go out together with one write in the next turn: a lone answer waits for nothing,
    and a burst of answers (pipelined requests) costs a few system calls instead of one each.
    """

    def __init__(
        self,
        fd: int,
        max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        high_water: int = 1 << 20,
        *,
        write_timeout: float | None = 60.0,
        on_stall: Callable[[], None] | None = None,
    ) -> None:
        self.fd = fd
        self.max_bytes = max_bytes
        self.high_water = high_water
        self.write_timeout = write_timeout
        self.on_stall = on_stall
        #: True while ``high_water`` bytes or more wait for the client to read.
        self.congested = False
        self._room = anyio.Event()
        self._room.set()
        self._pending = bytearray()
        self._need_drain = anyio.Event()
        self._drained = anyio.Event()
        self._drained.set()
        self._closed = False
        self._broken = False
        self._restore = False
        self._turn_open = False  # a message was written in this event-loop turn
        self._loop: Any = None
        # Regular files and /dev/null cannot be polled (epoll refuses them); their writes never
        # wait, so the drain writes them directly instead of waiting to be told it may.
        self._pollable = True
        if sys.platform != "win32":
            mode = os.fstat(fd).st_mode
            self._pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
            shares_stderr = fd != 2 and _same_file(fd, 2)
            if (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) and not shares_stderr and os.get_blocking(fd):
                os.set_blocking(fd, False)
                self._restore = True

    async def send(self, item: Outbound) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = frame(item.message, self.max_bytes)
        if not data or self._broken:
            return
        if not self._pending and not self._turn_open:
            data = data[self._write(data) :]
            if not data:
                self._open_turn()
                return
        self._pending += data
        self._need_drain.set()
        if len(self._pending) >= self.high_water:
            if not self.congested:
                self.congested = True
                self._room = anyio.Event()
            await self.wait_room()

    async def wait_room(self) -> None:
        """Return once the buffer is below ``high_water`` again (or the client was dropped)."""
        while self.congested:
            await self._room.wait()

    def _uncongest(self) -> None:
        if self.congested:
            self.congested = False
            self._room.set()

    def _open_turn(self) -> None:
        if self._loop is None:
            self._loop = _asyncio_loop() or False  # False: not asyncio (asked once, not per message)
        loop = self._loop
        if loop:
            self._turn_open = True
            loop.call_soon(self._close_turn)

    def _close_turn(self) -> None:
        self._turn_open = False

    def _write(self, data: bytes) -> int:
        """Write what the descriptor takes now; returns the count (all of it when blocking)."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:  # BrokenPipeError: the client closed our stdout
            logger.info("output closed (%s); discarding further messages", exc)
            self._break()
            return len(data)

    def _break(self) -> None:
        self._broken = True
        self._pending.clear()
        self._uncongest()

    async def drain_forever(self) -> None:
        """Run as a task: empties the buffer whenever the pipe was full."""
        while True:
            await self._need_drain.wait()
            self._drained = anyio.Event()
            while self._pending:
                if self._pollable:
                    with anyio.move_on_after(self.write_timeout):
                        await anyio.wait_writable(self.fd)
                        del self._pending[: self._write(bytes(self._pending[:_WRITE_CHUNK]))]
                        if len(self._pending) < self.high_water:
                            self._uncongest()
                        continue
                    self._stalled()
                else:
                    del self._pending[: self._write(bytes(self._pending[:_WRITE_CHUNK]))]
            self._uncongest()
            self._need_drain = anyio.Event()
            self._drained.set()

    def _stalled(self) -> None:
        logger.warning(
            "the client read none of its output for %g s (%d bytes waiting); dropping it",
            self.write_timeout,
            len(self._pending),
        )
        self._break()
        if self.on_stall is not None:
            self.on_stall()

    async def aclose(self, flush_timeout: float = 5.0) -> None:
        """Close, after the buffer is written (bounded: a client that stopped reading loses it)."""
        self._closed = True
        with anyio.move_on_after(flush_timeout):
            while self._pending and not self._broken:
                await self._drained.wait()
                await anyio.sleep(0)
        if self._restore:
            try:
                os.set_blocking(self.fd, True)
            except OSError:
                pass


def _same_file(a: int, b: int) -> bool:
    try:
        first, second = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


async def _end_input_on_signals(input_stream: StdinStream) -> None:
    try:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                logger.info("received %s; finishing in-flight requests", signal.Signals(signum).name)
                input_stream.end()
                return
    except (NotImplementedError, ValueError):  # Windows, or not the main thread
        return


async def serve_stdio(
    server: Server,
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    handle_signals: bool = True,
    output_high_water: int = 1 << 20,
    write_timeout: float | None = 60.0,
    **session_options: Any,
) -> None:
    """Serve ``server`` on stdin/stdout until end of input or SIGTERM/SIGINT.

    ``output_high_water`` bytes of unread output stop the intake of requests; a client that reads
    nothing for ``write_timeout`` seconds is dropped (serving ends, as at end of input)."""
    output = StdoutStream(
        sys.stdout.fileno() if stdout_fd is None else stdout_fd,
        max_message_bytes,
        output_high_water,
        write_timeout=write_timeout,
    )
    input_stream = StdinStream(sys.stdin.fileno() if stdin_fd is None else stdin_fd, max_message_bytes, gate=output)
    output.on_stall = input_stream.drop
    connection = ServerConnection(server, input_stream, output, **session_options)
    async with server.running(), anyio.create_task_group() as task_group:
        task_group.start_soon(output.drain_forever)
        if handle_signals:
            task_group.start_soon(_end_input_on_signals, input_stream)
        await connection.run()  # ends by closing ``output``, which flushes it
        task_group.cancel_scope.cancel()


class StdioClosedError(OSError):
    """stdin or stdout is closed (``<&-``, ``>&-``, or a parent that gave none): nothing to serve on."""


def _check_open(name: str) -> None:
    """Raise :class:`StdioClosedError` unless ``sys.<name>`` is an open file descriptor. Python sets a
    stream closed at start-up to None; its descriptor number may later be reused by another file, so the
    stream, not the number, tells."""
    stream = getattr(sys, name)
    try:
        os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):
        raise StdioClosedError(
            f"{name} is closed: the stdio transport reads requests from stdin and writes answers to stdout "
            "(start the server from an MCP client, or serve with --transport http)"
        ) from None


def run_stdio(server: Server, **options: Any) -> None:
    """Blocking entry point for a server's ``__main__``: serve stdio, return when done. Raises
    :class:`StdioClosedError` (before serving) when stdin or stdout is closed."""
    for name, fd in (("stdin", "stdin_fd"), ("stdout", "stdout_fd")):
        if options.get(fd) is None:
            _check_open(name)
    anyio.run(lambda: serve_stdio(server, **options))


# --------------------------------------------------------------------------------- client side


async def _pump_lines(source: ByteReceiveStream, sink: ObjectSendStream[Decoded], max_bytes: int) -> None:
    decoder = LineDecoder(max_bytes)
    async with sink:
        try:
            async for chunk in source:
                for item in decoder.feed(chunk):
                    await sink.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        for item in decoder.finish():
            await sink.send(item)


async def _pump_messages(source: ObjectReceiveStream[Outbound], process: Process, max_bytes: int) -> None:
    assert process.stdin is not None
    async with source:
        async for outbound in source:
            data = frame(outbound.message, max_bytes)
            if data:
                try:
                    await process.stdin.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    return


async def _stop_process(process: Process, grace: float) -> None:
    """End of input, then SIGTERM, then SIGKILL: each step waits up to ``grace`` seconds."""
    if process.stdin is not None:
        try:
            await process.stdin.aclose()
        except OSError:
            pass
    for step in (None, process.terminate, process.kill):
        if step is not None:
            try:
                step()
            except ProcessLookupError:
                return
        with anyio.move_on_after(grace):
            await process.wait()
            return


@asynccontextmanager
async def spawn_stdio(
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    close_grace: float = 2.0,
    stderr_tail: Any = None,
) -> AsyncIterator[tuple[ObjectReceiveStream[Decoded], ObjectSendStream[Outbound], Process]]:
    """Start ``command`` as a stdio server; yield (read stream, write stream, process).

    The server's stderr is read by ``stderr_tail``, a :class:`plainmcp.spawned.StderrTail` (by
    default one that sends its lines to the logger or to our stderr, see that module). On exit the process is stopped as the specification
    says: its stdin is closed, then it gets SIGTERM, then SIGKILL, each after ``close_grace`` seconds.
    """
    from .spawned import StderrTail, stderr_sink

    name = os.path.basename(command[0])
    tail = stderr_tail or StderrTail(stderr_sink("auto", name))
    process = await anyio.open_process(
        list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    assert process.stdout is not None and process.stderr is not None
    read_send, read_receive = anyio.create_memory_object_stream[Decoded](64)
    write_send, write_receive = anyio.create_memory_object_stream[Outbound](64)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(_pump_lines, process.stdout, read_send, max_message_bytes)
        task_group.start_soon(tail.pump, process.stderr)
        task_group.start_soon(_pump_messages, write_receive, process, max_message_bytes)
        try:
            yield read_receive, write_send, process
        finally:
            with anyio.CancelScope(shield=True):
                await _stop_process(process, close_grace)
            task_group.cancel_scope.cancel()


def _short_command(command: Sequence[str], width: int = 80) -> str:
    """``command`` as a user would recognise it: the program's name, then its arguments, cut."""
    import shlex

    text = shlex.join([os.path.basename(command[0]), *command[1:]])
    return text if len(text) <= width else text[: width - 3] + "..."


@asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    initialize: bool = True,
    close_grace: float = 2.0,
    max_message_bytes: int | None = None,
    stderr: str | TextIO = "auto",
    **options: Any,
) -> AsyncIterator[Client]:
    """Spawn a stdio server and yield an initialized :class:`Client`; stop the server on exit.

    ``max_message_bytes`` bounds one message each way (4 MiB by default); a longer line from the
    server is skipped, so a request whose answer is larger times out instead of being answered.

    The server's stderr is never swallowed: with ``stderr="auto"`` its lines go to the
    ``plainmcp.stdio.server.<command>`` logger when this program's logging shows them, otherwise
    to this process's stderr; ``"log"``, ``"discard"`` or a text stream choose for you (see
    :mod:`plainmcp.spawned`).

    Raises:
        ServerExited: (an :class:`MCPError`) the server exited before it answered the handshake;
            the message quotes its exit code and last lines on stderr.
        FileNotFoundError: the command does not exist.
    """
    from .client import open_client, unwrap_single_errors  # not on a server's path
    from .spawned import StderrTail, stderr_sink

    name = os.path.basename(command[0])
    tail = StderrTail(stderr_sink(stderr, name))
    limit = DEFAULT_MAX_MESSAGE_BYTES if max_message_bytes is None else max_message_bytes
    connected = False
    with unwrap_single_errors():
        async with spawn_stdio(
            command, env=env, cwd=cwd, close_grace=close_grace, max_message_bytes=limit, stderr_tail=tail
        ) as (read, write, process):
            try:
                async with open_client(read, write, initialize=initialize, **options) as client:
                    connected = True
                    client.process = process
                    client.transport = "stdio"
                    yield client
            except MCPError:
                if connected:
                    raise
                # The handshake failed because the connection closed: if the server is gone, say
                # so with its own words rather than "Connection closed".
                exited = await tail.exited(process, _short_command(command))
                if exited is None:
                    raise
                raise exited from None
