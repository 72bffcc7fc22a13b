"""The core's layering: every module has a layer (DESIGN.md's), imports only from its own layer and
below, and the import graph has no cycles; the wire layer stays sans-I/O (no anyio, nothing async);
error codes come from ``ErrorCode`` only; no function is longer than 80 lines; and the public API
stays what ``__all__`` says."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "packages" / "plainmcp" / "src" / "plainmcp"


def test_wire_modules_import_without_anyio() -> None:
    wire = sorted(name for name, layer in LAYERS.items() if layer == 1 and name != "plainmcp")
    assert {"plainmcp.framing", "plainmcp.sse", "plainmcp.envelope", "plainmcp.jsonrpc"} <= set(wire)
    # A fresh interpreter where importing anyio fails: the wire modules must still import.
    code = (
        "import sys; sys.modules['anyio'] = None\n"
        f"import importlib\nfor name in {wire!r}: importlib.import_module(name)\n"
        "assert 'asyncio' not in sys.modules, 'the wire layer pulled in asyncio'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_importing_plainmcp_does_not_load_jsonschema() -> None:
    # jsonschema costs tens of milliseconds; the stdio cold path must not pay for it.
    code = "import sys, plainmcp, plainmcp.stdio, plainmcp.connection; print('jsonschema' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


def test_a_stdio_server_starts_without_the_modules_only_some_features_need() -> None:
    # Each costs a millisecond or more of every server's cold start: hmac/hashlib (OpenSSL) sign
    # 2026-07-28 input state, secrets made task ids, urllib.parse serves resource templates.
    # They are imported where those features run.
    code = (
        "import sys, plainmcp, plainmcp.stdio, plainmcp.connection\n"
        "server = plainmcp.Server('s', '1')\n"
        "server.tool(name='echo')(lambda ctx, args: 'x')\n"
        "print(sorted(m for m in ('hmac', 'hashlib', 'secrets', 'urllib.parse') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


def test_public_api_all_is_sorted_and_importable() -> None:
    import plainmcp

    assert plainmcp.__all__ == sorted(plainmcp.__all__)
    for name in plainmcp.__all__:
        assert getattr(plainmcp, name) is not None


def test_public_all_matches_the_lazy_export_table() -> None:
    import plainmcp

    assert sorted(plainmcp._EXPORTS) == plainmcp.__all__


def _literal_codes(source: str) -> list[int]:
    """The integer literals in JSON-RPC's reserved range (-32768..-32000) in ``source``'s code
    (docstrings and comments may name codes; only code is checked)."""
    return [
        -node.operand.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
        and 32000 <= node.operand.value <= 32768
    ]


def test_error_codes_come_only_from_error_code() -> None:
    # A literal code elsewhere can drift from the specification's table; errors.py is that table.
    literals = {
        str(path.relative_to(CORE)): codes
        for path in sorted(CORE.rglob("*.py"))
        if path.name != "errors.py" and (codes := _literal_codes(path.read_text(encoding="utf-8")))
    }
    assert literals == {}


def test_the_literal_code_check_sees_a_code_but_not_a_docstring() -> None:
    source = '"""Answers -32602."""\npayload = {"code": -32600, "size": -5, "other": 32600}\n'
    assert _literal_codes(source) == [-32600]


# ------------------------------------------------------------------------- the import graph's shape

#: Every core module's layer, bottom to top, as DESIGN.md's "Layers" names them. A module may import
#: from its own layer and the ones below, never from above; a new module must be placed here.
LAYERS: dict[str, int] = {
    # 1. Wire: sans-I/O, synchronous (the package root only re-exports, lazily).
    "plainmcp": 1,
    "plainmcp.content": 1,
    "plainmcp.envelope": 1,
    "plainmcp.errors": 1,
    "plainmcp.framing": 1,
    "plainmcp.json_codec": 1,
    "plainmcp.jsonrpc": 1,
    "plainmcp.log_sink": 1,
    "plainmcp.pagination": 1,
    "plainmcp.param_headers": 1,
    "plainmcp.protocol": 1,
    "plainmcp.redaction": 1,
    "plainmcp.schema": 1,
    "plainmcp.schema_messages": 1,
    "plainmcp.sse": 1,
    "plainmcp.startup": 1,
    "plainmcp.uri_template": 1,
    "plainmcp.values": 1,
    "plainmcp.versions": 1,
    "plainmcp.watch_rules": 1,
    # 2. Session: async, transport-agnostic, over a pair of object streams.
    "plainmcp.request_tasks": 2,
    "plainmcp.session": 2,
    "plainmcp.subscriptions": 2,
    # 2. ... and the state replicas share (in memory, or on Redis), which sessions and servers build on.
    "plainmcp.state": 2,
    "plainmcp.state.cache": 2,
    "plainmcp.state.event_store": 2,
    "plainmcp.state.fanout": 2,
    "plainmcp.state.keyring": 2,
    "plainmcp.state.memory": 2,
    "plainmcp.state.notifications": 2,
    "plainmcp.state.options": 2,
    "plainmcp.state.redis_state": 2,
    "plainmcp.state.redis_tasks": 2,
    "plainmcp.state.sessions": 2,
    "plainmcp.state.sse_routes": 2,
    "plainmcp.state.task_backends": 2,
    "plainmcp.state.task_records": 2,
    # 3. Server and client API: the registry, the context, the era router and its two dispatchers.
    "plainmcp.apps": 3,
    "plainmcp.client": 3,
    "plainmcp.connection": 3,
    "plainmcp.context": 3,
    "plainmcp.handlers": 3,
    "plainmcp.inputs": 3,
    "plainmcp.legacy": 3,
    "plainmcp.legacy_tasks": 3,
    "plainmcp.modern": 3,
    "plainmcp.peer": 3,
    "plainmcp.prompts": 3,
    "plainmcp.resources": 3,
    "plainmcp.server": 3,
    "plainmcp.skills": 3,
    "plainmcp.skills_client": 3,
    "plainmcp.tasks": 3,
    "plainmcp.tools": 3,
    # 4. Transports: each ends in the same pair of object streams.
    "plainmcp.http": 4,
    "plainmcp.http.app": 4,
    "plainmcp.http.asgi": 4,
    "plainmcp.http.auth": 4,
    "plainmcp.http.body_deadlines": 4,
    "plainmcp.http.body_rate": 4,
    "plainmcp.http.coalesced_writes": 4,
    "plainmcp.http.connection_guard": 4,
    "plainmcp.http.event_buffer": 4,
    "plainmcp.http.exchange": 4,
    "plainmcp.http.gateway": 4,
    "plainmcp.http.head_limits": 4,
    "plainmcp.http.jwt_auth": 4,
    "plainmcp.http.legacy_session": 4,
    "plainmcp.http.legacy_sse": 4,
    "plainmcp.http.metrics": 4,
    "plainmcp.http.shared_streams": 4,
    "plainmcp.http.stateless": 4,
    "plainmcp.http.streamable": 4,
    "plainmcp.http.telemetry": 4,
    "plainmcp.http.workers": 4,
    "plainmcp.http_client": 4,
    # 4. ... and OAuth for the HTTP client (an httpx.Auth the transports carry; authlib imported lazily).
    "plainmcp.oauth": 4,
    "plainmcp.oauth.authorizer": 4,
    "plainmcp.oauth.callback": 4,
    "plainmcp.oauth.challenge": 4,
    "plainmcp.oauth.discovery": 4,
    "plainmcp.oauth.dpop": 4,
    "plainmcp.oauth.enterprise": 4,
    "plainmcp.oauth.errors": 4,
    "plainmcp.oauth.file_store": 4,
    "plainmcp.oauth.flow": 4,
    "plainmcp.oauth.grants": 4,
    "plainmcp.oauth.loopback": 4,
    "plainmcp.oauth.provider": 4,
    "plainmcp.oauth.registration": 4,
    "plainmcp.oauth.store": 4,
    "plainmcp.spawned": 4,
    "plainmcp.stdio": 4,
    "plainmcp.testing": 4,
    # 5. What a server's __main__ uses (the command-line kit, logging), and the core's own example server.
    "plainmcp.command_line": 5,
    "plainmcp.examples": 5,
    "plainmcp.examples.notes": 5,
    # ... and what prints a server's own client snippet (``plainmcp-<name> config``), shared with the command below.
    "plainmcp.cli.app_host": 5,
    "plainmcp.cli.clients": 5,
    "plainmcp.cli.config": 5,
    "plainmcp.cli.locate": 5,
    "plainmcp.cli.oauth_options": 5,
    "plainmcp.cli.render": 5,
    "plainmcp.cli.run": 5,
    "plainmcp.cli.secrets": 5,
    "plainmcp.cli.server_args": 5,
    "plainmcp.cli.server_config": 5,
    "plainmcp.cli.targets": 5,
    "plainmcp.logs": 5,
    # 6. Clients on top: the plainmcp command and its demo.
    "plainmcp.cli": 6,
    "plainmcp.cli.__main__": 6,
    "plainmcp.cli.app": 6,
    "plainmcp.cli.auth": 6,
    "plainmcp.cli.call": 6,
    "plainmcp.cli.demo": 6,
    "plainmcp.cli.discover": 6,
    "plainmcp.cli.inspect": 6,
    "plainmcp.cli.scene": 6,
    "plainmcp.cli.scenes": 6,
    "plainmcp.cli.tap": 6,
    "plainmcp.demo": 6,
}

MAX_FUNCTION_LINES = 80


def core_modules(root: Path = CORE) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name."""
    modules = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def import_graph(root: Path = CORE) -> dict[str, set[str]]:
    """Module -> the core modules it imports: at the top, inside functions and under
    TYPE_CHECKING alike (a type-only import still ties the two modules together). The package
    root's own imports are left out: it only re-exports, lazily, by name."""
    modules = core_modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                source = ".".join([*base, node.module] if node.module else base)
                for alias in node.names:
                    # ``from . import protocol`` imports a module; ``from .x import y`` a name of x.
                    targets.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = set() if name == "plainmcp" else {t for t in targets if t in modules and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    return sorted(
        f"{source} ({layers[source]}) -> {target} ({layers[target]})"
        for source, targets in graph.items()
        for target in targets
        if layers[target] > layers[source]
    )


def long_functions(root: Path = CORE, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    found = []
    for name, path in sorted(core_modules(root).items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{name}.{node.name}: {length} lines")
    return found


def test_every_core_module_has_a_layer() -> None:
    assert sorted(core_modules()) == sorted(LAYERS)


def test_no_core_module_imports_from_a_higher_layer() -> None:
    assert upward_imports(import_graph(), LAYERS) == []


def test_the_core_import_graph_has_no_cycles() -> None:
    assert import_cycles(import_graph()) == []


def test_no_core_function_is_longer_than_80_lines() -> None:
    assert long_functions() == []


def test_the_graph_checks_see_what_they_look_for(tmp_path: Path) -> None:
    # A small package with a loop through a type-only import, an upward import inside a function
    # and a long function: each check must report exactly that.
    package = tmp_path / "plainmcp"
    package.mkdir()
    (package / "__init__.py").write_text("from .low import x\n", encoding="utf-8")
    (package / "low.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import y\n"
        "def f():\n    from . import high\n" + "    pass\n" * 80,
        encoding="utf-8",
    )
    (package / "high.py").write_text("from .low import f\n", encoding="utf-8")
    graph = import_graph(package)
    assert graph == {"plainmcp": set(), "plainmcp.low": {"plainmcp.high"}, "plainmcp.high": {"plainmcp.low"}}
    assert import_cycles(graph) == [["plainmcp.high", "plainmcp.low"]]
    layers = {"plainmcp": 1, "plainmcp.low": 1, "plainmcp.high": 2}
    assert upward_imports(graph, layers) == ["plainmcp.low (1) -> plainmcp.high (2)"]
    assert long_functions(package) == ["plainmcp.low.f: 82 lines"]
