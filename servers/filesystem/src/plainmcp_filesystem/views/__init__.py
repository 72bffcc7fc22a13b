"""The server's MCP Apps views: self-contained HTML documents, assembled once when the server is built.

Each ``*.html`` here has one inline ``<style>`` and one inline ``<script>`` whose first line
``//@bridge`` is replaced by :file:`bridge.js` (the view's side of the host protocol). Its
Content-Security-Policy (``{{csp}}``) allows exactly those two blocks, by their SHA-256, and nothing
else: no network, no other script, no frames, no forms. The same module sits in each server that has
views (servers install separately); a test keeps the copies identical.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path

_BLOCK = re.compile(r"<(script|style)>(.*?)</\1>", re.DOTALL)
_POLICY = (
    "default-src 'none'; script-src {script}; style-src {style}; img-src data:; font-src 'none'; "
    "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
)


def _source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@functools.cache
def document(name: str) -> str:
    """The view ``name`` (an HTML file of this package) as served: the bridge
    inlined, the policy filled in.

    Raises:
        ValueError: the file does not have exactly one ``<style>`` and one ``<script>`` block.
    """
    # Beside this file, read with pathlib: importlib.resources would add tempfile, shutil and zipfile to
    # the server's start-up for files that are always on disk in an installed package.
    folder = Path(__file__).parent
    html = (folder / name).read_text("utf-8").replace("//@bridge", (folder / "bridge.js").read_text("utf-8"), 1)
    blocks: dict[str, list[str]] = {"script": [], "style": []}
    for kind, body in _BLOCK.findall(html):
        blocks[kind].append(body)
    if len(blocks["script"]) != 1 or len(blocks["style"]) != 1:
        raise ValueError(f"{name} must hold one <style> and one <script> block")
    policy = _POLICY.format(script=_source(blocks["script"][0]), style=_source(blocks["style"][0]))
    return html.replace("{{csp}}", policy, 1)
