"""The shared server command line (plainmcp.command_line): on/off switches that never take the next word,
ports, --version and one-line usage errors. Every server's own forms, through its installed console
script, are in tests/servers/test_command_lines.py."""

from __future__ import annotations

import argparse

import plainmcp
import pytest
from plainmcp.command_line import ServerArgumentParser, env_switch, port_number, server_arguments, switch_value

ENV = "PLAINMCP_DEMO_ALLOW_WRITE"


def parser() -> ServerArgumentParser:
    made = server_arguments("plainmcp-demo", env_prefix="PLAINMCP_DEMO", version="1.2.3")
    made.add_argument("directories", nargs="*")
    env_switch(made, "--allow-write", ENV, help="write")
    group = made.add_argument_group("more")
    env_switch(group, "--no-watch", "PLAINMCP_DEMO_NO_WATCH", help="no watching")
    return made


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        ENV,
        "PLAINMCP_DEMO_NO_WATCH",
        "PLAINMCP_DEMO_PORT",
        "PLAINMCP_DEMO_TRANSPORT",
        "PLAINMCP_DEMO_LOG_DEPENDENCIES",
        "PLAINMCP_DEMO_LOG_LEVEL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("argv", "directories", "allow_write", "no_watch"),
    [
        (["--allow-write", "A"], ["A"], True, False),
        (["--allow-write", "A", "B"], ["A", "B"], True, False),
        (["A", "--allow-write", "B"], ["A", "B"], True, False),
        (["--no-watch", "A"], ["A"], False, True),
        (["--allow-write=false", "A"], ["A"], False, False),
        (["--allow-write=TRUE", "--no-watch=0", "A"], ["A"], True, False),
        (["--allow-write=no", "--allow-write", "A"], ["A"], True, False),  # the last one wins
        (["--allow-write", "--allow-write=off", "A"], ["A"], False, False),
        (["--allow-wr", "A"], ["A"], True, False),  # an abbreviation is the switch too, never with a value
        (["A", "--", "--allow-write"], ["A", "--allow-write"], False, False),  # after --, words are positional
    ],
)
def test_switches_never_swallow_the_next_word(
    argv: list[str], directories: list[str], allow_write: bool, no_watch: bool
) -> None:
    args = parser().parse_args(argv)
    assert (args.directories, args.allow_write, args.no_watch) == (directories, allow_write, no_watch)


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("yes", True), ("On", True), ("0", False), ("false", False)]
)
def test_switch_default_comes_from_the_environment_and_a_flag_overrides_it(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv(ENV, value)
    assert parser().parse_args(["A"]).allow_write is expected
    assert parser().parse_args(["--allow-write", "A"]).allow_write is True
    assert parser().parse_args(["--allow-write=false", "A"]).allow_write is False


def test_a_switch_value_that_is_not_on_or_off_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["--allow-write=maybe", "A"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "plainmcp-demo: error: argument --allow-write: expected true or false (1/0, yes/no, on/off), "
        "got 'maybe' (see plainmcp-demo --help)\n"
    )


def test_a_bad_switch_value_in_the_environment_is_a_usage_error_unless_the_flag_overrides_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV, "sometimes")
    assert parser().parse_args(["--allow-write=false"]).allow_write is False
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args([])
    assert exit_.value.code == 2
    assert f"{ENV}: expected true or false" in capsys.readouterr().err


def test_switch_value_accepts_the_usual_words_only() -> None:
    assert [switch_value(word) for word in ("1", "true", "YES", "on", "0", "False", "no", "off", "")] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    with pytest.raises(ValueError):
        switch_value("2")


@pytest.mark.parametrize(("text", "port"), [("0", 0), ("8000", 8000), ("65535", 65535)])
def test_port_number_accepts_tcp_ports(text: str, port: int) -> None:
    assert port_number(text) == port


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("99999", "99999 is not a port number (0 to 65535)"),
        ("-1", "-1 is not a port number"),
        ("abc", "not a port number: 'abc'"),
    ],
)
def test_port_number_refuses_anything_else_in_words(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        port_number(text)


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("PLAINMCP_DEMO_PORT", "70000", "PLAINMCP_DEMO_PORT: 70000 is not a port number (0 to 65535)"),
        (
            "PLAINMCP_DEMO_TRANSPORT",
            "carrier-pigeon",
            "PLAINMCP_DEMO_TRANSPORT: 'carrier-pigeon' is not one of stdio, http, sse",
        ),
        ("PLAINMCP_DEMO_MAX_SESSIONS", "many", "PLAINMCP_DEMO_MAX_SESSIONS: invalid value 'many'"),
    ],
)
def test_a_bad_value_in_the_environment_is_a_one_line_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str, problem: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args([])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"plainmcp-demo: error: {problem} (see plainmcp-demo --help)\n"


def test_a_flag_replaces_a_bad_value_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAINMCP_DEMO_TRANSPORT", "carrier-pigeon")
    assert parser().parse_args(["--transport", "http"]).transport == "http"


def test_version_prints_the_distribution_and_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == "plainmcp-demo 1.2.3\n"


def test_version_defaults_to_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit):
        server_arguments("plainmcp", env_prefix="X").parse_args(["--version"])
    assert capsys.readouterr().out == f"plainmcp {version('plainmcp')}\n"


def test_log_dependencies_is_a_switch_of_every_server(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parser().parse_args([]).log_dependencies is False
    assert parser().parse_args(["--log-dependencies", "A"]).log_dependencies is True
    monkeypatch.setenv("PLAINMCP_DEMO_LOG_DEPENDENCIES", "1")
    assert parser().parse_args([]).log_dependencies is True


def test_closed_set_words_match_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAINMCP_DEMO_LOG_LEVEL", "DEBUG")
    args = parser().parse_args(["--transport", "HTTP", "--log-format", "Json"])
    assert (args.log_level, args.transport, args.log_format) == ("debug", "http", "json")


def test_startup_error_is_public_and_not_a_value_error() -> None:
    """A server's __main__ tells the two apart: a ValueError is a usage error (exit 2), a StartupError exit 1."""
    import plainmcp

    assert "StartupError" in plainmcp.__all__
    assert not issubclass(plainmcp.StartupError, ValueError)


class _ToyConfig:
    """A server configuration as the template has it, refusing what the test asks it to."""

    ENV_PREFIX = "PLAINMCP_TOY"

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--refuse", choices=["value", "world"])

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> _ToyConfig:
        if args.refuse == "value":
            raise ValueError("--refuse: a wrong value")
        if args.refuse == "world":
            raise plainmcp.StartupError("the world does not fit")
        return cls()


@pytest.mark.parametrize(
    ("argv", "code", "line"),
    [
        (["--refuse", "value"], 2, "plainmcp-toy: error: --refuse: a wrong value"),
        (["--refuse", "world"], 1, "plainmcp-toy: the world does not fit"),
    ],
)
def test_run_server_command_reports_a_refused_configuration_in_one_line(argv, code, line, capsys) -> None:
    def never_built(config: _ToyConfig) -> plainmcp.Server:
        raise AssertionError("a refused configuration must not build a server")

    with pytest.raises(SystemExit) as exit_:
        plainmcp.run_server_command(
            "plainmcp-toy",
            env_prefix="PLAINMCP_TOY",
            description="toy",
            version="1",
            config_type=_ToyConfig,
            build_server=never_built,
            argv=argv,
        )
    assert exit_.value.code == code
    assert capsys.readouterr().err.strip().startswith(line)
