"""connect_stdio never swallows the spawned server's stderr, and a server that exits before it
answers is a short, clear ServerExited quoting its last words (plainmcp.spawned). Real processes."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
import textwrap
import traceback

import anyio
import pytest
from plainmcp import MCPError, ServerExited, connect_stdio
from plainmcp.spawned import MAX_LINE_BYTES, TAIL_LINES

pytestmark = pytest.mark.anyio

# A stdio server that says something on stderr first, then serves.
TALKATIVE = [
    sys.executable,
    "-c",
    textwrap.dedent("""
    import sys
    print("talkative: starting up", file=sys.stderr, flush=True)
    from plainmcp import Server, run_stdio
    server = Server("talkative", "1.0")
    @server.tool(input_schema={"type": "object"})
    async def hello(ctx, args):
        print("talkative: hello was called", file=sys.stderr, flush=True)
        return "hi"
    run_stdio(server)
"""),
]


def dies(code: int, *lines: str) -> list[str]:
    """A command that writes ``lines`` on stderr and exits with ``code`` without answering."""
    script = "import sys\n" + "".join(f"print({line!r}, file=sys.stderr)\n" for line in lines) + f"sys.exit({code})\n"
    return [sys.executable, "-c", script]


async def test_a_server_that_exits_at_once_is_server_exited_with_its_code_and_last_lines() -> None:
    with pytest.raises(ServerExited) as caught:
        async with connect_stdio(dies(3, "config: --db is not a database", "bye"), stderr="discard"):
            pass
    error = caught.value
    assert error.returncode == 3 and error.stderr_lines == ["config: --db is not a database", "bye"]
    assert "exited with code 3 before it answered" in str(error)
    assert "\n  config: --db is not a database\n  bye" in str(error)
    assert isinstance(error, MCPError)  # callers that catch MCPError keep working


async def test_a_python_without_plainmcp_gives_the_import_error_not_connection_closed() -> None:
    # -S: no site-packages, so this interpreter cannot import plainmcp, as a user's system python.
    with pytest.raises(ServerExited) as caught:
        async with connect_stdio([sys.executable, "-S", "-m", "plainmcp.examples.notes"], stderr="discard"):
            pass
    message = str(caught.value)
    assert "exited with code 1" in message and "No module named 'plainmcp'" in message
    assert "Connection closed" not in message
    shown = "".join(traceback.format_exception(caught.value))
    assert len(shown.splitlines()) < 40  # not a task group's nest of tracebacks
    assert "ExceptionGroup" not in shown


async def test_a_killed_server_names_the_signal() -> None:
    with pytest.raises(ServerExited, match="was killed by signal 9"):
        async with connect_stdio(
            [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], stderr="discard"
        ):
            pass


async def test_only_the_last_lines_are_kept_and_a_line_without_end_is_cut() -> None:
    lines = [f"line {n}" for n in range(50)]
    with pytest.raises(ServerExited) as caught:
        async with connect_stdio(dies(1, *lines, "x" * (3 * MAX_LINE_BYTES)), stderr="discard"):
            pass
    kept = caught.value.stderr_lines
    assert len(kept) == TAIL_LINES
    assert all(len(line) <= MAX_LINE_BYTES for line in kept)
    assert kept[: TAIL_LINES - 3] == lines[-(TAIL_LINES - 3) :]


async def test_stderr_lines_are_written_to_the_stream_given_as_they_come() -> None:
    sink = io.StringIO()
    async with connect_stdio(TALKATIVE, stderr=sink) as client:
        assert (await client.call_tool("hello"))["content"][0]["text"] == "hi"
        with anyio.fail_after(5):
            while "hello was called" not in sink.getvalue():
                await anyio.sleep(0.01)
    assert sink.getvalue().splitlines()[:2] == ["talkative: starting up", "talkative: hello was called"]


async def test_stderr_goes_to_our_stderr_by_default_when_logging_would_not_show_it() -> None:
    # A child interpreter is the client here, so its own stderr is what a user's terminal would see.
    client = textwrap.dedent(f"""
        import anyio, sys
        from plainmcp import connect_stdio
        async def main():
            async with connect_stdio({TALKATIVE!r}) as client:
                await client.ping()
        anyio.run(main)
    """)
    done = subprocess.run([sys.executable, "-c", client], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "talkative: starting up" in done.stderr


async def test_stderr_goes_to_the_logger_when_logging_shows_it(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="plainmcp.stdio.server"):
        async with connect_stdio(TALKATIVE) as client:
            await client.ping()
    assert [record.getMessage() for record in caplog.records if record.name.startswith("plainmcp.stdio.server.")] == [
        "talkative: starting up"
    ]


async def test_an_unknown_stderr_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="stderr must be"):
        async with connect_stdio(TALKATIVE, stderr="nowhere"):
            pass


async def test_an_error_inside_the_block_is_not_mistaken_for_an_early_exit() -> None:
    with pytest.raises(MCPError) as caught:
        async with connect_stdio(TALKATIVE, stderr="discard") as client:
            await client.call_tool("no_such_tool")
    assert not isinstance(caught.value, ServerExited)
