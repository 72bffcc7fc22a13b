"""``python -m tests.interop.conformance_client <server-url>``: run the scenario the suite names."""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

logger = logging.getLogger("conformance_client")

Runner = Callable[[str, str, dict[str, Any]], Awaitable[None]]


def module_for(scenario: str) -> str:
    """The scenario module's name (inside this package) for a scenario name."""
    if scenario.startswith("auth/"):
        return "auth"
    if scenario.startswith("sep-2640-client-"):
        return "skills"
    return "core"


def load_runner(scenario: str) -> Runner:
    """The ``run`` of the module that plays ``scenario``; imported only when needed, so a module
    still missing fails its own scenarios with a clear message and no other."""
    name = module_for(scenario)
    try:
        module = importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as missing:
        if missing.name != f"{__package__}.{name}":
            raise
        raise SystemExit(
            f"conformance client: scenario {scenario!r} is played by {__package__}.{name}, which does not exist yet"
        ) from None
    run: Runner = module.run
    return run


def read_context() -> dict[str, Any]:
    """``MCP_CONFORMANCE_CONTEXT`` as a dict (empty when the scenario passes none)."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if not raw:
        return {}
    context = json.loads(raw)
    if not isinstance(context, dict):
        raise SystemExit(f"conformance client: MCP_CONFORMANCE_CONTEXT is not a JSON object: {raw[:200]!r}")
    return context


def main(argv: list[str]) -> int:
    logging.basicConfig(
        level=os.environ.get("CONFORMANCE_CLIENT_LOG_LEVEL", "INFO"),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    if len(argv) < 2 or not scenario:
        print(
            "usage: MCP_CONFORMANCE_SCENARIO=<name> python -m tests.interop.conformance_client <url>", file=sys.stderr
        )
        return 2
    url = argv[-1]  # the suite appends the scenario server's URL to the command
    run = load_runner(scenario)
    logger.info("scenario %s against %s", scenario, url)
    try:
        anyio.run(run, scenario, url, read_context())
    except Exception as error:  # the scenario's verdict; the suite only sees a non-zero exit
        logger.exception("scenario %s: client failed: %s", scenario, error)
        return 1
    logger.info("scenario %s: client done", scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
