"""The server's prompts: ready-made requests that lead a model through the tools in a sensible order."""

from __future__ import annotations

from typing import Any

from plainmcp import PromptArgument, Server


async def plan_outdoor_activity(ctx: Any, arguments: dict[str, str]) -> str:
    """Plan an outdoor activity around the forecast: the best days and hours, and what to watch out for."""
    place, activity = arguments["location"], arguments["activity"]
    when = arguments.get("when") or "the next 7 days"
    return (
        f"I want to go {activity} near {place}, some time in {when}.\n"
        "1. Call get_forecast for the place (hourly: true if the window is within two days), and check that "
        "the place it used is the one I mean.\n"
        "2. If the place is in the US, call get_alerts for it; if it is on a coast and the activity is on the "
        "water, call get_marine_forecast; if air matters (running, cycling, allergies), call get_air_quality.\n"
        "3. Recommend the best day and time window, say why (temperature, precipitation chance, wind, alerts), "
        "name a fallback, and say plainly if no day is suitable.\n"
        "Use only what the tools returned: do not guess weather they did not give, and credit the data source."
    )


async def compare_destinations(ctx: Any, arguments: dict[str, str]) -> str:
    """Choose between 2-5 places by their weather now and today."""
    places = [part.strip() for part in arguments["places"].split(";") if part.strip()]
    return (
        f"Help me choose between these places by their weather: {'; '.join(places)}.\n"
        "Call compare_weather with them (2 to 5 places), then get_forecast for the best one or two if I am "
        "planning beyond today. Rank them with one line of reasons each. If a place could not be found, say "
        'which and ask me to qualify it ("Portland, OR"). Use only what the tools returned.'
    )


def register(server: Server) -> None:
    """Add the prompts to ``server``."""
    server.prompt(
        "plan-outdoor-activity",
        title="Plan an outdoor activity",
        arguments=(
            PromptArgument("location", "Where: a place name, qualified if ambiguous", required=True),
            PromptArgument("activity", "What: hiking, a picnic, sailing, a run...", required=True),
            PromptArgument("when", "When, in words: this weekend, tomorrow morning (default: the next 7 days)"),
        ),
    )(plan_outdoor_activity)
    server.prompt(
        "compare-destinations",
        title="Compare destinations",
        arguments=(
            PromptArgument("places", 'Two to five places separated by ";": "Lisbon; Porto; Faro"', required=True),
        ),
    )(compare_destinations)
