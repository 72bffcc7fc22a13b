"""The server's configuration: a frozen dataclass, built from the command line (or by a test)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

#: The library shipped with the package.
BUNDLED_DIR = str(Path(__file__).parent / "library")


@dataclass(frozen=True, slots=True)
class Config:
    """Args:
        dirs: the user's prompt directories, in order (later ones override earlier ones by name).
        bundled: serve the bundled library (first, so any directory can override its prompts).
        watch: reload on file changes (watchfiles).
        debounce_ms: quiet time after a change before the library is rescanned.
        history: values remembered per argument for completion (0: none).
        max_files: prompt files read per directory.
        max_file_bytes: largest prompt file read.
    """

    dirs: tuple[str, ...] = ()
    bundled: bool = True
    watch: bool = True
    debounce_ms: int = 150
    history: int = 20
    max_files: int = 2000
    max_file_bytes: int = 256 * 1024

    def __post_init__(self) -> None:
        if self.debounce_ms < 1:
            raise ValueError("debounce_ms must be at least 1")
        if self.history < 0 or self.max_files < 1 or self.max_file_bytes < 1:
            raise ValueError("history must be >= 0, max_files and max_file_bytes >= 1")

    @property
    def library_dirs(self) -> tuple[str, ...]:
        return ((BUNDLED_DIR,) if self.bundled else ()) + self.dirs

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        return cls(
            dirs=tuple(os.path.abspath(os.path.expanduser(d)) for d in args.dir or ()),
            bundled=not _flag(args.no_bundled),
            watch=not _flag(args.no_watch),
            debounce_ms=int(args.debounce_ms),
            history=int(args.history),
            max_files=int(args.max_files),
            max_file_bytes=int(args.max_file_bytes),
        )


def _flag(value: object) -> bool:
    """A boolean option that may come from the environment as text ("1", "true", "yes")."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
