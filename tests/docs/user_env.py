"""A user's machine in miniature: a scratch home with the files the READMEs name, and the installed commands.

The READMEs speak to a user whose home holds `~/notes`, `~/projects/site`, `~/prompts`, `~/data/shop.db`... The
fixture builds such a home (real directories, real SQLite files) and an environment whose PATH starts with the
directory of the installed console scripts, so that a README line runs exactly as written.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPT = """---
description: Review a change for bugs and risks
arguments: [code]
---
Review this code:

{{code}}
"""


@dataclass(frozen=True)
class UserEnv:
    home: Path
    work: Path  # the scratch working directory commands run in (a git repository with a staged change)
    bin_dir: Path  # where the installed console scripts are
    env: dict[str, str]
    http_port: int = 0  # where `plainmcp-everything --transport http` serves, standing in for the READMEs' 8000

    def as_in_test(self, command: str) -> str:
        """A README command as the test runs it: the one difference is the port of the example HTTP server."""
        return re.sub(r"(127\.0\.0\.1|localhost):8000\b", rf"\g<1>:{self.http_port}", command)

    def which(self, command: str) -> str:
        found = shutil.which(command, path=self.env["PATH"])
        assert found, f"{command} is not installed in the user's environment ({self.bin_dir})"
        return found


def make_home(home: Path) -> None:
    """The files and directories the READMEs' examples name, below ``home``."""
    for directory in (
        "notes",
        "projects/site",
        "Documents",
        "tmp",
        "prompts",
        "data",
        "project/.claude/commands",
        "work/.github/prompts",
    ):
        (home / directory).mkdir(parents=True, exist_ok=True)
    (home / "notes" / "todo.md").write_text("# todo\n- ship it\n")
    (home / "projects" / "site" / "index.html").write_text("<h1>site</h1>\n")
    (home / "prompts" / "review.md").write_text(PROMPT)
    (home / "project" / ".claude" / "commands" / "explain.md").write_text("Explain $ARGUMENTS simply.\n")
    (home / "work" / ".github" / "prompts" / "tests.prompt.md").write_text("Write tests for {{code}}.\n")
    for name in ("data/shop.db", "books.db", "shop.db", "work/shop.db", "work/app.db", "work/data/shop.db"):
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        _shop_database(path)


def _shop_database(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.executescript(
            "create table if not exists orders (id integer primary key, customer text, total real);"
            "delete from orders;"
            "insert into orders (customer, total) values ('ada', 12.5), ('grace', 30.0), ('linus', 7.25);"
        )
    connection.close()


def user_env(root: Path, bin_dir: Path) -> UserEnv:
    home = root / "home"
    make_home(home)
    work = home / "work"
    work.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "/usr/bin:/bin")]),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home / "tmp"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(
        [
            "bash",
            "-c",
            "git init -q . && git config user.email me@example.com && git config user.name me"
            " && printf 'print(1)\\n' > app.py && git add app.py",
        ],
        cwd=work,
        env=env,
        check=True,
    )
    return UserEnv(home=home, work=work, bin_dir=bin_dir, env=env)


class HandshakeError(AssertionError):
    pass


def stdio_handshake(argv: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 20.0) -> dict[str, Any]:
    """Start ``argv`` as a client starts a stdio server (no shell, our environment), send ``initialize`` and
    ``tools/list`` as raw JSON lines, and return ``{"initialize": ..., "tools": [...]}``; raises HandshakeError with
    the server's stderr when it does not answer."""
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    try:

        def send(message: dict[str, Any]) -> None:
            assert process.stdin is not None
            process.stdin.write((json.dumps(message) + "\n").encode())
            process.stdin.flush()

        def answer(request_id: int) -> dict[str, Any]:
            assert process.stdout is not None
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                line = process.stdout.readline()
                if not line:
                    break
                message = json.loads(line)
                if message.get("id") == request_id:
                    if "error" in message:
                        raise HandshakeError(f"{argv}: error {message['error']}")
                    return message["result"]
            raise HandshakeError(f"{argv} did not answer request {request_id}; stderr:\n{_stderr(process)}")

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "docs-test", "version": "1"},
                },
            }
        )
        initialized = answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = answer(2)["tools"] if "tools" in initialized.get("capabilities", {}) else []
        return {"initialize": initialized, "tools": tools}
    finally:
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def _stderr(process: subprocess.Popen[bytes]) -> str:
    process.kill()
    process.wait()
    assert process.stderr is not None
    return process.stderr.read().decode(errors="replace")[-4000:]
