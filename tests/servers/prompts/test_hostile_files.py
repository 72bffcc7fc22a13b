"""Hostile prompt files against a real server process (issue 15, class 6).

A few hundred bytes of YAML aliases (billion laughs), front matter nested thousands deep, and the
like, put in the library before start-up or dropped into a watched directory while the server runs:
the server starts, keeps answering ``ping`` within a second, keeps serving the good prompts, serves
the file once it is fixed, and its peak memory (``VmHWM`` from /proc) stays under 300 MiB.
"""

from __future__ import annotations

import sys

import pytest

from .stdio_process import StdioServer
from .support import dir_args, write

#: Peak resident memory allowed to the server under attack.
MAX_RSS_MIB = 300


def billion_laughs() -> str:
    """Nine levels of nine aliases: ~450 bytes describing 9**9 strings, used where a message quotes it."""
    lines = ["---", 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines += ["name: *a8", "description: *a8", "---", "Hello"]
    return "\n".join(lines) + "\n"


def few_wide_aliases() -> str:
    """Few aliases, each to a large scalar: small in alias count, large once expanded."""
    return "---\nx: &x " + "y" * 60_000 + "\nname: [*x, *x, *x, *x, *x, *x, *x, *x]\n---\nHello\n"


HOSTILE = {
    "billion-laughs": billion_laughs(),
    "wide-aliases": few_wide_aliases(),
    "deep-flow": "---\nname: " + "[" * 20_000 + "]" * 20_000 + "\n---\nHello\n",
    "deep-block": "---\n" + "".join(" " * i + "k:\n" for i in range(300)) + "---\nHello\n",
    "self-alias": "---\nname: &a [*a]\ntags: *a\n---\nHello\n",
    "huge-number": "---\nname: " + "9" * 20_000 + "\n---\nHello\n",
    "huge-positional": "---\nallowed-tools: Bash\n---\nRun $" + "9" * 20_000 + "\n",
    # Dotprompt: a Picoschema key whose parts could match the same 60,000 spaces (quadratic
    # backtracking in a careless pattern), and a flood of placeholders each needing its line.
    "pico-spaces.prompt": '---\ninput:\n  schema:\n    "n(enum,' + " " * 60_000 + '": [a]\n---\n{{n}}\n',
    "slot-flood.prompt": "{{a}}" * 50_000 + "{{#each a}}{{/each}}\n",
}


def filename(name: str) -> str:
    """The file a hostile text is written to: Markdown unless its name says otherwise."""
    return name if name.endswith(".prompt") else f"{name}.md"


def test_billion_laughs_is_a_few_hundred_bytes():
    assert len(billion_laughs()) < 600


def _command(*dirs) -> list[str]:
    return [sys.executable, "-m", "plainmcp_prompts", *dir_args(*dirs)]


def _names(server: StdioServer) -> list[str]:
    return [prompt["name"] for prompt in server.request("prompts/list")["prompts"]]


def test_hostile_files_at_start_up_are_skipped_and_the_rest_is_served(tmp_path):
    write(tmp_path, "greet.md", "Hello {{who}}")
    for name, text in HOSTILE.items():
        (tmp_path / filename(name)).write_text(text, encoding="utf-8")
    with StdioServer(_command(tmp_path)) as server:
        server.initialize()
        assert _names(server) == ["greet"]
        assert server.ping_seconds() < 1.0
        assert server.peak_rss_mib() < MAX_RSS_MIB
    stderr = server.stderr
    for name in HOSTILE:
        assert filename(name) in stderr  # each one reported...
    assert "Traceback" not in stderr
    assert max(len(line) for line in stderr.splitlines()) < 1000  # ...in a bounded line


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_dropped_while_serving(tmp_path, name):
    write(tmp_path, "greet.md", "Hello {{who}}")
    with StdioServer(_command(tmp_path)) as server:
        server.initialize()
        server.wait_for_stderr("watching")
        hostile = tmp_path / filename(name)
        hostile.write_text(HOSTILE[name], encoding="utf-8")
        pings: list[float] = []
        # The server keeps answering while it reads the file, until it has reported it.
        server.wait_for_stderr(filename(name), while_waiting=lambda: pings.append(server.ping_seconds()))
        pings.append(server.ping_seconds())
        assert max(pings) < 1.0
        assert _names(server) == ["greet"]
        rendered = server.request("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
        assert rendered["messages"][0]["content"]["text"] == "Hello Ada"

        # Later reloads still work: the fixed file is served.
        hostile.write_text("---\nname: fixed\n---\nFixed now", encoding="utf-8")
        server.wait_for_stderr("prompt library changed")
        assert _names(server) == ["fixed", "greet"]
        assert server.peak_rss_mib() < MAX_RSS_MIB
    assert "Traceback" not in server.stderr
    assert max(len(line) for line in server.stderr.splitlines()) < 1000
