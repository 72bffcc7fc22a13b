"""The configuration as the template builds it: options (and their variables) into a ``Config`` through
``Config.from_args``, which tells a wrong value (``ValueError``) from a file the server cannot serve
(``StartupError``), so ``__main__`` exits 2 for the first and 1 for the second."""

from __future__ import annotations

from pathlib import Path

import pytest
from plainmcp import StartupError, server_arguments
from plainmcp_sqlite.config import ENV_PREFIX, SAMPLE_DB, Config

from .support import make_shop


def from_command_line(*argv: str) -> Config:
    parser = server_arguments("plainmcp-sqlite", env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    return Config.from_args(parser.parse_args(list(argv)))


def test_options_and_their_variables_make_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_shop(tmp_path)
    monkeypatch.setenv("PLAINMCP_SQLITE_MAX_ROWS", "50")
    monkeypatch.setenv("PLAINMCP_SQLITE_NO_WATCH", "yes")
    config = from_command_line("--db", str(path), "--allow-write", "--timeout", "2.5", "--max-result-bytes", "4096")
    assert config == Config(db=path, allow_write=True, timeout=2.5, max_rows=50, max_result_bytes=4096, watch=False)


def test_without_db_the_bundled_sample_is_served_read_only() -> None:
    config = from_command_line()
    assert config.is_sample and config.path == SAMPLE_DB and not config.allow_write


def test_a_file_that_is_not_a_database_is_a_startup_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n")
    with pytest.raises(StartupError, match="is not a SQLite database"):
        from_command_line("--db", str(path))


def test_a_missing_file_is_a_startup_error_in_read_only_mode(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match="read-only mode does not create one"):
        from_command_line("--db", str(tmp_path / "missing.db"))
    assert not (tmp_path / "missing.db").exists()


def test_a_wrong_value_is_a_value_error_not_a_startup_error(tmp_path: Path) -> None:
    path = make_shop(tmp_path)
    with pytest.raises(ValueError, match="--max-result-bytes") as refused:
        from_command_line("--db", str(path), "--max-result-bytes", "10")
    assert not isinstance(refused.value, StartupError)


def test_help_says_max_result_bytes_also_bounds_each_value(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        from_command_line("--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--max-result-bytes" in help_text
    assert (
        "also the per-value limit: the longest text or blob a statement may build or read, at most 16 MiB" in help_text
    )


def test_confirm_writes_is_on_by_default_and_off_with_never(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_shop(tmp_path)
    assert from_command_line("--db", str(path), "--allow-write").confirm_writes is True
    assert from_command_line("--db", str(path), "--allow-write", "--confirm-writes", "never").confirm_writes is False
    monkeypatch.setenv("PLAINMCP_SQLITE_CONFIRM_WRITES", "NEVER")
    assert from_command_line("--db", str(path), "--allow-write").confirm_writes is False
    assert from_command_line("--db", str(path), "--confirm-writes", "always").confirm_writes is True
    with pytest.raises(SystemExit):
        from_command_line("--db", str(path), "--confirm-writes", "sometimes")
