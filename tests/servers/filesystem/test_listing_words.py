"""list_directory's summary line counts in words that agree with the number ("1 directory", "2 files")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def _summary(tree: Path) -> str:
    ran = subprocess.run(
        [
            str(BIN / "plainmcp"),
            "call",
            "--arg",
            f"path={tree}",
            "list_directory",
            "--",
            str(BIN / "plainmcp-filesystem"),
            str(tree),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    (line,) = [line for line in ran.stdout.splitlines() if line.endswith(("others", "other"))]
    return line


def test_list_directory_summary_is_singular_for_one(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "sub").mkdir()
    assert _summary(tmp_path) == "1 file, 1 directory, 0 others"


def test_list_directory_summary_is_plural_for_two(tmp_path) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(name)
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    (tmp_path / "link").symlink_to("a.txt")
    (tmp_path / "link2").symlink_to("b.txt")
    assert _summary(tmp_path) == "2 files, 2 directories, 2 others"
