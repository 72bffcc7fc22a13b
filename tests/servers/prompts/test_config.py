"""The command line: every option, from a flag or from the environment."""

from __future__ import annotations

import os

import pytest
from plainmcp_prompts.config import BUNDLED_DIR, Config

from .support import parse


def test_flags_build_the_config(tmp_path):
    args = parse(
        [
            "--dir",
            str(tmp_path / "a"),
            "--dir",
            str(tmp_path / "b"),
            "--no-bundled",
            "--no-watch",
            "--debounce-ms",
            "40",
            "--history",
            "0",
        ]
    )
    config = Config.from_args(args)
    assert config.dirs == (str(tmp_path / "a"), str(tmp_path / "b"))
    assert (config.bundled, config.watch, config.debounce_ms, config.history) == (False, False, 40, 0)
    assert config.library_dirs == config.dirs


def test_environment_fills_options_and_a_flag_replaces_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAINMCP_PROMPTS_DIRS", os.pathsep.join([str(tmp_path / "x"), str(tmp_path / "y")]))
    monkeypatch.setenv("PLAINMCP_PROMPTS_NO_WATCH", "1")
    monkeypatch.setenv("PLAINMCP_PROMPTS_HISTORY", "5")
    config = Config.from_args(parse([]))
    assert config.dirs == (str(tmp_path / "x"), str(tmp_path / "y"))
    assert (config.watch, config.history, config.bundled) == (False, 5, True)
    assert config.library_dirs[0] == BUNDLED_DIR
    flagged = Config.from_args(parse(["--dir", str(tmp_path / "z")]))
    assert flagged.dirs == (str(tmp_path / "z"),)


def test_a_list_of_directories_in_the_environment_may_hold_commas(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAINMCP_PROMPTS_DIRS", os.pathsep.join([str(tmp_path / "a,b"), str(tmp_path / "c")]))
    assert Config.from_args(parse([])).dirs == (str(tmp_path / "a,b"), str(tmp_path / "c"))


def test_switches_from_the_environment_take_words(monkeypatch):
    monkeypatch.setenv("PLAINMCP_PROMPTS_NO_BUNDLED", "yes")
    monkeypatch.setenv("PLAINMCP_PROMPTS_NO_WATCH", "false")
    config = Config.from_args(parse([]))
    assert (config.bundled, config.watch) == (False, True)
    assert Config.from_args(parse(["--no-watch"])).watch is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-files", "0"], "--max-files must be at least 1 (got 0)"),
        (["--max-file-bytes", "0"], "--max-file-bytes must be at least 1 (got 0)"),
        (["--debounce-ms", "0"], "--debounce-ms must be at least 1 (got 0)"),
        (["--history", "-1"], "--history must be at least 0 (got -1)"),
    ],
)
def test_a_value_out_of_range_is_refused_naming_its_option(argv, message):
    with pytest.raises(ValueError) as caught:
        Config.from_args(parse(argv))
    assert str(caught.value) == message
