"""Reading a server's path arguments from its argparse usage, and making them absolute."""

from __future__ import annotations

import argparse
import os

import pytest
from plainmcp.cli.server_args import Usage, absolute, absolute_paths, parse_usage, secrets_to_env


def help_of(*arguments: tuple[tuple[str, ...], dict]) -> str:
    parser = argparse.ArgumentParser(prog="plainmcp-example")
    for flags, options in arguments:
        parser.add_argument(*flags, **options)
    return parser.format_help()


SQLITE_LIKE = help_of(
    (("--db",), {"metavar": "PATH"}),
    (("--jwt-public-key",), {"metavar": "PEM_FILE"}),
    (("--certfile",), {}),
    (("--log-level",), {"choices": ["debug", "info"]}),
    (("--allow-write",), {"nargs": "?", "const": "true", "metavar": "BOOL"}),
    (("--max-rows",), {"type": int}),
    (("--verbose",), {"action": "store_true"}),
)
FILESYSTEM_LIKE = help_of(
    (("directories",), {"nargs": "*", "metavar": "DIR"}), (("--no-watch",), {"action": "store_true"})
)


def test_parse_usage_finds_path_options_by_metavar() -> None:
    usage = parse_usage(SQLITE_LIKE)
    assert usage.path_options == {"--db", "--jwt-public-key", "--certfile"}
    assert usage.value_options == {"--db", "--jwt-public-key", "--certfile", "--log-level", "--max-rows"}
    assert usage.optional_value_options == {"--allow-write"}
    assert not usage.positional_paths


def test_parse_usage_positional_dirs_are_paths() -> None:
    usage = parse_usage(FILESYSTEM_LIKE)
    assert usage.positional_paths
    assert usage.positional_names == ("DIR",)


def test_parse_usage_mixed_positionals_are_not_rewritten() -> None:
    usage = parse_usage(help_of((("name",), {"metavar": "NAME"}), (("folder",), {"metavar": "DIR"})))
    assert not usage.positional_paths


def test_parse_usage_reads_env_names_wrapped_over_lines() -> None:
    text = "usage: x [-h]\n\noptions:\n  --db PATH   the database file, a long help text [env:\n      X_DB]\n"
    assert parse_usage(text).env_names == {"X_DB"}


def test_absolute_paths_rewrites_only_path_values(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    usage = parse_usage(SQLITE_LIKE)
    args = [
        "--db",
        "shop.db",
        "--log-level",
        "debug",
        "--max-rows",
        "5",
        "--certfile=c.pem",
        "--allow-write",
        "--verbose",
        "--jwt-public-key",
        "/etc/k.pem",
    ]
    assert absolute_paths(args, usage) == [
        "--db",
        str(tmp_path / "shop.db"),
        "--log-level",
        "debug",
        "--max-rows",
        "5",
        f"--certfile={tmp_path / 'c.pem'}",
        "--allow-write",
        "--verbose",
        "--jwt-public-key",
        "/etc/k.pem",
    ]


def test_absolute_paths_positionals_after_options_and_double_dash(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    usage = parse_usage(FILESYSTEM_LIKE)
    assert absolute_paths(["./notes", "--no-watch", "docs", "--", "-odd"], usage) == [
        str(tmp_path / "notes"),
        "--no-watch",
        str(tmp_path / "docs"),
        "--",
        str(tmp_path / "-odd"),
    ]


def test_absolute_paths_optional_value_takes_the_next_word_like_argparse(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    usage = Usage(optional_value_options=frozenset({"--allow-write"}), positional_paths=True)
    # argparse gives "false" to --allow-write, so it is not a directory; "-x" is not its value.
    assert absolute_paths(["--allow-write", "false", "a"], usage) == ["--allow-write", "false", str(tmp_path / "a")]
    assert absolute_paths(["--allow-write", "--", "a"], usage) == ["--allow-write", "--", str(tmp_path / "a")]


@pytest.mark.parametrize("value", ["~/notes", "~", "/abs/notes", ""])
def test_absolute_keeps_home_absolute_and_empty_values(value) -> None:
    assert absolute(value) == value


def test_absolute_makes_relative_values_absolute_from_the_working_directory() -> None:
    assert absolute("a/../b.db") == os.path.join(os.getcwd(), "b.db")


SECRET_HELP = help_of(
    (("--api-key",), {"help": "the service's key; prefer the environment variable [env: X_API_KEY]"}),
    (("--jwt-public-key",), {"metavar": "PEM_FILE", "help": "a public key file [env: X_JWT_PUBLIC_KEY]"}),
    (
        ("--auth-token",),
        {
            "metavar": "TOKEN",
            "action": "append",
            "help": "a token, repeatable, and a help text long enough to wrap over lines "
            "[env: X_AUTH_TOKENS, comma-separated]",
        },
    ),
    (("--session-token",), {"help": "no environment variable"}),
    (("--language",), {"help": "names in this language [env: X_LANGUAGE]"}),
)


def looks_secret(option: str) -> bool:
    return any(word in option for word in ("key", "token"))


def test_parse_usage_maps_each_option_to_its_environment_variable() -> None:
    usage = parse_usage(SECRET_HELP)
    assert usage.option_env == {
        "--api-key": "X_API_KEY",
        "--jwt-public-key": "X_JWT_PUBLIC_KEY",
        "--auth-token": "X_AUTH_TOKENS",
        "--language": "X_LANGUAGE",
    }


def test_secrets_to_env_moves_a_secret_option_to_its_variable() -> None:
    usage = parse_usage(SECRET_HELP)
    args = ["--api-key", "k1", "--language=fr", "--jwt-public-key", "/etc/pub.pem", "--session-token", "s"]
    assert secrets_to_env(args, usage, looks_secret) == (
        ["--language=fr", "--jwt-public-key", "/etc/pub.pem", "--session-token", "s"],  # a path; no variable
        {"X_API_KEY": "k1"},
    )
    assert secrets_to_env(["--api-key=k2"], usage, looks_secret) == ([], {"X_API_KEY": "k2"})


def test_secrets_to_env_leaves_a_repeated_option_where_it_is() -> None:
    # Two tokens would have to be joined the way the server splits its variable: left as written.
    args = ["--auth-token", "a", "--auth-token", "b"]
    assert secrets_to_env(args, parse_usage(SECRET_HELP), looks_secret) == (args, {})


def test_named_path_option_makes_only_the_path_part_absolute(tmp_path, monkeypatch) -> None:
    """`--db [NAME=]PATH` (several databases, each with a name): `shop=shop.db` keeps its name, and a plain
    `shop.db` or a path holding `=` after a slash is one path."""
    monkeypatch.chdir(tmp_path)
    usage = parse_usage(
        help_of((("--db",), {"metavar": "[NAME=]PATH", "action": "append"}), (("--metadata",), {"metavar": "FILE"}))
    )
    assert usage.path_options == {"--db", "--metadata"} and usage.named_path_options == {"--db"}
    args = ["--db", "shop=shop.db", "--db", "plain.db", "--db=./a=b/c.db", "--metadata", "x=y.yml"]
    assert absolute_paths(args, usage) == [
        "--db",
        f"shop={tmp_path}/shop.db",
        "--db",
        f"{tmp_path}/plain.db",
        f"--db={tmp_path}/a=b/c.db",
        "--metadata",
        f"{tmp_path}/x=y.yml",
    ]
