"""The command line and the environment, as ``Config.from_args`` turns them into a Config."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from plainmcp import server_arguments
from plainmcp_filesystem.config import ENV_PREFIX, Config


def parsed(argv: list[str]) -> Config:
    parser = server_arguments("plainmcp-filesystem", env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    return Config.from_args(parser.parse_args(argv))


def test_config_search_timeout_from_the_flag_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parsed([str(tmp_path)]).search_timeout == 10.0
    assert parsed([str(tmp_path), "--search-timeout", "2.5"]).search_timeout == 2.5
    monkeypatch.setenv("PLAINMCP_FILESYSTEM_SEARCH_TIMEOUT", "0.75")
    assert parsed([str(tmp_path)]).search_timeout == 0.75
    assert parsed([str(tmp_path), "--search-timeout", "3"]).search_timeout == 3.0  # the flag wins


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_config_search_timeout_must_be_a_finite_positive_number(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValueError, match="--search-timeout"):
        parsed([str(tmp_path), "--search-timeout", value])


def test_config_skips_missing_directories_and_refuses_when_none_is_left(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("not a directory")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    unusable = [str(tmp_path / name) for name in ("missing", "file.txt", "dangling")]
    assert parsed([*unusable, str(tmp_path)]).roots == (str(tmp_path),)
    with pytest.raises(ValueError, match="name at least one existing directory"):
        parsed([str(tmp_path / "missing")])


def test_config_directories_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    monkeypatch.setenv("PLAINMCP_FILESYSTEM_DIRECTORIES", f"{first}:{second}")
    assert parsed([]).roots == (str(first), str(second))
    assert parsed([str(tmp_path)]).roots == (str(tmp_path),)  # directories on the command line win


def test_config_a_bad_search_timeout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--search-timeout", "0"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("plainmcp-filesystem: error: --search-timeout must be")
    assert "Traceback" not in done.stderr


def test_grep_worker_starts_without_the_server_plainmcp_or_metadata() -> None:
    """The search worker imports this package: its ``__init__`` must not pull the server in (the
    worker starts once per regular-expression search, in a few tens of milliseconds)."""
    probe = (
        "import sys, plainmcp_filesystem.grep_worker, plainmcp_filesystem.search\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('plainmcp', 'anyio') or m == 'importlib.metadata'"
        " or m == 'plainmcp_filesystem.server'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_config_without_directories_serves_the_clients_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLAINMCP_FILESYSTEM_DIRECTORIES", raising=False)
    assert parsed([]).roots == ()
