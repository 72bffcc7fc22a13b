"""OAuth for a person, end to end: ``plainmcp auth``, ``plainmcp inspect`` and ``plainmcp-bridge --config``
against a real authorization server (oidc-provider) and a plainmcp server that checks its JWTs.

The commands run as installed entry points (the venv's console scripts, linked into a bin directory that
is the whole PATH), in a directory of their own, with HOME in the test's directory and no display: the
token file is the default one, ``~/.local/state/plainmcp/tokens.json``. The test plays the person at the
browser (:func:`~tests.oauth.servers.play_browser`): it reads the URL the command prints on stderr, signs
in and consents on the provider's forms, and the provider redirects to the command's 127.0.0.1 callback.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from plainmcp_bridge.standin import StandInModel

from .servers import (
    AuthorizationServer,
    ProtectedServer,
    authorization_server,
    play_browser,
    protected_server,
    wait_for_url,
)

TIMEOUT = 90
SCRIPTS = Path(sys.executable).parent


@dataclass
class Person:
    """A user's machine: a home, a PATH with the installed commands, a working directory elsewhere."""

    home: Path
    env: dict[str, str]
    cwd: Path
    said: list[str]  # everything the commands printed (stdout and stderr), to look for secrets

    @property
    def token_file(self) -> Path:
        return self.home / ".local" / "state" / "plainmcp" / "tokens.json"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(args),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=self.env,
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
        )
        self.said += [done.stdout, done.stderr]
        return done

    def login(self, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
        """Run ``args`` (a command that needs a login), play the browser; (the result, the callback URL)."""
        process = subprocess.Popen(
            list(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=self.env,
            cwd=self.cwd,
        )
        seen: list[str] = []
        try:
            assert process.stderr is not None
            url = wait_for_url(process.stderr, seen)
            callback = play_browser(url)
            assert "Authorized" in callback.text
            out, err = process.communicate(timeout=TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        self.said += [out, "".join(seen), err]
        return subprocess.CompletedProcess(args, process.returncode, out, "".join(seen) + err), str(callback.url)

    def secrets(self) -> list[str]:
        """Every token and secret in the token file."""
        found = []
        for entry in json.loads(self.token_file.read_text())["entries"]:
            record = entry["record"]
            for part, key in (("token", "access_token"), ("token", "refresh_token"), ("client", "client_secret")):
                value = (record.get(part) or {}).get(key)
                if isinstance(value, str):
                    found.append(value)
        return found


@pytest.fixture
def person(tmp_path: Path) -> Person:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("plainmcp", "plainmcp-bridge"):
        (bin_dir / name).symlink_to(SCRIPTS / name)
    (tmp_path / "home").mkdir()
    (tmp_path / "elsewhere").mkdir()
    drop = ("PLAINMCP_TOKEN_FILE", "XDG_STATE_HOME", "DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if key not in drop and not key.startswith("PLAINMCP_")}
    env.update(PATH=str(bin_dir), HOME=str(tmp_path / "home"))
    return Person(tmp_path / "home", env, tmp_path / "elsewhere", [])


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[AuthorizationServer, ProtectedServer]]:
    with authorization_server() as issuer, protected_server(issuer.issuer) as server:
        yield issuer, server


def tool_names(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return sorted(tool["name"] for tool in json.loads(done.stdout)["tools"])


def assert_no_secret(person: Person, *more: str) -> None:
    secrets = [*person.secrets(), *more]
    assert secrets
    for text in person.said:
        for secret in secrets:
            assert secret not in text


def test_e2e_login_then_inspect_reuses_the_kept_token_and_logout_forgets_it(servers, person) -> None:
    issuer, server = servers
    codes_before = issuer.grants("authorization_code")
    done, callback = person.login("plainmcp", "auth", "login", server.url, "--no-browser", "-v")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"logged in: {server.url}; issuer {issuer.issuer}")
    assert issuer.grants("authorization_code") == codes_before + 1
    code = dict(part.split("=", 1) for part in callback.split("?", 1)[1].split("&"))["code"]

    assert stat.S_IMODE(person.token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(person.token_file.parent.stat().st_mode) == 0o700

    # Two runs with the kept token: no login (no URL printed, no new code grant), verbose logs on.
    for _ in range(2):
        inspected = person.run("plainmcp", "inspect", server.url, "--json", "--verbose")
        assert tool_names(inspected) == ["add", "echo"]
        assert "/auth?" not in inspected.stderr
    assert issuer.grants("authorization_code") == codes_before + 1
    called = person.run("plainmcp", "call", server.url, "echo", "--arg", "text=through OAuth", "-v")
    assert called.returncode == 0 and "through OAuth" in called.stdout

    status = person.run("plainmcp", "auth", "status", server.url, "--json")
    assert status.returncode == 0, status.stderr
    [entry] = json.loads(status.stdout)
    assert (entry["issuer"], entry["resource"]) == (issuer.issuer, server.url) and "mcp:tools" in entry["scopes"]
    assert entry["expires_at"] > time.time() and entry["refreshable"] is True
    text = person.run("plainmcp", "auth", "status")
    assert text.returncode == 0 and "scopes mcp:tools" in text.stdout and "expires " in text.stdout
    assert_no_secret(person, code)

    forgot = person.run("plainmcp", "auth", "logout", server.url)
    assert forgot.returncode == 0 and forgot.stdout.strip() == f"forgot 1 login for {server.url}"
    assert person.run("plainmcp", "auth", "status", server.url).returncode == 1
    assert json.loads(person.token_file.read_text())["entries"] == []
    # Forgotten: inspect asks the person again, and goes on once they have said yes.
    again, _ = person.login("plainmcp", "inspect", server.url, "--json", "--no-browser")
    assert tool_names(again) == ["add", "echo"]
    assert issuer.grants("authorization_code") == codes_before + 2
    assert_no_secret(person)


def test_e2e_an_expired_access_token_is_refreshed(person) -> None:
    with authorization_server(access_token_ttl=3) as issuer, protected_server(issuer.issuer) as server:
        done, _ = person.login("plainmcp", "auth", "login", server.url, "--no-browser")
        assert done.returncode == 0, done.stderr
        first = json.loads(person.token_file.read_text())["entries"][0]["record"]["token"]
        while time.time() < first["expires_at"] + 1:  # the server (no clock leeway) refuses it from now on
            time.sleep(0.2)
        inspected = person.run("plainmcp", "inspect", server.url, "--json", "-v")
        assert tool_names(inspected) == ["add", "echo"]
        assert "/auth?" not in inspected.stderr
        assert issuer.grants("refresh_token") == 1 and issuer.grants("authorization_code") == 1
        second = json.loads(person.token_file.read_text())["entries"][0]["record"]["token"]
        assert second["access_token"] != first["access_token"] and second["expires_at"] > first["expires_at"]
        assert_no_secret(person, first["access_token"], first["refresh_token"])


def test_e2e_bridge_config_lists_the_tools_of_an_oauth_server(servers, person, tmp_path) -> None:
    issuer, server = servers
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"remote": {"url": server.url, "oauth": {"openBrowser": False}}}}))
    log = tmp_path / "bridge.jsonl"
    script = [{"calls": [{"name": "echo", "arguments": {"text": "from the bridge"}}]}, {"text": "done"}] * 2
    with StandInModel(script) as model:
        bridge = (
            "plainmcp-bridge",
            "ask",
            "say it",
            "--config",
            str(config),
            "--json",
            "--log",
            str(log),
            "--allow",
            "echo",
        )
        person.env.update(PLAINMCP_BRIDGE_BASE_URL=model.url, PLAINMCP_BRIDGE_MODEL="standin")
        done, _ = person.login(*bridge)  # no login kept yet: the bridge asks for one
        assert done.returncode == 0, done.stderr
        again = person.run(*bridge)  # and the second time uses the kept token
        assert again.returncode == 0, again.stderr
        assert "/auth?" not in again.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    listed = [event for event in events if event["type"] == "tools"]
    assert [sorted(tool["name"] for tool in event["tools"]) for event in listed] == [["add", "echo"]] * 2
    results = [event for event in events if event["type"] == "result"]
    assert len(results) == 2 and all("from the bridge" in json.dumps(event) for event in results)
    assert stat.S_IMODE(person.token_file.stat().st_mode) == 0o600
    person.said.append(log.read_text())
    assert_no_secret(person)


