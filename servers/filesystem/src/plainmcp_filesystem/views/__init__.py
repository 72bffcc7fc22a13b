"""The filesystem server's MCP Apps view: ``diff.html``, ``edit_file``'s dry run as a diff.

The HTML file has one inline ``<style>`` and one inline ``<script>`` that starts with plainmcp's view-side
helper (``//@app-view``, :func:`plainmcp.app_view_document`); its Content-Security-Policy allows exactly those
two blocks, by their SHA-256, and nothing else: no network, no other script, no frames, no forms.
"""

from __future__ import annotations

import functools
from pathlib import Path

from plainmcp import app_view_document


@functools.cache
def document(name: str) -> str:
    """The view ``name`` (an HTML file of this package) as served: the helper inlined, the policy filled in.

    Raises:
        ValueError: the file is not a view :func:`plainmcp.app_view_document` accepts.
    """
    # Beside this file, read with pathlib: importlib.resources would add tempfile, shutil and zipfile to
    # the server's start-up for files that are always on disk in an installed package.
    return app_view_document(Path(__file__).with_name(name).read_text("utf-8"))
