"""Issue 14, item 3: the .mcpb desktop bundles, validated and packed by the official `@anthropic-ai/mcpb` CLI,
unpacked by it, and started the way Claude Desktop starts them: the manifest's mcp_config with the user's
choices substituted by the official library's getMcpConfigForManifest, run with a desktop client's bare PATH.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from plainmcp import connect_stdio

from .offline import ROOT, SERVERS, _load_script, project_version, wheelhouse

bundle = _load_script("bundle")
node_tools = bundle.node_tools
PROMPT = "---\ndescription: Say hello\narguments: [who]\n---\nHello {{who}}!\n"


def _mcpb() -> Path:
    path = Path(os.environ.get("PLAINMCP_MCPB") or node_tools.paths()["mcpb"])
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"no mcpb CLI at {path}: install it with `python3 tools/node_tools.py` (python3 dev.py test "
            "does it) or set PLAINMCP_MCPB",
            pytrace=False,
        )
    return path


def _node_env() -> dict[str, str]:
    env = dict(os.environ)
    if os.environ.get("PLAINMCP_NODE_BIN"):
        env["PATH"] = os.pathsep.join([os.environ["PLAINMCP_NODE_BIN"], env.get("PATH", os.defpath)])
        return env
    return node_tools.tool_env(env)


@pytest.fixture(scope="module")
def bundles(release: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dist, env = release
    out = tmp_path_factory.mktemp("mcpb")
    built = bundle.build(dist, out, [wheelhouse()], env=env, mcpb=_mcpb())
    return {path.name.split("-")[1]: path for path in built}


def test_every_server_has_a_bundle_validated_and_packed_by_mcpb(bundles: dict[str, Path]) -> None:
    assert sorted(bundles) == sorted(SERVERS)
    for name, path in bundles.items():
        assert path.name == f"plainmcp-{name}-{project_version(ROOT / 'servers' / name)}-{bundle.platform_tag()}.mcpb"
        assert zipfile.is_zipfile(path)


def test_mcpb_validate_rejects_a_broken_manifest(tmp_path: Path) -> None:
    """The validation the build relies on is real: a manifest without its server section fails it."""
    manifest = json.loads((ROOT / "servers" / "sqlite" / "manifest.json").read_text())
    del manifest["server"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    result = subprocess.run(
        [str(_mcpb()), "validate", str(tmp_path / "manifest.json")], env=_node_env(), capture_output=True, text=True
    )
    assert result.returncode != 0, result.stdout


@pytest.mark.parametrize("name", SERVERS)
def test_bundle_holds_its_manifest_entry_point_and_dependencies(name: str, bundles: dict[str, Path]) -> None:
    with zipfile.ZipFile(bundles[name]) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
    source = json.loads((ROOT / "servers" / name / "manifest.json").read_text())
    assert manifest == {**source, "compatibility": bundle.compatibility()}
    assert manifest["version"] == project_version(ROOT / "servers" / name)
    assert manifest["server"]["entry_point"] in names
    module = f"plainmcp_{name}"
    version = manifest["version"]
    for expected in (
        f"server/lib/{module}/__main__.py",
        "server/lib/plainmcp/__init__.py",
        f"server/lib/{module}-{version}.dist-info/METADATA",
    ):  # --version reads the metadata
        assert expected in names
    assert not [n for n in names if n.startswith("server/lib/bin/") or "__pycache__" in n]


USER_CONFIG = {
    "everything": lambda home: {},
    "filesystem": lambda home: {"directories": [str(home / "notes"), str(home / "site")], "allow_write": False},
    "prompts": lambda home: {"prompt_directory": str(home / "prompts")},
    "sqlite": lambda home: {"database": str(home / "shop.db")},
    "weather": lambda home: {"user_agent": "plainmcp-tests (tests@example.com)"},
}


def _user_files(home: Path) -> None:
    for directory in ("notes", "site", "prompts"):
        (home / directory).mkdir(parents=True)
    (home / "notes" / "todo.md").write_text("- ship\n")
    (home / "prompts" / "greet.md").write_text(PROMPT)
    with sqlite3.connect(home / "shop.db") as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)")
    db.close()


def _desktop_config(extension: Path, user_config: dict) -> dict:
    """The server's command, args and env as the official library computes them for the host."""
    config_module = _mcpb().resolve().parents[1] / "shared" / "config.js"  # .bin/mcpb is dist/cli/cli.js
    assert config_module.is_file(), config_module
    script = (
        f"import {{ getMcpConfigForManifest }} from {json.dumps(config_module.as_uri())};\n"
        "const [manifest, extensionPath, userConfig] = JSON.parse(process.argv[1]);\n"
        "const config = await getMcpConfigForManifest({manifest, extensionPath, userConfig, systemDirs: {},"
        " pathSeparator: '/'});\n"
        "process.stdout.write(JSON.stringify(config));\n"
    )
    manifest = json.loads((extension / "manifest.json").read_text())
    result = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps([manifest, str(extension), user_config])],
        env=_node_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.anyio
@pytest.mark.parametrize("name", SERVERS)
async def test_bundle_runs_as_claude_desktop_starts_it(name: str, bundles: dict[str, Path], tmp_path: Path) -> None:
    extension = tmp_path / "extension"
    subprocess.run(
        [str(_mcpb()), "unpack", str(bundles[name]), str(extension)], env=_node_env(), check=True, capture_output=True
    )
    home = tmp_path / "home"
    _user_files(home)
    config = _desktop_config(extension, USER_CONFIG[name](home))
    assert "${" not in json.dumps(config), config  # every variable was substituted
    # A desktop client's bare PATH, where `python3` is the user's Python (here: this one).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), **config.get("env", {})}
    command = [str(bin_dir / config["command"]), *config["args"]]
    async with connect_stdio(command, env=env, cwd=str(home), stderr="discard") as client:
        assert client.server_info["name"] == f"plainmcp-{name}"
        assert client.server_info["version"] == project_version(ROOT / "servers" / name)
        tools, _ = await client.list_tools()
        names = {tool["name"] for tool in tools}
        if name == "filesystem":  # the chosen directories, read-only as chosen
            listed = await client.call_tool("list_allowed_directories", {})
            text = json.dumps(listed)
            assert str(home / "notes") in text and str(home / "site") in text
            assert "write_file" not in names
        if name == "sqlite":  # the chosen database
            listed = await client.call_tool("list_tables", {})
            assert "orders" in json.dumps(listed)
        if name == "prompts":  # the chosen prompt directory, besides the bundled library
            prompts, _ = await client.list_prompts()
            assert "greet" in {prompt["name"] for prompt in prompts}
        if name == "weather":  # the chosen contact, through the environment
            assert "get_forecast" in names
            assert env["PLAINMCP_WEATHER_USER_AGENT"] == "plainmcp-tests (tests@example.com)"


def test_bundle_refuses_another_python_with_one_line(bundles: dict[str, Path], tmp_path: Path) -> None:
    """main.py checks the Python minor version the compiled dependencies were built for."""
    with zipfile.ZipFile(bundles["everything"]) as archive:
        main_py = archive.read("server/main.py").decode()
    patched = main_py.replace(f"BUILT_FOR = {tuple(sys.version_info[:2])!r}", "BUILT_FOR = (2, 7)")
    assert patched != main_py
    (tmp_path / "main.py").write_text(patched)
    result = subprocess.run([sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"plainmcp-everything: this bundle needs Python 2.7, but {sys.executable} is "
        f"{sys.version_info[0]}.{sys.version_info[1]}"
    ]
