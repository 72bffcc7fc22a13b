"""The server's settings: one frozen value, built from the command line (or directly in tests)."""

from __future__ import annotations

import argparse
import logging
import math
import os
from dataclasses import dataclass

from plainmcp import env_option, env_switch

from .paths import AccessPolicy

ENV_PREFIX = "PLAINMCP_FILESYSTEM"
#: The allowed directories from the environment, separated like PATH (``:``; ``;`` on Windows).
DIRECTORIES_ENV = f"{ENV_PREFIX}_DIRECTORIES"

KIB = 1024
MIB = 1024 * KIB

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Config:
    """What the operator decided. Every limit bounds memory or time; none is unlimited.

    Attributes:
        roots: the allowed directories, as given (``~`` expanded and made absolute by the policy).
            None at all: every request uses the client's roots (the client must offer them).
        allow_write: register the tools that change files.
        allow_delete: also register ``delete_file`` (needs ``allow_write``).
        use_roots: narrow the allowed directories to the client's roots when it offers them
            (legacy sessions; roots never widen the operator's set).
        watch: run the file watcher that feeds resource subscriptions and list changes.
        max_read_bytes: the budget of text one read returns (``read_text_file``; all the files of one
            ``read_multiple_files`` together): about 10k tokens by default, below the 10k-token
            warning Claude Code shows for a tool's output. A longer part is cut and the result says
            how to read on (a cursor).
        max_media_bytes: cap on a file ``read_media_file`` or ``resources/read`` returns whole
            (never above about 3 MB, whatever is set: base64 of more would not fit a 4 MiB message).
        max_entries: default cap on entries a listing, tree or search walk returns.
        max_entries_limit: the most a client may ask for with ``maxEntries`` / ``maxResults``.
        max_depth: the deepest a walk descends, whatever a client asks.
        max_search_file_bytes: ``search_content`` skips larger files.
        max_resources: cap on ``resources/list`` (the whole list, over every page).
        debounce_ms: the watcher's longest wait to group a burst of changes into one batch.
        max_result_bytes: about the most a listing, tree or search result may weigh (its text and
            structured forms together); past it the result is cut and says so. Below the stdio
            transport's 4 MiB message limit, which would otherwise replace the result with an error.
        search_timeout: seconds a regular-expression ``search_content`` may run (in its worker
            process) before it is stopped with a tool error; finite.

    Raises:
        ValueError: ``allow_delete`` without ``allow_write``, or a limit that is not positive (the
            message names the option).
    """

    roots: tuple[str, ...]
    allow_write: bool = False
    allow_delete: bool = False
    use_roots: bool = False
    watch: bool = True
    max_read_bytes: int = 40_000
    max_media_bytes: int = 3 * MIB
    max_entries: int = 10_000
    max_entries_limit: int = 200_000
    max_depth: int = 64
    max_search_file_bytes: int = 4 * MIB
    max_resources: int = 1_000
    debounce_ms: int = 400
    max_result_bytes: int = 3_800_000
    search_timeout: float = 10.0

    def __post_init__(self) -> None:
        if self.allow_delete and not self.allow_write:
            raise ValueError("--allow-delete needs --allow-write")
        for name in (
            "max_read_bytes",
            "max_media_bytes",
            "max_entries",
            "max_entries_limit",
            "max_depth",
            "max_search_file_bytes",
            "max_resources",
            "debounce_ms",
            "max_result_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{_option(name)} must be positive")
        # Not `<= 0` alone: NaN compares false with everything, and an infinite deadline is none.
        if not (math.isfinite(self.search_timeout) and self.search_timeout > 0):
            raise ValueError("--search-timeout must be a positive number of seconds")

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add the server's own options to ``parser`` (each also read from a ``PLAINMCP_FILESYSTEM_*`` variable)."""
        parser.add_argument(
            "directories",
            nargs="*",
            metavar="DIR",
            help=f"allowed directory (repeatable) [env: {DIRECTORIES_ENV}, separated by {os.pathsep!r}]",
        )
        # On/off only: `--allow-write DIR` is the switch and a directory (env_switch never takes the next word).
        for flag, help in (
            ("--allow-write", "enable write_file, append_file, edit_file, create_directory, move_file, copy_file"),
            ("--allow-delete", "also enable delete_file (needs --allow-write)"),
            ("--use-roots", "narrow the allowed directories to the client's roots when it offers them"),
            ("--no-watch", "do not watch files (no change notifications for subscriptions)"),
        ):
            env_switch(parser, flag, _env(flag), help=help)
        for flag, convert, help in (
            ("--max-read-bytes", int, "budget of text one read returns (about 4 bytes a token); more is paged"),
            ("--max-media-bytes", int, "largest file read_media_file and resources/read return"),
            ("--max-entries", int, "default cap on entries of a listing, tree or search"),
            ("--max-resources", int, "cap on files listed by resources/list"),
            ("--debounce-ms", int, "longest wait to group a burst of file changes into one notification"),
            ("--search-timeout", float, "seconds a regular-expression search_content may run before it is stopped"),
        ):
            name = flag[2:].replace("-", "_")
            env_option(
                parser,
                flag,
                _env(flag),
                type=convert,
                default=getattr(DEFAULTS, name),
                metavar="SECONDS" if convert is float else "N",
                help=help,
            )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """The configuration the command line (and the environment) asks for.

        Directories that do not exist or cannot be opened are skipped with a warning, so one
        missing directory of several does not stop the server. With no directory named at all,
        the server serves the client's roots (and only to a client that offers them). Each is opened the way the server
        will open it (then closed again), so what passes here also opens at start.

        Raises:
            ValueError: directories were named but none is usable, or a value :meth:`__post_init__` refuses.
        """
        directories = list(args.directories) or [d for d in os.environ.get(DIRECTORIES_ENV, "").split(os.pathsep) if d]
        usable = []
        for directory in directories:
            try:
                AccessPolicy([directory])
            except ValueError:
                logger.warning("skipping %s: not an accessible directory", directory)
            else:
                usable.append(directory)
        if directories and not usable:
            raise ValueError("name at least one existing directory (plainmcp-filesystem DIR [DIR...])")
        if not directories:
            logger.info("no directory named: each client's roots are its allowed directories")
        return cls(
            roots=tuple(usable),
            allow_write=args.allow_write,
            allow_delete=args.allow_delete,
            use_roots=args.use_roots,
            watch=not args.no_watch,
            max_read_bytes=args.max_read_bytes,
            max_media_bytes=args.max_media_bytes,
            max_entries=args.max_entries,
            max_resources=args.max_resources,
            debounce_ms=args.debounce_ms,
            search_timeout=args.search_timeout,
        )


#: The fields set by a command-line option (the others are set in code only).
OPTIONS = frozenset(
    {"max_read_bytes", "max_media_bytes", "max_entries", "max_resources", "debounce_ms", "search_timeout"}
)


def _option(field: str) -> str:
    """How a message names a setting: its option (``--max-read-bytes``) if it has one, else its field."""
    return "--" + field.replace("_", "-") if field in OPTIONS else field


def _env(flag: str) -> str:
    """The variable that mirrors ``flag``: ``--max-read-bytes`` is ``PLAINMCP_FILESYSTEM_MAX_READ_BYTES``."""
    return f"{ENV_PREFIX}_{flag[2:].replace('-', '_').upper()}"


#: The limits' defaults, shown by ``--help`` (the directory is a placeholder: only the limits are read).
DEFAULTS = Config(roots=("/",))
