"""MCP Apps views in a real browser: Debian's Chromium (Playwright drives it) loads each view through the
extension's official host bridge, as ``plainmcp app`` serves it, against a real server (see harness.py)."""
