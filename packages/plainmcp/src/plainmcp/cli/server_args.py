"""Which of a server's arguments are paths, read from the server itself, and making them absolute.

A desktop client starts a server from a working directory of its own choosing, so ``./notes`` or
``--db shop.db`` in a configuration snippet points at nothing. ``plainmcp config`` makes such
arguments absolute. It does not keep a table of each server's options: it asks the server for its
``--help`` and reads the usage line argparse writes (``[--db PATH]``, ``[DIR ...]``). The convention
it relies on: an argument whose metavar is ``PATH``, ``DIR`` or ``FILE``, or ends in ``_PATH``,
``DIR`` or ``FILE`` (``PEM_FILE``, ``CERTFILE``), names a file or a directory. Positional arguments
count as paths only when every positional metavar is one (no position bookkeeping).

A leading ``~`` is kept as written: the servers expand it themselves, and it stays right when the
configuration moves to another machine or user.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

#: Seconds to wait for ``SERVER --help`` (a cold start: imports, no I/O).
HELP_TIMEOUT = 20
# `--db PATH`, `--flag [VALUE]`, and `--db [NAME=]PATH` (a value that may be prefixed with a name and `=`).
_OPTION_VALUE = re.compile(
    r"(?<![\w-])(-{1,2}[A-Za-z0-9][-\w]*) (\[[A-Z][A-Z0-9_]*=\])?(\[?)([A-Z][A-Z0-9_]*|\{[^}]*\})"
)
_OPTION = re.compile(r"(?<![\w-])-{1,2}[A-Za-z0-9][-\w]*")
_WORD = re.compile(r"\b[A-Z][A-Z0-9_]*\b")
_ENV = re.compile(r"\benv:\s+([A-Z][A-Z0-9_]*)")


@dataclass(frozen=True)
class Usage:
    """What a server's usage line says about its arguments.

    Attributes:
        path_options: options whose value is a path (``--db``).
        named_path_options: path options whose value may be ``NAME=PATH`` (usage ``[NAME=]PATH``): only
            the part after the first ``=`` is the path.
        value_options: options that take a value (path or not).
        optional_value_options: options whose value may be left out (``--allow-write [BOOL]``):
            like argparse, the next word is their value unless it starts with ``-``.
        positional_paths: whether positional arguments are paths.
        positional_names: the positional arguments' metavars.
        env_names: the environment variables the help names (``[env: NAME]``), anywhere in it.
        option_env: option -> the environment variable its help entry names (the same setting).
        created_path_options: path options the server creates (metavar ``NEW_...``, a log file): they
            need not exist when the snippet is made.
    """

    path_options: frozenset[str] = frozenset()
    named_path_options: frozenset[str] = frozenset()
    value_options: frozenset[str] = frozenset()
    optional_value_options: frozenset[str] = frozenset()
    positional_paths: bool = False
    positional_names: tuple[str, ...] = field(default=())
    env_names: frozenset[str] = frozenset()
    option_env: dict[str, str] = field(default_factory=dict)
    created_path_options: frozenset[str] = frozenset()


def is_path_metavar(metavar: str) -> bool:
    return metavar in ("PATH", "DIR", "FILE") or metavar.endswith(("_PATH", "DIR", "FILE"))


def parse_usage(help_text: str) -> Usage:
    """Read the usage block (from ``usage:`` to the first blank line) of argparse's ``--help``."""
    lines: list[str] = []
    for line in help_text.splitlines():
        if not lines and not line.lower().startswith("usage:"):
            continue
        if lines and not line.strip():
            break
        lines.append(line)
    usage = " ".join(lines).partition(":")[2].strip()
    usage = usage.split(None, 1)[1] if " " in usage else ""  # drop the program name
    paths: set[str] = set()
    named: set[str] = set()
    values: set[str] = set()
    optional: set[str] = set()
    created: set[str] = set()
    for option, name_prefix, bracket, metavar in _OPTION_VALUE.findall(usage):
        (optional if bracket else values).add(option)
        if not bracket and is_path_metavar(metavar):
            paths.add(option)
            if metavar.startswith("NEW_"):
                created.add(option)
            if name_prefix:
                named.add(option)
    rest = _OPTION.sub(" ", _OPTION_VALUE.sub(" ", re.sub(r"\{[^}]*\}", " ", usage)))
    positionals = tuple(dict.fromkeys(_WORD.findall(rest)))
    return Usage(
        frozenset(paths),
        frozenset(named),
        frozenset(values),
        frozenset(optional),
        bool(positionals) and all(is_path_metavar(name) for name in positionals),
        positionals,
        frozenset(_ENV.findall(help_text)),
        _option_env(help_text),
        frozenset(created),
    )


