"""The MCP Apps host bridge for the browser: ``AppBridge`` of npm ``@modelcontextprotocol/ext-apps``, bundled.

``plainmcp app`` (the development host) and the browser tests (``tests/apps``) load views the way a host does,
through the extension's official host-side bridge. It is an npm library (ES modules importing the TypeScript
SDK and zod), so set-up installs the pinned versions below under ``.ci-cache/node/ext-apps``
(``tools/npm_prefix.py``) and esbuild bundles them into one script for the page:
``packages/plainmcp/src/plainmcp/apphost/app-bridge.js`` (git-ignored; the wheel takes it in as an artifact
when it is there). Nothing of it is kept in the repository.

Run ``python3 tools/app_bridge.py`` (idempotent: it rebuilds only when the pinned versions change).
Standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import npm_prefix  # this directory is not a package: found through sys.path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "packages" / "plainmcp" / "src" / "plainmcp" / "apphost" / "app-bridge.js"
#: The bridge and the libraries it imports (its peers, pinned so the bundle is reproducible), and esbuild.
PACKAGES = {
    "@modelcontextprotocol/ext-apps": "2.0.4",
    "@modelcontextprotocol/client": "2.4.0",
    "@modelcontextprotocol/core": "2.4.0",
    "zod": "4.6.7",
    "esbuild": "0.25.12",
}
#: What the page gets, as ``window.McpAppBridge``.
EXPORTS = ("AppBridge", "PostMessageTransport", "buildAllowAttribute", "getToolUiResourceUri")
HEADER = "/* plainmcp app host (zod jitless): bundled by tools/app_bridge.py from npm {specs}; MIT-licensed, notices at the end. */\n"


def header() -> str:
    return HEADER.format(specs=" ".join(f"{name}@{version}" for name, version in PACKAGES.items() if name != "esbuild"))


def built(out: Path = OUT) -> bool:
    """Whether ``out`` is a bundle of exactly the pinned versions."""
    try:
        with out.open(encoding="utf-8") as file:
            return file.readline() == header()
    except OSError:
        return False


def build(out: Path = OUT) -> Path:
    """Install the pinned packages (once) and bundle the bridge into ``out``; returns ``out``."""
    if built(out):
        return out
    prefix = Path(npm_prefix.ensure_prefix("ext-apps", PACKAGES, scripts=True))
    entry = prefix / "app-bridge-entry.mjs"
    # zod compiles validators with new Function unless told not to; the page's CSP allows no eval.
    entry.write_text(
        'import { config } from "zod";\nconfig({ jitless: true });\n'
        f'export {{ {", ".join(EXPORTS)} }} from "@modelcontextprotocol/ext-apps/app-bridge";\n'
    )
    node = npm_prefix.node()
    bundle = prefix / "app-bridge.bundle.js"
    esbuild = prefix / "node_modules" / "esbuild" / "bin" / "esbuild"
    # With install scripts run, bin/esbuild is the native binary (else a Node shim that finds it).
    command = [str(esbuild), str(entry), "--bundle", "--format=iife", "--global-name=McpAppBridge"]
    command += ["--platform=browser", "--target=es2020", "--minify", "--legal-comments=eof", f"--outfile={bundle}"]
    env = {**os.environ, "PATH": f"{Path(node).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(command, cwd=prefix, env=env, check=True, capture_output=True, timeout=300)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial")
    partial.write_text(header() + bundle.read_text(encoding="utf-8"), encoding="utf-8")
    partial.replace(out)
    return out


if __name__ == "__main__":
    print(build())
