"""The server's configuration: a frozen dataclass, built from the command line (or by a test)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from plainmcp import env_list_option, env_option, env_switch

ENV_PREFIX = "PLAINMCP_PROMPTS"
#: The library shipped with the package.
BUNDLED_DIR = str(Path(__file__).parent / "library")


@dataclass(frozen=True, slots=True)
class Config:
    """What the operator chose. A directory that is missing or cannot be read is not an error here:
    the library reports it (one warning) and serves the others.

    Args:
        dirs: the user's prompt directories, absolute, in order (later ones override earlier ones by name).
        bundled: serve the bundled library (first, so any directory can override its prompts).
        watch: reload on file changes (watchfiles).
        debounce_ms: quiet time after a change before the library is rescanned.
        history: values remembered per argument for completion (0: none).
        max_files: prompt files read per directory.
        max_file_bytes: largest prompt file read.

    Raises ValueError (naming the option) for a value out of range.
    """

    dirs: tuple[str, ...] = ()
    bundled: bool = True
    watch: bool = True
    debounce_ms: int = 150
    history: int = 20
    max_files: int = 2000
    max_file_bytes: int = 256 * 1024

    def __post_init__(self) -> None:
        for option, value, least in (
            ("--debounce-ms", self.debounce_ms, 1),
            ("--history", self.history, 0),
            ("--max-files", self.max_files, 1),
            ("--max-file-bytes", self.max_file_bytes, 1),
        ):
            if value < least:
                raise ValueError(f"{option} must be at least {least} (got {value})")

    @property
    def library_dirs(self) -> tuple[str, ...]:
        """Every directory read, in order: the bundled library first (when served), then ``dirs``."""
        return ((BUNDLED_DIR,) if self.bundled else ()) + self.dirs

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add this server's options (each with its ``PLAINMCP_PROMPTS_*`` variable) to ``parser``."""
        env_list_option(
            parser,
            "--dir",
            f"{ENV_PREFIX}_DIRS",
            separator=os.pathsep,
            dest="dir",
            metavar="DIR",
            help="a prompt directory (repeatable; later ones override earlier ones by name)",
        )
        env_switch(parser, "--no-bundled", f"{ENV_PREFIX}_NO_BUNDLED", help="do not serve the bundled library")
        env_switch(
            parser, "--no-watch", f"{ENV_PREFIX}_NO_WATCH", help="read the directories once; do not reload on changes"
        )
        env_option(
            parser,
            "--debounce-ms",
            f"{ENV_PREFIX}_DEBOUNCE_MS",
            type=int,
            default=150,
            help="quiet time after a file change before the library is reloaded",
        )
        env_option(
            parser,
            "--history",
            f"{ENV_PREFIX}_HISTORY",
            type=int,
            default=20,
            help="argument values remembered per argument for completion (0: remember nothing)",
        )
        env_option(
            parser,
            "--max-files",
            f"{ENV_PREFIX}_MAX_FILES",
            type=int,
            default=2000,
            help="prompt files read per directory",
        )
        env_option(
            parser,
            "--max-file-bytes",
            f"{ENV_PREFIX}_MAX_FILE_BYTES",
            type=int,
            default=256 * 1024,
            help="larger prompt files are skipped",
        )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """The configuration the parsed options ask for. Raises ValueError naming the option at fault."""
        return cls(
            dirs=tuple(os.path.abspath(os.path.expanduser(directory)) for directory in args.dir),
            bundled=not args.no_bundled,
            watch=not args.no_watch,
            debounce_ms=args.debounce_ms,
            history=args.history,
            max_files=args.max_files,
            max_file_bytes=args.max_file_bytes,
        )
