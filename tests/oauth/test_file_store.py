"""The token file: owner-only, atomic, bounded, and loud about corruption and unsafe permissions."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from plainmcp.oauth.file_store import MAX_BYTES, TOKEN_FILE_ENV, FileTokenStore, TokenStoreError, default_path

RECORD = {"access_token": "at-secret", "refresh_token": "rt-secret", "expires_at": 1_900_000_000, "scope": "mcp"}


def run(coroutine_function, *args):
    return anyio.run(coroutine_function, *args)


def test_file_store_saves_loads_and_deletes_per_issuer_and_resource(tmp_path) -> None:
    store = FileTokenStore(tmp_path / "state" / "plainmcp" / "tokens.json")

    async def scenario() -> None:
        assert await store.load("https://as", "https://rs/mcp") is None
        await store.save("https://as", "https://rs/mcp", RECORD)
        await store.save("https://as", "https://other/mcp", {**RECORD, "access_token": "b"})
        await store.save("https://as2", "https://rs/mcp", {**RECORD, "access_token": "c"})
        assert await store.load("https://as", "https://rs/mcp") == RECORD
        await store.save("https://as", "https://rs/mcp", {**RECORD, "access_token": "new"})
        assert (await store.load("https://as", "https://rs/mcp"))["access_token"] == "new"
        assert len(await store.entries()) == 3
        await store.delete("https://as", "https://rs/mcp")
        assert await store.load("https://as", "https://rs/mcp") is None
        assert {(i, r) for i, r, _ in await store.entries()} == {
            ("https://as", "https://other/mcp"),
            ("https://as2", "https://rs/mcp"),
        }

    run(scenario)


def test_file_store_file_is_0600_in_a_0700_directory_whatever_the_umask(tmp_path) -> None:
    path = tmp_path / "state" / "plainmcp" / "tokens.json"
    old = os.umask(0o000)
    try:
        run(FileTokenStore(path).save, "https://as", "https://rs", RECORD)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o606, 0o660])
def test_file_store_refuses_a_file_others_can_read_or_write(tmp_path, mode) -> None:
    store = FileTokenStore(tmp_path / "p" / "tokens.json")
    run(store.save, "https://as", "https://rs", RECORD)
    store.path.chmod(mode)
    with pytest.raises(TokenStoreError, match="other users.*chmod 600") as caught:
        run(store.load, "https://as", "https://rs")
    assert "secret" not in str(caught.value)


def test_file_store_refuses_a_directory_others_can_write(tmp_path) -> None:
    store = FileTokenStore(tmp_path / "p" / "tokens.json")
    run(store.save, "https://as", "https://rs", RECORD)
    store.path.parent.chmod(0o777)
    with pytest.raises(TokenStoreError, match="chmod 700"):
        run(store.load, "https://as", "https://rs")


def test_file_store_refuses_a_symlink(tmp_path) -> None:
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"version": 1, "entries": []}))
    real.chmod(0o600)
    (tmp_path / "p").mkdir(mode=0o700)
    (tmp_path / "p" / "tokens.json").symlink_to(real)
    with pytest.raises(TokenStoreError, match="cannot open"):
        run(FileTokenStore(tmp_path / "p" / "tokens.json").load, "a", "b")


@pytest.mark.parametrize(
    "content, reason",
    [(b"{not json", "not JSON"), (b'{"version": 7}', "version 1"), (b'{"version": 1, "entries": [1]}', "malformed")],
)
def test_file_store_corrupted_file_is_a_clear_error(tmp_path, content, reason) -> None:
    path = tmp_path / "p" / "tokens.json"
    path.parent.mkdir(mode=0o700)
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(TokenStoreError, match=f"corrupted.*{reason}.*rm ") as caught:
        run(FileTokenStore(path).load, "a", "b")
    assert str(path) in str(caught.value)
    with pytest.raises(TokenStoreError):  # and a save does not silently replace it
        run(FileTokenStore(path).save, "a", "b", RECORD)
    assert path.read_bytes() == content


def test_file_store_is_bounded_on_read_and_on_write(tmp_path) -> None:
    path = tmp_path / "p" / "tokens.json"
    store = FileTokenStore(path)
    with pytest.raises(TokenStoreError, match="exceed"):
        run(store.save, "a", "b", {"access_token": "x" * MAX_BYTES})
    assert not path.exists()
    path.write_bytes(b" " * (MAX_BYTES + 1))
    path.chmod(0o600)
    with pytest.raises(TokenStoreError, match="larger than"):
        run(store.load, "a", "b")


def test_file_store_default_path_follows_env_then_xdg_then_home(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(TOKEN_FILE_ENV, str(tmp_path / "explicit.json"))
    assert default_path() == tmp_path / "explicit.json"
    monkeypatch.delenv(TOKEN_FILE_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "plainmcp" / "tokens.json"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "state" / "plainmcp" / "tokens.json"


WRITER = """
import sys, anyio
from plainmcp.oauth.file_store import FileTokenStore
store = FileTokenStore(sys.argv[1])
async def main():
    n = 0
    while True:
        n += 1
        await store.save("https://as", "https://rs/" + str(n % 50), {"access_token": "t" * 4000, "n": n})
anyio.run(main)
"""


def test_file_store_keeps_the_old_file_whole_when_a_writer_is_killed_mid_write(tmp_path) -> None:
    path = tmp_path / "p" / "tokens.json"
    store = FileTokenStore(path)
    run(store.save, "https://keep", "https://me", RECORD)
    for attempt in range(12):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stderr=subprocess.PIPE)
        time.sleep(0.15 + 0.05 * attempt)  # the writer is saving in a loop by then: killed at some point of a save
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
        assert run(store.load, "https://keep", "https://me") == RECORD
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    run(store.save, "https://keep", "https://me", RECORD)  # the next save clears what the killed ones left
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_file_store_two_processes_saving_at_once_lose_nothing(tmp_path) -> None:
    path = tmp_path / "p" / "tokens.json"
    script = (
        "import sys, anyio\nfrom plainmcp.oauth.file_store import FileTokenStore\n"
        "store = FileTokenStore(sys.argv[1])\n"
        "async def main():\n"
        "    for n in range(40):\n"
        "        await store.save('https://as', sys.argv[2] + str(n), {'n': n})\n"
        "anyio.run(main)\n"
    )
    writers = [subprocess.Popen([sys.executable, "-c", script, str(path), f"https://{w}/"]) for w in "ab"]
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    assert len(run(FileTokenStore(path).entries)) == 80


def test_file_store_never_puts_tokens_in_its_errors(tmp_path) -> None:
    path: Path = tmp_path / "p" / "tokens.json"
    run(FileTokenStore(path).save, "a", "b", RECORD)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(TokenStoreError) as caught:
        run(FileTokenStore(path).load, "a", "b")
    assert "secret" not in str(caught.value)
