"""Running one command against a target: logging to stderr, connecting, and exit codes.

Every connecting command is an ``async def body(client) -> int`` handed to :func:`run`; this module
turns what can go wrong into one line on stderr and the documented exit code.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from .targets import ServerStderr, Target, UsageError, connect

#: Exit codes of every ``plainmcp`` command (``tap`` passes the server's own through).
OK = 0
FAILED = 1  # the server answered with a JSON-RPC error, or could not be reached / started
USAGE = 2  # the command line is wrong (argparse uses 2 as well)
TOOL_ERROR = 3  # tools/call returned a result with isError: true
INTERRUPTED = 130  # Ctrl-C, as shells report it

EXIT_CODES = """\
exit codes:
  0  success
  1  the server answered with an error, or could not be started or reached
  2  usage error (bad options or arguments)
  3  the tool ran and reported a failure (isError: true)
  130  interrupted (Ctrl-C), as shells report it"""

Body = Callable[[Any], Awaitable[int]]


def configure_logging(verbose: bool) -> ServerStderr:
    """Logs to stderr (stdout carries results only): warnings, or everything with ``--verbose``.

    A spawned server's stderr is always kept (the last lines), to show when connecting fails.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s" if verbose else "plainmcp: %(message)s"))
    handler.setLevel(logging.INFO if verbose else logging.WARNING)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    # The HTTP client warns of each failed POST; the one error that ends the command says it better.
    logging.getLogger("plainmcp.http_client").setLevel(logging.INFO if verbose else logging.ERROR)
    tail = ServerStderr()
    server_log = logging.getLogger("plainmcp.stdio.server")
    server_log.setLevel(logging.INFO)
    server_log.addHandler(tail)
    return tail


def fail(message: str) -> None:
    print(f"plainmcp: {message}", file=sys.stderr)


def run(target_of: Callable[[], Target], body: Body, *, verbose: bool, **client_options: Any) -> int:
    """Connect to the target, run ``body(client)``, and return its exit code, or the code for what
    went wrong on the way (a message on stderr)."""
    import anyio

    try:
        target = target_of()
    except UsageError as problem:
        fail(str(problem))
        return USAGE
    tail = configure_logging(verbose)

    async def main() -> int:
        async with connect(target, **client_options) as client:
            return await body(client)

    try:
        return anyio.run(main)
    except BaseException as caught:
        error = _unwrap(caught)
        if isinstance(error, KeyboardInterrupt):
            fail("interrupted")
            return INTERRUPTED
        code, message = explain(error, target)
        if code is None:
            raise
        fail(message)
        if code != FAILED or _answered(error):
            return code  # a server that answered with an error is running fine: its start-up log says nothing
    if tail.lines and not verbose:
        print("the server's last words on stderr:", file=sys.stderr)
        for line in tail.lines:
            print(f"  {line}", file=sys.stderr)
    return FAILED


def _answered(error: BaseException) -> bool:
    """Whether the server answered with a JSON-RPC error (it runs; a server that exited is not one)."""
    from ..errors import MCPError
    from ..spawned import ServerExited

    return isinstance(error, MCPError) and not isinstance(error, ServerExited)


def _unwrap(error: BaseException) -> BaseException:
    """The one error inside nested single-error groups (task groups wrap what their tasks raise)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def explain(error: BaseException, target: Target) -> tuple[int | None, str]:
    """The exit code and the line to print for ``error``; (None, "") for what must propagate
    (SystemExit and the like)."""
    from ..errors import MCPError
    from ..spawned import ServerExited

    if isinstance(error, UsageError):
        return USAGE, str(error)
    if isinstance(error, ServerExited):  # its last words follow, as for any failure to connect
        return FAILED, error.summary
    if isinstance(error, MCPError):
        return FAILED, f"error {error.code}: {error.message}" + (f" {render_data(error.data)}" if error.data else "")
    if isinstance(error, FileNotFoundError) and not target.is_http:
        return FAILED, f"cannot start {error.filename or target.command[0]}: no such command"
    if isinstance(error, BaseExceptionGroup):
        return FAILED, f"{target.describe()}: " + "; ".join(f"{type(e).__name__}: {e}" for e in error.exceptions)
    if isinstance(error, Exception):  # OSError, TimeoutError, httpx errors: a line, not a traceback
        return FAILED, f"{target.describe()}: {type(error).__name__}: {error}"
    return None, ""


def render_data(data: Any) -> str:
    from .render import short

    return short(data, 300)
