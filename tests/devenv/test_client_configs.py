"""shared/client-configs: the example configuration of every server for every client, as `plainmcp config` prints it.

Each file is regenerated and compared, and each configured server is started once the way its client starts it:
the command and arguments as written (the example install directory replaced by where this environment installed
the server), no shell, a bare environment plus the entry's `env`, a home holding the files the arguments name.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

from ..cli.client_formats import launch_of
from ..docs.user_env import make_home, stdio_handshake
from .support import ROOT, load

configs = load(Path("tools/client_configs.py"))
PLAINMCP = Path(sys.executable).parent / "plainmcp"
CASES = [(client, server) for client in configs.CLIENTS for server in configs.servers()]


def _file(client: str, server: str) -> Path:
    return Path(client) / f"{server}.{configs.EXTENSIONS.get(client, 'json')}"


def test_every_server_has_an_example_for_every_client_and_nothing_else():
    present = {path.relative_to(configs.OUT) for path in configs.OUT.glob("**/*") if path.is_file()}
    expected = {_file(client, server) for client, server in CASES}
    assert configs.servers() == ["everything", "filesystem", "prompts", "sqlite", "weather"]
    assert present - {Path("README.md")} == expected


@pytest.mark.parametrize(("client", "server"), CASES)
def test_client_config_is_what_plainmcp_config_prints(client, server):
    path = configs.OUT / _file(client, server)
    assert path.read_text() == configs.snippet(PLAINMCP, server, client), (
        f"{path.relative_to(ROOT)} is stale: python3 dev.py client-configs regenerates it"
    )


@pytest.mark.parametrize(("client", "server"), CASES)
def test_configured_server_starts_as_its_client_starts_it(client, server, tmp_path):
    text = (configs.OUT / _file(client, server)).read_text()
    assert "inputs" not in text
    written, args, entry_env = launch_of(client, None, text, server)
    command = Path(written)
    assert command.is_absolute() and str(command.parent) == configs.INSTALL_DIR  # desktop clients have no PATH
    home = tmp_path / "home"
    make_home(home)
    # A desktop client's environment: no virtualenv, no PYTHONPATH, a short PATH; the entry's env on top.
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **entry_env}
    argv = [str(PLAINMCP.parent / command.name), *args]
    answered = stdio_handshake(argv, env=env, cwd=tmp_path)
    assert answered["initialize"]["serverInfo"]["name"] == f"plainmcp-{server}"
    assert answered["tools"], f"{server} listed no tools"
    # filesystem and sqlite refuse to start without the path their arguments name; prompts starts without its
    # directory (with a warning), so ask it for the prompt kept there.
    if server == "prompts":
        assert "review" in anyio.run(_prompt_names, argv, env, tmp_path)


async def _prompt_names(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    async with connect_stdio(argv, env=env, cwd=str(cwd)) as client:
        return [prompt["name"] for prompt in await client.list_all_prompts()]
