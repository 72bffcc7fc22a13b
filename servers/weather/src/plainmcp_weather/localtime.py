"""Local dates and times: each place's own time zone, daylight-saving changes included.

Open-Meteo (``timezone=auto``) gives times as local wall-clock text without an offset, all of them
shifted by the zone's offset *at the time of the request* (``utc_offset_seconds``): across a
daylight-saving change the later hours are an hour off (open-meteo/open-meteo#488). Here each such
time goes back to UTC with that one offset, then forward into the zone by its name, so every time we
return carries the offset valid at that moment ("2026-11-01T01:00-05:00"). "Today" is the date at the
place, from the server's clock, never the server's own date: on Kiritimati (UTC+14) it is tomorrow
for most of the day in London.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: Weekday and month names in English, whatever the host's locale (``%a`` would follow it).
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def zone(name: str | None, offset_seconds: int = 0) -> tzinfo:
    """The zone called ``name`` (an IANA name such as "Pacific/Kiritimati"), or a fixed offset of
    ``offset_seconds`` when the name is missing or unknown to this host's time zone database."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return timezone(timedelta(seconds=offset_seconds))


def localize(text: str | None, offset_seconds: int, place_zone: tzinfo) -> str | None:
    """Open-Meteo's local time ``text`` ("2026-11-01T06:00", shifted by ``offset_seconds``) as the
    moment it means in ``place_zone``, with its offset; a date alone or unreadable text unchanged."""
    if not isinstance(text, str) or "T" not in text:
        return text
    try:
        naive = datetime.fromisoformat(text)
    except ValueError:
        return text
    if naive.tzinfo is not None:
        return text
    moment = (naive - timedelta(seconds=offset_seconds)).replace(tzinfo=UTC)
    return moment.astimezone(place_zone).isoformat(timespec="minutes")


def timestamp(text: str) -> float | None:
    """The Unix time of an ISO time with an offset (as :func:`localize` writes), else None."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def today(now: float, place_zone: tzinfo) -> date:
    """The date at the place at Unix time ``now``."""
    return datetime.fromtimestamp(now, UTC).astimezone(place_zone).date()


def day_label(iso_date: str, place_today: date | None = None) -> str:
    """The date as "Tue 15 Sep", with " (today)", " (tomorrow)" or " (yesterday)" when it is, at the
    place; the text itself when it is not a date."""
    try:
        day = date.fromisoformat(iso_date[:10])
    except (TypeError, ValueError):
        return str(iso_date)
    words = f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]}"
    if place_today is None:
        return words
    relative = {0: " (today)", 1: " (tomorrow)", -1: " (yesterday)"}.get((day - place_today).days, "")
    return words + relative
