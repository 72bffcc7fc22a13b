"""tools/wrk_tool.py: which executable counts as wrk 4.x, and WRK over PATH. Nothing is installed here:
fake executables print what wrk -v prints (wrk writes its version line and exits 1)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from .support import load

wrk_tool = load(Path("tools/wrk_tool.py"))


def fake(directory: Path, name: str, first_line: str) -> Path:
    path = directory / name
    path.write_text(f"#!/bin/sh\necho '{first_line}'\necho 'Usage: wrk <options> <url>'\nexit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(
    "first_line, usable",
    [
        ("wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer", True),
        ("wrk 4.2.0 [kqueue] Copyright (C) 2012 Will Glozer", True),
        ("wrk 3.1.2 [epoll] Copyright (C) 2012 Will Glozer", False),  # before the Lua API the script uses
        ("curl 8.5.0 (x86_64-pc-linux-gnu)", False),
    ],
)
def test_only_wrk_4_or_later_counts(tmp_path, first_line, usable):
    assert (wrk_tool.version(str(fake(tmp_path, "wrk", first_line))) is not None) == usable


def test_wrk_names_the_executable_before_path(tmp_path, monkeypatch):
    on_path = tmp_path / "bin"
    on_path.mkdir()
    fake(on_path, "wrk", "wrk 4.2.0 [epoll]")
    chosen = fake(tmp_path, "my-wrk", "wrk debian/4.1.0-3+b2 [epoll]")
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.delenv("WRK", raising=False)
    assert wrk_tool.locate() == str(on_path / "wrk")
    monkeypatch.setenv("WRK", str(chosen))
    assert wrk_tool.locate() == str(chosen)


def test_a_wrk_variable_naming_something_else_is_refused_without_installing(tmp_path, monkeypatch):
    monkeypatch.setenv("WRK", str(fake(tmp_path, "not-wrk", "curl 8.5.0")))
    monkeypatch.setattr(wrk_tool, "_apt_install", lambda: pytest.fail("must not install over an explicit WRK"))
    with pytest.raises(wrk_tool.WrkError, match="not a wrk 4.x executable"):
        wrk_tool.ensure()