def _option_env(help_text: str) -> dict[str, str]:
    """Each option's environment variable, from its entry in the help (an entry starts with an
    indented ``-``; argparse wraps its text over the following, more indented lines)."""
    mapping: dict[str, str] = {}
    entry: list[str] = []
    for line in [*help_text.splitlines(), "  -"]:
        if re.match(r"^ {1,4}-", line):
            text = " ".join(entry)
            env = _ENV.search(text)
            if env:
                for option in _OPTION.findall(text.split("  ", 2)[1] if text.startswith("  ") else text):
                    if option.startswith("--"):
                        mapping[option] = env.group(1)
            entry = []
        if entry or re.match(r"^ {1,4}-", line):
            entry.append(line)
    return mapping


def read_usage(command: list[str]) -> Usage | None:
    """Run ``command --help`` and parse it; None when the server gives no argparse usage."""
    try:
        ran = subprocess.run(
            [*command, "--help"],
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT,
            stdin=subprocess.DEVNULL,
            errors="replace",
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if ran.returncode != 0 or "usage:" not in ran.stdout.lower():
        return None
    return parse_usage(ran.stdout)


def absolute(value: str) -> str:
    """``value`` as an absolute path from the working directory; ``~...``, absolute and empty values as written."""
    if not value or value.startswith("~") or os.path.isabs(value):
        return value
    return os.path.abspath(value)


@dataclass(frozen=True)
class Word:
    """One argument as the server's parser will read it: a positional (``option`` None), an option
    alone, or an option with its ``value`` (``joined``: written ``--opt=value``)."""

    option: str | None
    value: str | None
    joined: bool = False

    def words(self) -> list[str]:
        if self.option is None:
            return [self.value or ""]
        if self.value is None:
            return [self.option]
        return [f"{self.option}={self.value}"] if self.joined else [self.option, self.value]


def split_args(args: list[str], usage: Usage) -> list[Word]:
    """``args`` grouped as argparse groups them, by what ``usage`` says each option takes."""
    out: list[Word] = []
    at = 0
    positional_only = False
    while at < len(args):
        word = args[at]
        at += 1
        if positional_only or word == "-" or not word.startswith("-"):
            out.append(Word(None, word))
            continue
        if word == "--":
            positional_only = True
            out.append(Word("--", None))
            continue
        option, equals, value = word.partition("=")
        if equals:
            out.append(Word(option, value, joined=True))
            continue
        # Like argparse: an optional value is the next word unless that word looks like an option.
        takes_value = option in usage.value_options or (
            option in usage.optional_value_options and at < len(args) and not args[at].startswith("-")
        )
        if takes_value and at < len(args):
            out.append(Word(option, args[at]))
            at += 1
        else:
            out.append(Word(word, None))
    return out


def join_args(words: list[Word]) -> list[str]:
    return [text for word in words for text in word.words()]


def absolute_paths(args: list[str], usage: Usage) -> list[str]:
    """``args`` with every path argument (by ``usage``) made absolute; everything else as written."""
    out = []
    for word in split_args(args, usage):
        is_path = usage.positional_paths if word.option is None else word.option in usage.path_options
        if is_path and word.value is not None:
            name, equals, path = word.value.partition("=")
            if equals and word.option in usage.named_path_options and name and "/" not in name:
                value = f"{name}={absolute(path)}"
            else:
                value = absolute(word.value)
            word = Word(word.option, value, word.joined)
        out.append(word)
    return join_args(out)


def path_values(args: list[str], usage: Usage) -> list[str]:
    """The paths among ``args`` (by ``usage``) that must exist, as written: the part after ``NAME=`` for
    a named path option; not empty values, ``-`` (stdin) or paths the server creates (``NEW_PATH``)."""
    paths = []
    for word in split_args(args, usage):
        is_path = usage.positional_paths if word.option is None else word.option in usage.path_options
        if not is_path or not word.value or word.value == "-" or word.option in usage.created_path_options:
            continue
        name, equals, path = word.value.partition("=")
        if equals and word.option in usage.named_path_options and name and "/" not in name:
            paths.append(path)
        else:
            paths.append(word.value)
    return [path for path in paths if path]


def secrets_to_env(args: list[str], usage: Usage, is_secret: Callable[[str], bool]) -> tuple[list[str], dict[str, str]]:
    """Move each secret option given once with a value (``--open-meteo-api-key K``) to the environment
    variable the server reads for it: a command line is visible to every user of the machine (``ps``),
    and a client can prompt for an environment value. Returns the remaining args and the moved
    variables. Path options (``--jwt-public-key PEM_FILE``) are not secrets."""
    words = split_args(args, usage)
    counts: dict[str, int] = {}
    for word in words:
        if word.option is not None:
            counts[word.option] = counts.get(word.option, 0) + 1
    moved: dict[str, str] = {}
    kept = []
    for word in words:
        option = word.option
        if (
            option is not None
            and word.value is not None
            and is_secret(option)
            and counts[option] == 1
            and option not in usage.path_options
            and option in usage.option_env
        ):
            moved[usage.option_env[option]] = word.value
        else:
            kept.append(word)
    return join_args(kept), moved
