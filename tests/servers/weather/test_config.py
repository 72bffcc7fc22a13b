"""The command line and its environment variables reach every setting of ``Config``; refusals name
the option, and ``__main__`` reports them the argparse way (one line, exit code 2)."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest
from plainmcp import server_arguments
from plainmcp_weather.config import COMMERCIAL_GEOCODING_URL, ENV_PREFIX, Config

from .support import SERVER_MODULE

#: A value for every option, none of them the default.
OPTIONS = {
    "geocoding_url": ("--geocoding-url", "http://geo.test", "http://geo.test"),
    "forecast_url": ("--forecast-url", "https://forecast.test/", "https://forecast.test"),
    "nws_url": ("--nws-url", "http://nws.test", "http://nws.test"),
    "air_quality_url": ("--air-quality-url", "http://aq.test", "http://aq.test"),
    "marine_url": ("--marine-url", "http://marine.test/", "http://marine.test"),
    "archive_url": ("--archive-url", "https://archive.test", "https://archive.test"),
    "api_key": ("--open-meteo-api-key", "k-1234", "k-1234"),
    "user_agent": ("--user-agent", "app (ops@example.com)", "app (ops@example.com)"),
    "language": ("--language", "fr", "fr"),
    "timeout": ("--timeout", "3.5", 3.5),
    "retries": ("--retries", "4", 4),
    "backoff": ("--backoff", "0.25", 0.25),
    "max_backoff": ("--max-backoff", "2", 2.0),
    "max_retry_after": ("--max-retry-after", "7", 7.0),
    "breaker_threshold": ("--breaker-threshold", "9", 9),
    "breaker_cooldown": ("--breaker-cooldown", "11", 11.0),
    "rate_limit": ("--rate-limit", "120", 120),
    "cache_size": ("--cache-size", "0", 0),
    "geocoding_ttl": ("--geocoding-ttl", "12", 12.0),
    "current_ttl": ("--current-ttl", "13", 13.0),
    "forecast_ttl": ("--forecast-ttl", "14", 14.0),
    "alerts_ttl": ("--alerts-ttl", "15", 15.0),
    "alerts_poll": ("--alerts-poll", "90", 90.0),
    "stale_for": ("--stale-for", "16", 16.0),
    "max_response_bytes": ("--max-response-bytes", "2048", 2048),
}


def parse(argv: list[str]) -> Config:
    parser = server_arguments("plainmcp-weather", env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    return Config.from_args(parser.parse_args(argv))


def test_every_setting_has_an_option():
    assert sorted(OPTIONS) == sorted(field.name for field in dataclasses.fields(Config))


def test_no_option_gives_the_defaults():
    assert parse([]) == Config()


def test_every_option_reaches_its_setting():
    config = parse([word for flag, value, _ in OPTIONS.values() for word in (flag, value)])
    assert {name: getattr(config, name) for name in OPTIONS} == {name: want for name, (_, _, want) in OPTIONS.items()}


def test_every_option_is_read_from_its_environment_variable(monkeypatch):
    for flag, value, _ in OPTIONS.values():
        monkeypatch.setenv(f"{ENV_PREFIX}_{flag.removeprefix('--').replace('-', '_').upper()}", value)
    config = parse([])
    assert {name: getattr(config, name) for name in OPTIONS} == {name: want for name, (_, _, want) in OPTIONS.items()}


def test_a_flag_wins_over_its_variable(monkeypatch):
    monkeypatch.setenv(f"{ENV_PREFIX}_TIMEOUT", "3")
    assert parse(["--timeout", "4"]).timeout == 4.0


def test_api_key_from_the_environment_switches_the_default_hosts(monkeypatch):
    monkeypatch.setenv(f"{ENV_PREFIX}_OPEN_METEO_API_KEY", "k-1234")
    config = parse([])
    assert config.api_key == "k-1234" and config.geocoding_url == COMMERCIAL_GEOCODING_URL


def test_an_api_key_switches_every_open_meteo_host_but_not_one_set_by_hand():
    config = Config(api_key="k", marine_url="http://127.0.0.1:8765")
    assert config.air_quality_url == "https://customer-air-quality-api.open-meteo.com"
    assert config.archive_url == "https://customer-archive-api.open-meteo.com"
    assert config.forecast_url == "https://customer-api.open-meteo.com"
    assert config.marine_url == "http://127.0.0.1:8765"
    assert config.nws_url == "https://api.weather.gov"  # the NWS has no key and no other host


def test_an_empty_api_key_is_no_key(monkeypatch):
    monkeypatch.setenv(f"{ENV_PREFIX}_OPEN_METEO_API_KEY", "")
    assert parse([]).api_key is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "nan"], "--timeout must be"),
        (["--nws-url", "ftp://nws.test"], "--nws-url must be an http:// or https:// URL"),
        (["--breaker-threshold", "0"], "--breaker-threshold must be >= 1"),
    ],
)
def test_a_refused_setting_is_one_line_naming_the_option_and_exit_2(argv, message):
    result = subprocess.run(
        [*SERVER_MODULE, *argv], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"plainmcp-weather: error: {message}")
