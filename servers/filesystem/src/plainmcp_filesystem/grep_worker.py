"""The process a regular-expression search runs in: ``python -m plainmcp_filesystem.grep_worker FD``.

It gets an open directory descriptor (inherited, never a path) and the request as JSON on stdin,
and writes the outcome as JSON on stdout. The server kills it at the deadline or when the call is
cancelled: a backtracking regular expression cannot be interrupted any other way, and here it
holds no lock the server needs. Imports only the standard library and the modules of this package
that do (no anyio, no plainmcp): it starts in a few tens of milliseconds.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict


def main() -> None:
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
