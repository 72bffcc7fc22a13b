"""The process a regular-expression search runs in: ``python -m plainmcp_filesystem.grep_worker FD PARENT``.

It gets an open directory descriptor (inherited, never a path) and the request as JSON on stdin,
and writes the outcome as JSON on stdout. The server kills it at the deadline or when the call is
cancelled: a backtracking regular expression cannot be interrupted any other way, and here it
holds no lock the server needs. Imports only the standard library and the modules of this package
that do (no anyio, no plainmcp): it starts in a few tens of milliseconds.

It never outlives the server (``PARENT``, its process id), however the server ends, ``SIGKILL``
included: on Linux the kernel sends it ``SIGKILL`` when the server dies (``PR_SET_PDEATHSIG``), and
on every system a watcher thread ends it within :data:`WATCH_SECONDS` once its parent is another.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import signal
import sys
import threading
import time
from dataclasses import asdict

#: How often the watcher thread checks that the server is still the parent.
WATCH_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """End this process when ``parent`` is gone (it may already be: then at once)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watcher below still holds
    # Checked after prctl: a parent that died before it was set left us to another parent already.
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCH_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main() -> None:
    if len(sys.argv) > 2:
        _die_with(int(sys.argv[2]))
    from .search import Grep, GrepRequest

    fd = int(sys.argv[1])
    fields = json.loads(sys.stdin.buffer.read())
    fields["include"] = tuple(fields["include"])
    fields["exclude"] = tuple(fields["exclude"])
    outcome = Grep(GrepRequest(**fields)).run(fd)
    sys.stdout.write(json.dumps(asdict(outcome)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
