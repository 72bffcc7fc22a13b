"""This server's scene for ``plainmcp demo``: the five tools against the local stand-in (no network).

Registered under the ``plainmcp.scenes`` entry-point group; ``plainmcp demo`` plays it with this
package's own Python, so the stand-in (:class:`.standin.StandIn`) runs on a thread of the scene's
process (see :mod:`plainmcp.demo`).
"""

from __future__ import annotations

from typing import Any

from plainmcp import demo

from .standin import StandIn


def _places(result: dict[str, Any]) -> list[str]:
    return [
        f"{p.get('name')}, {p.get('region') or p.get('country')}" for p in demo.structured(result).get("results", [])
    ]


def _first_line(result: dict[str, Any]) -> Any:
    text = demo.text_of(result)
    return text.splitlines()[0] if text else demo.structured(result)


async def play(stage: demo.Stage) -> None:
    with StandIn() as standin:
        url = standin.url
        args = ["--log-level", "warning", "--geocoding-url", url, "--forecast-url", url, "--nws-url", url]
        async with stage.stdio(f"weather server against its local stand-in at {url}", args) as client:
            await demo.step(
                "tools/call search_locations Portland",
                lambda: client.call_tool("search_locations", {"name": "Portland"}),
                demo.flagged(_places),
            )
            await demo.step(
                "tools/call get_current_weather Paris",
                lambda: client.call_tool("get_current_weather", {"location": "Paris, France"}),
                demo.flagged(_first_line),
            )
            await demo.step(
                "tools/call get_forecast Tokyo 3 days",
                lambda: client.call_tool("get_forecast", {"location": "Tokyo", "days": 3}),
                demo.flagged(demo.text_of),
            )
            await demo.step(
                "tools/call get_alerts CA",
                lambda: client.call_tool("get_alerts", {"state": "CA"}),
                demo.flagged(demo.text_of),
            )
            await demo.step(
                "tools/call get_forecast Atlantis",
                lambda: client.call_tool("get_forecast", {"location": "Atlantis"}),
                demo.flagged(demo.text_of),
            )
