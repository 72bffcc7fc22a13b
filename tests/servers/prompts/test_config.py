"""The command line: every option, from a flag or from the environment."""

from __future__ import annotations

import os

from plainmcp_prompts.__main__ import parser
from plainmcp_prompts.config import BUNDLED_DIR, Config


def test_flags_build_the_config(tmp_path):
    args = parser().parse_args(["--dir", str(tmp_path / "a"), "--dir", str(tmp_path / "b"), "--no-bundled",
                                "--no-watch", "--debounce-ms", "40", "--history", "0"])
    config = Config.from_args(args)
    assert config.dirs == (str(tmp_path / "a"), str(tmp_path / "b"))
    assert (config.bundled, config.watch, config.debounce_ms, config.history) == (False, False, 40, 0)
    assert config.library_dirs == config.dirs


def test_environment_fills_options_and_a_flag_replaces_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAINMCP_PROMPTS_DIRS", os.pathsep.join([str(tmp_path / "x"), str(tmp_path / "y")]))
    monkeypatch.setenv("PLAINMCP_PROMPTS_NO_WATCH", "1")
    monkeypatch.setenv("PLAINMCP_PROMPTS_HISTORY", "5")
    config = Config.from_args(parser().parse_args([]))
    assert config.dirs == (str(tmp_path / "x"), str(tmp_path / "y"))
    assert (config.watch, config.history, config.bundled) == (False, 5, True)
    assert config.library_dirs[0] == BUNDLED_DIR
    flagged = Config.from_args(parser().parse_args(["--dir", str(tmp_path / "z")]))
    assert flagged.dirs == (str(tmp_path / "z"),)
