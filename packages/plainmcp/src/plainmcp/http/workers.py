"""``--workers N``: N processes serving one listening socket, supervised by the process that was started.

The supervisor binds the socket, then forks the workers (each runs uvicorn on the inherited socket; the
kernel spreads connections between them). It forwards SIGTERM and SIGINT to every worker and waits for
them to drain; a worker that dies unexpectedly is replaced after a short pause, unless workers keep
dying right after they start (then the supervisor gives up with exit code 1 rather than loop). A worker
dies with its supervisor, however the supervisor ends (``PR_SET_PDEATHSIG`` on Linux), so no worker is
left serving as an orphan.

Several workers are replicas: the state they must share has to live in shared state (``--redis``).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

#: A worker that ends sooner than this after its start counts as a failed start.
QUICK_DEATH_SECONDS = 2.0
#: Failed starts in a row after which the supervisor stops replacing workers.
MAX_QUICK_DEATHS = 5
RESPAWN_PAUSE_SECONDS = 0.5


def _die_with_parent(parent: int) -> None:
    """Ask Linux to send SIGTERM to this process when its parent ends (elsewhere: nothing to do here)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def _spawn(number: int, serve: Callable[[], None]) -> int:
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _die_with_parent(parent)
        logger.info("worker %d started (pid %d)", number, os.getpid())
        serve()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        logger.exception("worker %d failed", number)
        code = 1
    finally:
        logging.shutdown()
        os._exit(code)
    return 0  # not reached


def run_workers(count: int, serve: Callable[[], None]) -> int:
    """Run ``serve`` in ``count`` forked workers until SIGTERM/SIGINT; returns the exit code (0 after a
    requested stop, 1 when workers kept failing to start)."""
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(workers):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    workers: dict[int, tuple[int, float]] = {}  # pid -> (worker number, start time)
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    quick_deaths = 0
    try:
        for number in range(1, count + 1):
            workers[_spawn(number, serve)] = (number, time.monotonic())
        while workers:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            number, started = workers.pop(pid, (0, 0.0))
            if stopping or number == 0:
                continue
            code = os.waitstatus_to_exitcode(status)
            logger.warning("worker %d (pid %d) ended with %s; starting another", number, pid, _describe(code))
            quick_deaths = quick_deaths + 1 if time.monotonic() - started < QUICK_DEATH_SECONDS else 0
            if quick_deaths >= MAX_QUICK_DEATHS:
                logger.error("workers keep failing right after they start; stopping")
                stop(signal.SIGTERM, None)
                continue
            time.sleep(RESPAWN_PAUSE_SECONDS)
            if not stopping:
                workers[_spawn(number, serve)] = (number, time.monotonic())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 1 if quick_deaths >= MAX_QUICK_DEATHS else 0


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"