#: ``plainmcp`` with every logger at DEBUG (the command's own most verbose is INFO): the libraries' debug
#: output (httpx, httpcore, authlib, plainmcp's flow) must hold no token either.
DEBUG_PLAINMCP = """
import logging, sys
import plainmcp.cli.auth, plainmcp.cli.run
original = plainmcp.cli.run.configure_logging
def configure(verbose):
    tail = original(True)
    logging.getLogger().setLevel(logging.DEBUG)
    for handler in logging.getLogger().handlers:
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    for name in ("plainmcp", "plainmcp.http_client", "httpx", "httpcore", "authlib"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    return tail
plainmcp.cli.run.configure_logging = plainmcp.cli.auth.configure_logging = configure
from plainmcp.cli import main
sys.exit(main())
"""


def test_e2e_debug_logs_and_json_output_hold_no_token(servers, person, tmp_path) -> None:
    _, server = servers
    debug = tmp_path / "debug_plainmcp.py"
    debug.write_text(DEBUG_PLAINMCP)
    done, callback = person.login(sys.executable, str(debug), "auth", "login", server.url, "--no-browser")
    assert done.returncode == 0, done.stderr
    inspected = person.run(sys.executable, str(debug), "inspect", server.url, "--json")
    assert tool_names(inspected) == ["add", "echo"]
    for ran in (done, inspected):
        assert "DEBUG httpcore" in ran.stderr, ran.stderr  # debug output was on
    assert "plainmcp.oauth" in done.stderr  # and the flow's own log with it
    code = dict(part.split("=", 1) for part in callback.split("?", 1)[1].split("&"))["code"]
    assert_no_secret(person, code)


def test_e2e_an_authorization_header_of_ones_own_replaces_oauth(servers, person) -> None:
    _, server = servers
    refused = person.run("plainmcp", "inspect", server.url, "--header", "Authorization: Bearer not-a-token")
    assert refused.returncode == 1 and "/auth?" not in refused.stderr  # refused, and no login started
    assert not person.token_file.exists()


def test_e2e_a_refused_login_is_one_clear_line(servers, person) -> None:
    _, server = servers
    process = subprocess.Popen(
        ["plainmcp", "auth", "login", server.url, "--no-browser", "--timeout", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=person.env,
        cwd=person.cwd,
    )
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 1
    assert "Traceback" not in err and "within 1 seconds" in err
    assert not person.token_file.exists() or json.loads(person.token_file.read_text())["entries"] == []
    del out
