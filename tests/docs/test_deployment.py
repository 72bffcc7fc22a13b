"""docs/deployment.md's nginx site, as written, in front of a real server: valid for `nginx -t`, and proxying TLS
requests to the server with the options the page gives it (allowed host, bearer token)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from .http_servers import serving_http
from .readme import find_block
from .user_env import UserEnv

TOKEN = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _site(tmp: Path, listen: int, upstream: int) -> Path:
    """The page's site file with this test's certificate and ports in place of the real ones; a main config
    around it keeps nginx's pid, logs and temporary files in ``tmp``."""
    site = find_block(Path("docs/deployment.md"), "proxy_pass http://plainmcp_sqlite").text
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=mcp.example.com",
         "-keyout", str(tmp / "key.pem"), "-out", str(tmp / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    replaced = {
        "/etc/letsencrypt/live/mcp.example.com/fullchain.pem": str(tmp / "cert.pem"),
        "/etc/letsencrypt/live/mcp.example.com/privkey.pem": str(tmp / "key.pem"),
        "listen 443 ssl": f"listen 127.0.0.1:{listen} ssl",
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{upstream};",
    }
    for old, new in replaced.items():
        assert old in site, f"docs/deployment.md's nginx site no longer has {old!r}"
        site = site.replace(old, new)
    (tmp / "mcp.conf").write_text(site)
    main = tmp / "nginx.conf"
    temp = "".join(
        f"    {kind}_temp_path {tmp}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main.write_text(
        f"pid {tmp}/nginx.pid;\nerror_log {tmp}/error.log;\nevents {{}}\n"
        f"http {{\n    access_log {tmp}/access.log;\n{temp}    include {tmp}/mcp.conf;\n}}\n"
    )
    return main


def test_nginx_site_is_valid_and_proxies_to_the_server(tmp_path: Path, user: UserEnv) -> None:
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed")
    command = (
        "plainmcp-sqlite --transport http --host 127.0.0.1 --port 8000 --allowed-host mcp.example.com"
        " --max-connections-per-peer 0 --resource-url https://mcp.example.com/mcp"
    )
    env = {**user.env, "PLAINMCP_SQLITE_AUTH_TOKENS": TOKEN}
    with serving_http(command, _with_env(user, env)) as upstream:  # on a free port in place of 8000
        listen = _free_port()
        conf = _site(tmp_path, listen, upstream)
        checked = subprocess.run(["nginx", "-t", "-c", str(conf)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        nginx = subprocess.Popen(["nginx", "-c", str(conf), "-g", "daemon off;"], stderr=subprocess.PIPE)
        try:
            assert _curl(listen, "/health")[0] == 200
            assert _curl(listen, "/mcp", body=_initialize())[0] == 401
            status, text = _curl(listen, "/mcp", body=_initialize(), token=TOKEN)
            assert status == 200, text
            assert '"plainmcp-sqlite"' in text
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)
            assert nginx.stderr is not None
            nginx.stderr.close()


def _with_env(user: UserEnv, env: dict[str, str]) -> UserEnv:
    import dataclasses

    return dataclasses.replace(user, env=env)


def _initialize() -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )


def _curl(port: int, path: str, *, body: str | None = None, token: str | None = None) -> tuple[int, str]:
    """A request through nginx over TLS, to mcp.example.com resolved to 127.0.0.1 (the certificate is the test's own,
    hence -k); retried while nginx is starting."""
    command = ["curl", "-sk", "--resolve", f"mcp.example.com:{port}:127.0.0.1", "-w", "\n%{http_code}"]
    if body is not None:
        command += [
            "-H",
            "Content-Type: application/json",
            "-H",
            "Accept: application/json, text/event-stream",
            "-d",
            body,
        ]
    if token:
        command += ["-H", f"Authorization: Bearer {token}"]
    deadline = time.monotonic() + 10
    while True:
        done = subprocess.run([*command, f"https://mcp.example.com:{port}{path}"], capture_output=True, text=True)
        if done.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert done.returncode == 0, done.stderr
    text, _, status = done.stdout.rpartition("\n")
    return int(status), text
