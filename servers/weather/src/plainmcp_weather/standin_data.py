"""What the stand-in answers: a handful of places in Open-Meteo's recorded shape, synthetic but
deterministic weather, and NWS points and alerts shaped as api.weather.gov shapes them."""

from __future__ import annotations

import time
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

#: Geocoding results as Open-Meteo returns them (ids, coordinates and populations from GeoNames).
PLACES: list[dict[str, Any]] = [
    {
        "id": 2988507,
        "name": "Paris",
        "latitude": 48.85341,
        "longitude": 2.3488,
        "elevation": 42.0,
        "feature_code": "PPLC",
        "country_code": "FR",
        "admin1_id": 3012874,
        "admin2_id": 2968815,
        "timezone": "Europe/Paris",
        "population": 2138551,
        "country_id": 3017382,
        "country": "France",
        "admin1": "Île-de-France",
        "admin2": "Paris",
        "postcodes": ["75001", "75020"],
    },
    {
        "id": 4717560,
        "name": "Paris",
        "latitude": 33.66094,
        "longitude": -95.55551,
        "elevation": 180.0,
        "feature_code": "PPLA2",
        "country_code": "US",
        "admin1_id": 4736286,
        "admin2_id": 4705086,
        "timezone": "America/Chicago",
        "population": 24171,
        "country_id": 6252001,
        "country": "United States",
        "admin1": "Texas",
        "admin2": "Lamar",
    },
    {
        "id": 5746545,
        "name": "Portland",
        "latitude": 45.52345,
        "longitude": -122.67621,
        "elevation": 15.0,
        "feature_code": "PPLA2",
        "country_code": "US",
        "admin1_id": 5744337,
        "admin2_id": 5742126,
        "timezone": "America/Los_Angeles",
        "population": 652503,
        "country_id": 6252001,
        "country": "United States",
        "admin1": "Oregon",
        "admin2": "Multnomah",
    },
    {
        "id": 4975802,
        "name": "Portland",
        "latitude": 43.65737,
        "longitude": -70.2589,
        "elevation": 9.0,
        "feature_code": "PPLA2",
        "country_code": "US",
        "admin1_id": 4971068,
        "admin2_id": 4969398,
        "timezone": "America/New_York",
        "population": 66881,
        "country_id": 6252001,
        "country": "United States",
        "admin1": "Maine",
        "admin2": "Cumberland",
    },
    {
        "id": 1850147,
        "name": "Tokyo",
        "latitude": 35.6895,
        "longitude": 139.69171,
        "elevation": 44.0,
        "feature_code": "PPLC",
        "country_code": "JP",
        "admin1_id": 1850144,
        "timezone": "Asia/Tokyo",
        "population": 8336599,
        "country_id": 1861060,
        "country": "Japan",
        "admin1": "Tokyo",
    },
    {
        "id": 2147714,
        "name": "Sydney",
        "latitude": -33.86785,
        "longitude": 151.20732,
        "elevation": 58.0,
        "feature_code": "PPLA",
        "country_code": "AU",
        "admin1_id": 2155400,
        "timezone": "Australia/Sydney",
        "population": 4627345,
        "country_id": 2077456,
        "country": "Australia",
        "admin1": "New South Wales",
    },
    {
        "id": 4164138,
        "name": "Miami",
        "latitude": 25.77427,
        "longitude": -80.19366,
        "elevation": 2.0,
        "feature_code": "PPLA2",
        "country_code": "US",
        "admin1_id": 4155751,
        "admin2_id": 4154663,
        "timezone": "America/New_York",
        "population": 441003,
        "country_id": 6252001,
        "country": "United States",
        "admin1": "Florida",
        "admin2": "Miami-Dade",
    },
    {
        "id": 2643743,
        "name": "London",
        "latitude": 51.50853,
        "longitude": -0.12574,
        "elevation": 25.0,
        "feature_code": "PPLC",
        "country_code": "GB",
        "admin1_id": 6269131,
        "timezone": "Europe/London",
        "population": 8961989,
        "country_id": 2635167,
        "country": "United Kingdom",
        "admin1": "England",
    },
    # UTC+14: the first place on Earth to start each day (for the local-date tests).
    {
        "id": 4030939,
        "name": "Kiritimati",
        "latitude": 1.87,
        "longitude": -157.43,
        "elevation": 5.0,
        "feature_code": "PPLA",
        "country_code": "KI",
        "timezone": "Pacific/Kiritimati",
        "population": 5586,
        "country_id": 4030945,
        "country": "Kiribati",
        "admin1": "Line Islands",
    },
]

US_AREAS = frozenset(
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH "
    "OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC PR VI GU AS MP".split()
)
#: Where the stand-in has an alert: (state, a point near which it applies).
ALERT_AREA = "FL"
ALERT_POINT = (25.77427, -80.19366)
HURRICANE_WARNING: dict[str, Any] = {
    "id": "https://api.weather.gov/alerts/urn:oid:2.49.0.1.840.0.standin.001.1",
    "type": "Feature",
    "geometry": None,
    "properties": {
        "@id": "https://api.weather.gov/alerts/urn:oid:2.49.0.1.840.0.standin.001.1",
        "@type": "wx:Alert",
        "id": "urn:oid:2.49.0.1.840.0.standin.001.1",
        "areaDesc": "Coastal Miami-Dade; Inland Miami-Dade",
        "geocode": {"SAME": ["012086"], "UGC": ["FLZ173", "FLZ073"]},
        "sent": "2026-09-14T05:00:00-04:00",
        "effective": "2026-09-14T05:00:00-04:00",
        "onset": "2026-09-14T05:00:00-04:00",
        "expires": "2026-09-14T13:15:00-04:00",
        "ends": None,
        "status": "Actual",
        "messageType": "Alert",
        "category": "Met",
        "severity": "Extreme",
        "certainty": "Likely",
        "urgency": "Expected",
        "event": "Hurricane Warning",
        "sender": "w-nws.webmaster@noaa.gov",
        "senderName": "NWS Miami FL",
        "headline": "Hurricane Warning issued September 14 at 5:00AM EDT by NWS Miami FL",
        "description": "* WIND: Extreme winds possible. Peak wind 90-110 mph with gusts to 130 mph.",
        "instruction": "Move to safe shelter before the onset of dangerous winds.",
        "response": "Evacuate",
    },
}

#: Units as Open-Meteo labels them.
TEMPERATURE_LABELS = {"celsius": "°C", "fahrenheit": "°F"}
WIND_LABELS = {"kmh": "km/h", "ms": "m/s", "mph": "mp/h", "kn": "kn"}
PRECIPITATION_LABELS = {"mm": "mm", "inch": "inch"}
WIND_FACTORS = {"kmh": 1.0, "ms": 1 / 3.6, "mph": 0.621371, "kn": 0.539957}
CODES = [0, 1, 2, 3, 61, 80, 2, 1, 45, 95]
KNOWN = {
    "current": {
        "temperature_2m",
        "relative_humidity_2m",
        "apparent_temperature",
        "is_day",
        "precipitation",
        "weather_code",
        "cloud_cover",
        "pressure_msl",
        "wind_speed_10m",
        "wind_direction_10m",
        "wind_gusts_10m",
        "rain",
        "showers",
        "snowfall",
        "surface_pressure",
    },
    "hourly": {
        "temperature_2m",
        "relative_humidity_2m",
        "apparent_temperature",
        "precipitation_probability",
        "precipitation",
        "weather_code",
        "wind_speed_10m",
        "wind_direction_10m",
        "cloud_cover",
    },
    "daily": {
        "weather_code",
        "temperature_2m_max",
        "temperature_2m_min",
        "precipitation_sum",
        "precipitation_probability_max",
        "wind_speed_10m_max",
        "wind_gusts_10m_max",
        "uv_index_max",
        "sunrise",
        "sunset",
    },
}


def fold(text: str) -> str:
    """Case- and diacritic-insensitive, as Open-Meteo's matching is."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def search(name: str, count: int, country_code: str | None) -> list[dict[str, Any]]:
    """Two characters match exactly, three or more as a prefix; most populous first."""
    wanted = fold(name.strip())
    found = [
        place
        for place in PLACES
        if (fold(place["name"]) == wanted if len(wanted) <= 2 else fold(place["name"]).startswith(wanted))
        and (country_code is None or place["country_code"] == country_code.upper())
    ]
    found.sort(key=lambda place: -place.get("population", 0))
    return found[:count]


def nearest(latitude: float, longitude: float, within: float = 1.0) -> dict[str, Any] | None:
    best = min(PLACES, key=lambda p: (p["latitude"] - latitude) ** 2 + (p["longitude"] - longitude) ** 2)
    if abs(best["latitude"] - latitude) <= within and abs(best["longitude"] - longitude) <= within:
        return best
    return None


def _value(variable: str, latitude: float, index: int, units: dict[str, str], day: str = "") -> Any:
    celsius = round(28 - abs(latitude) * 0.25 + (index % 5) - 2, 1)
    if variable.startswith(("temperature_2m", "apparent_temperature")):
        value = celsius + (3 if variable.endswith("_max") else -3 if variable.endswith("_min") else 0)
        value -= 1.5 if variable.startswith("apparent") else 0
        return round(value * 9 / 5 + 32, 1) if units["temperature_unit"] == "fahrenheit" else round(value, 1)
    if variable.startswith(("wind_speed", "wind_gusts")):
        kmh = 12.0 + index % 7 + (8 if "gusts" in variable else 0)
        return round(kmh * WIND_FACTORS[units["wind_speed_unit"]], 1)
    if (
        variable.startswith(("precipitation_sum", "precipitation", "rain", "showers", "snowfall"))
        and "probability" not in variable
    ):
        mm = (index % 3) * 0.4
        return round(mm / 25.4, 3) if units["precipitation_unit"] == "inch" else round(mm, 1)
    if variable == "weather_code":
        return CODES[(index + int(abs(latitude))) % len(CODES)]
    if variable == "is_day":
        return 1
    if variable == "sunrise":
        return f"{day}T06:48"
    if variable == "sunset":
        return f"{day}T19:31"
    return {
        "relative_humidity_2m": 60 + index % 30,
        "cloud_cover": (index * 13) % 100,
        "pressure_msl": 1013.2,
        "surface_pressure": 1008.0,
        "wind_direction_10m": (index * 40) % 360,
        "precipitation_probability": (index * 17) % 100,
        "precipitation_probability_max": (index * 17) % 100,
        "uv_index_max": 5.5,
    }.get(variable, 0)


def _label(variable: str, units: dict[str, str]) -> str:
    if variable.startswith(("temperature", "apparent")):
        return TEMPERATURE_LABELS[units["temperature_unit"]]
    if variable.startswith("wind_speed") or variable.startswith("wind_gusts"):
        return WIND_LABELS[units["wind_speed_unit"]]
    if variable.startswith(("precipitation_sum", "precipitation", "rain")) and "probability" not in variable:
        return PRECIPITATION_LABELS[units["precipitation_unit"]]
    return {"weather_code": "wmo code", "sunrise": "iso8601", "sunset": "iso8601", "is_day": ""}.get(variable, "%")


def zone_name(latitude: float, longitude: float) -> str:
    """The time zone ``timezone=auto`` resolves to: the nearby place's, else the nautical zone of the
    longitude (``Etc/GMT+12`` is UTC-12: the Etc names' signs are inverted), ``GMT`` at offset 0."""
    place = nearest(latitude, longitude)
    if place is not None:
        return str(place["timezone"])
    hours = round(longitude / 15)
    return "GMT" if hours == 0 else f"Etc/GMT{-hours:+d}"


def forecast(
    latitude: float,
    longitude: float,
    sections: dict[str, list[str]],
    days: int,
    units: dict[str, str],
    now: float | None = None,
) -> dict[str, Any]:
    """An answer shaped as Open-Meteo's: grid-cell centre, units per section, column arrays.

    Times are local as Open-Meteo gives them with ``timezone=auto``: the zone's offset *at ``now``*
    (Unix time; the real clock when None) applied to the whole series, from local midnight today,
    with no daylight-saving change inside it (Open-Meteo's documented behaviour, open-meteo#488).
    """
    zone_id = zone_name(latitude, longitude)
    zone = ZoneInfo(zone_id)
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    offset = moment.astimezone(zone).utcoffset() or timedelta(0)
    local_now = (moment + offset).replace(tzinfo=None)
    midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
    place = nearest(latitude, longitude)
    answer: dict[str, Any] = {
        "latitude": round(latitude * 4) / 4 + 0.002,
        "longitude": round(longitude * 4) / 4 - 0.003,
        "generationtime_ms": 0.31,
        "utc_offset_seconds": int(offset.total_seconds()),
        "timezone": zone_id,
        "timezone_abbreviation": moment.astimezone(zone).tzname() or "GMT",
        "elevation": place["elevation"] if place else 0.0,
    }
    if sections.get("current"):
        names = sections["current"]
        quarter = local_now.replace(minute=local_now.minute // 15 * 15, second=0, microsecond=0)
        answer["current_units"] = {"time": "iso8601", "interval": "seconds", **{v: _label(v, units) for v in names}}
        answer["current"] = {
            "time": quarter.isoformat(timespec="minutes"),
            "interval": 900,
            **{v: _value(v, latitude, 0, units) for v in names},
        }
    dates = [(midnight + timedelta(days=d)).date().isoformat() for d in range(days)]
    if sections.get("daily"):
        names = sections["daily"]
        answer["daily_units"] = {"time": "iso8601", **{v: _label(v, units) for v in names}}
        answer["daily"] = {
            "time": dates,
            **{v: [_value(v, latitude, d, units, dates[d]) for d in range(days)] for v in names},
        }
    if sections.get("hourly"):
        names = sections["hourly"]
        hours = 24 * days
        answer["hourly_units"] = {"time": "iso8601", **{v: _label(v, units) for v in names}}
        answer["hourly"] = {
            "time": [(midnight + timedelta(hours=h)).isoformat(timespec="minutes") for h in range(hours)],
            **{v: [_value(v, latitude, h, units) for h in range(hours)] for v in names},
        }
    return answer


#: The NWS forecast office and grid cell of each US state the stand-in has a place in.
OFFICES = {"TX": ("FWD", 80, 120), "OR": ("PQR", 112, 103), "ME": ("GYX", 75, 60), "FL": ("MFL", 110, 50)}
_STATE_NAMES = {"TX": "Texas", "OR": "Oregon", "ME": "Maine", "FL": "Florida"}
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _half_days(local: datetime, hourly: bool) -> list[tuple[datetime, timedelta]]:
    """The periods' starts and lengths: a week of hours from this one, or fourteen 12-hour periods
    from the current one (06:00-18:00 or 18:00-06:00)."""
    if hourly:
        start = local.replace(minute=0, second=0, microsecond=0)
        return [(start + timedelta(hours=h), timedelta(hours=1)) for h in range(156)]
    day_start = local.replace(hour=6, minute=0, second=0, microsecond=0)
    if local.hour < 6:
        first = day_start - timedelta(hours=12)
    elif local.hour < 18:
        first = day_start
    else:
        first = day_start + timedelta(hours=12)
    return [(first + timedelta(hours=12 * n), timedelta(hours=12)) for n in range(14)]


def _nws_period(
    number: int, begin: datetime, length: timedelta, local: datetime, latitude: float, fahrenheit: bool, hourly: bool
) -> dict[str, Any]:
    """One period as the NWS shapes it, named as the NWS names them ("Today", "Tonight", "Tuesday Night")."""
    zone = local.tzinfo
    begin = begin.astimezone(zone)  # the offset valid then
    daytime = 6 <= begin.hour < 18
    celsius = round(28 - abs(latitude) * 0.25 + (number % 5) - 2 - (0 if daytime else 6), 1)
    temperature = round(celsius * 9 / 5 + 32) if fahrenheit else round(celsius)
    conditions = ["Sunny", "Partly Cloudy", "Chance Showers", "Mostly Cloudy"][number % 4]
    if not daytime and conditions == "Sunny":
        conditions = "Clear"
    chance = (number * 17) % 100
    wind = f"{5 + number % 10} mph" if fahrenheit else f"{8 + number % 16} km/h"
    if hourly:
        name = ""
    elif number == 1 and local.hour < 6:
        name = "Overnight"
    elif begin.date() == local.date():
        name = "Today" if daytime else "Tonight"
    else:
        name = _DAY_NAMES[begin.weekday()] + ("" if daytime else " Night")
    text = f"{conditions}, with a {'high near' if daytime else 'low around'} {temperature}. Southeast wind {wind}."
    return {
        "number": number,
        "name": name,
        "startTime": begin.isoformat(),
        "endTime": (begin + length).astimezone(zone).isoformat(),
        "isDaytime": daytime,
        "temperature": temperature,
        "temperatureUnit": "F" if fahrenheit else "C",
        "temperatureTrend": "",
        "probabilityOfPrecipitation": {"unitCode": "wmoUnit:percent", "value": chance},
        "windSpeed": wind,
        "windDirection": "SE",
        "icon": "https://api.weather.gov/icons/land/day/few?size=medium",
        "shortForecast": conditions,
        "detailedForecast": "" if hourly else f"{text} Chance of precipitation is {chance}%.",
    }


def gridpoint_forecast(
    office: str, x: int, y: int, hourly: bool, units: str, now: float | None = None
) -> dict[str, Any] | None:
    """``/gridpoints/{office}/{x},{y}/forecast[/hourly]`` as the NWS shapes it, from the current
    period at ``now`` (the real clock when None); None for a cell the stand-in does not know (the
    NWS's 404)."""
    state = next((code for code, cell in OFFICES.items() if cell == (office, x, y)), None)
    if state is None:
        return None
    place = next(p for p in PLACES if p["country_code"] == "US" and p["admin1"] == _STATE_NAMES[state])
    local = datetime.fromtimestamp(time.time() if now is None else now, UTC).astimezone(ZoneInfo(place["timezone"]))
    fahrenheit = units != "si"
    periods = [
        _nws_period(number, begin, length, local, place["latitude"], fahrenheit, hourly)
        for number, (begin, length) in enumerate(_half_days(local, hourly), 1)
    ]
    generated = local.replace(minute=0, second=0, microsecond=0).astimezone(UTC).isoformat()
    return {
        "@context": ["https://geojson.org/geojson-ld/geojson-context.jsonld"],
        "type": "Feature",
        "geometry": {"type": "Polygon", "coordinates": []},
        "properties": {
            "units": "us" if fahrenheit else "si",
            "forecastGenerator": "HourlyForecastGenerator" if hourly else "BaselineForecastGenerator",
            "generatedAt": generated,
            "updateTime": generated,
            "validTimes": f"{generated}/P7DT12H",
            "elevation": {"unitCode": "wmoUnit:m", "value": place["elevation"]},
            "periods": periods,
        },
    }


def point(latitude: float, longitude: float) -> dict[str, Any] | None:
    """``/points`` for a US place of the stand-in, else None (the NWS's 404)."""
    place = nearest(latitude, longitude)
    if place is None or place["country_code"] != "US":
        return None
    state = {"Texas": "TX", "Oregon": "OR", "Maine": "ME", "Florida": "FL"}[place["admin1"]]
    office, grid_x, grid_y = OFFICES[state]
    here = f"{latitude},{longitude}"
    return {
        "@context": ["https://geojson.org/geojson-ld/geojson-context.jsonld"],
        "id": f"https://api.weather.gov/points/{here}",
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [longitude, latitude]},
        "properties": {
            "@id": f"https://api.weather.gov/points/{here}",
            "@type": "wx:Point",
            "cwa": office,
            "gridId": office,
            "gridX": grid_x,
            "gridY": grid_y,
            "forecast": f"https://api.weather.gov/gridpoints/{office}/{grid_x},{grid_y}/forecast",
            "forecastHourly": f"https://api.weather.gov/gridpoints/{office}/{grid_x},{grid_y}/forecast/hourly",
            "relativeLocation": {
                "type": "Feature",
                "geometry": None,
                "properties": {
                    "city": place["name"],
                    "state": state,
                    "distance": {"unitCode": "wmoUnit:m", "value": 1200.5},
                    "bearing": {"unitCode": "wmoUnit:degree_(angle)", "value": 90},
                },
            },
            "timeZone": place["timezone"],
        },
    }


def issued_alert(area: str, event: str, number: int) -> dict[str, Any]:
    """An alert for ``area`` shaped as the recorded one, with its own id, event and headline (the
    stand-in's ``POST /_standin/alerts`` issues these)."""
    identifier = f"urn:oid:2.49.0.1.840.0.standin.{area}.{number}"
    properties = {
        **HURRICANE_WARNING["properties"],
        "@id": f"https://api.weather.gov/alerts/{identifier}",
        "id": identifier,
        "areaDesc": area,
        "event": event,
        "severity": "Moderate",
        "headline": f"{event} issued by the NWS for {area}",
        "description": f"* WHAT: {event}.",
    }
    return {**HURRICANE_WARNING, "id": properties["@id"], "properties": properties}


#: Where the recorded alert was issued: its times are written in this zone, as the NWS writes them.
_ALERT_ZONE = ZoneInfo("America/New_York")


def dated(alert: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """``alert`` as active at ``now`` (Unix time; None: the real clock): sent, effective and onset at the
    last full hour, expiring 8 h 15 min later (the recorded alert's span), the headline saying so. An
    active alert dated in the past would look stale to every client that checks ``expires``."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, _ALERT_ZONE)
    onset = moment.replace(minute=0, second=0, microsecond=0)
    expires = onset + timedelta(hours=8, minutes=15)
    properties = dict(alert["properties"])
    for key in ("sent", "effective", "onset"):
        properties[key] = onset.isoformat()
    properties["expires"] = expires.isoformat()
    if properties["id"] == HURRICANE_WARNING["properties"]["id"]:
        hour = onset.strftime("%I:%M%p").lstrip("0")
        properties["headline"] = (
            f"Hurricane Warning issued {onset.strftime('%B')} {onset.day} at {hour} {onset.tzname()} by NWS Miami FL"
        )
    return {**alert, "properties": properties}


def alerts(
    area: str | None,
    latitude: float | None,
    longitude: float | None,
    issued: list[dict[str, Any]] | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """``/alerts/active`` for an area or a point; ``issued``: alerts added for the area on top of the recorded one.
    Every alert is dated as active at ``now`` (:func:`dated`)."""
    if area is not None:
        hit = area == ALERT_AREA
        title = f"Current watches, warnings, and advisories for {area}"
    else:
        assert latitude is not None and longitude is not None
        hit = abs(latitude - ALERT_POINT[0]) < 0.5 and abs(longitude - ALERT_POINT[1]) < 0.5
        title = f"Current watches, warnings, and advisories for {latitude} N, {longitude} W"
    return {
        "@context": [],
        "type": "FeatureCollection",
        "features": [dated(alert, now) for alert in ([HURRICANE_WARNING] if hit else []) + list(issued or [])],
        "title": title,
        "updated": datetime.fromtimestamp(time.time() if now is None else now, UTC).isoformat(timespec="seconds"),
    }


def problem(status: int, title: str, kind: str, detail: str) -> dict[str, Any]:
    """An NWS problem+json body."""
    return {
        "correlationId": "5f1c9d",
        "title": title,
        "type": f"https://api.weather.gov/problems/{kind}",
        "status": status,
        "detail": detail,
        "instance": "https://api.weather.gov/requests/5f1c9d",
    }


# ------------------------------------------------------------- air quality, marine, archive

#: The variables the other Open-Meteo APIs know (a request for another is their 400).
KNOWN_MORE = {
    "air-quality": {
        "european_aqi",
        "us_aqi",
        "pm2_5",
        "pm10",
        "ozone",
        "nitrogen_dioxide",
        "sulphur_dioxide",
        "carbon_monoxide",
        "dust",
        "alder_pollen",
        "birch_pollen",
        "grass_pollen",
        "mugwort_pollen",
        "olive_pollen",
        "ragweed_pollen",
    },
    "marine": {
        "wave_height",
        "wave_direction",
        "wave_period",
        "swell_wave_height",
        "swell_wave_direction",
        "swell_wave_period",
        "sea_surface_temperature",
        "wave_height_max",
        "wave_direction_dominant",
        "wave_period_max",
        "swell_wave_height_max",
    },
    "archive": {
        "weather_code",
        "temperature_2m_max",
        "temperature_2m_min",
        "temperature_2m_mean",
        "precipitation_sum",
        "wind_speed_10m_max",
    },
}
#: Points treated as inland by the marine stand-in (no sea data, nulls as upstream): none of our places but these.
INLAND = {"Paris"}
AIR_UNITS = {"european_aqi": "EAQI", "us_aqi": "USAQI"}
MARINE_UNITS = {"direction": "°", "period": "s", "sea_surface_temperature": "°C"}
#: The archive's first day, as Open-Meteo's.
ARCHIVE_FIRST = "1940-01-01"


def _head(latitude: float, longitude: float, now: float | None) -> tuple[dict[str, Any], datetime, int]:
    """The common head of an answer, the local time at ``now`` (Open-Meteo's fixed offset) and that offset."""
    zone_id = zone_name(latitude, longitude)
    zone = ZoneInfo(zone_id)
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    offset = moment.astimezone(zone).utcoffset() or timedelta(0)
    place = nearest(latitude, longitude)
    head = {
        "latitude": round(latitude * 4) / 4 + 0.002,
        "longitude": round(longitude * 4) / 4 - 0.003,
        "generationtime_ms": 0.22,
        "utc_offset_seconds": int(offset.total_seconds()),
        "timezone": zone_id,
        "timezone_abbreviation": moment.astimezone(zone).tzname() or "GMT",
        "elevation": place["elevation"] if place else 0.0,
    }
    return head, (moment + offset).replace(tzinfo=None), int(offset.total_seconds())


def _air(variable: str, latitude: float) -> Any:
    if variable.endswith("_pollen"):
        # Pollen is modelled for Europe only: null elsewhere, as upstream.
        return round(3 + abs(latitude) % 7, 1) if 35 <= latitude <= 72 else None
    base = {"european_aqi": 32, "us_aqi": 48, "pm2_5": 9.4, "pm10": 15.2, "ozone": 61.0, "nitrogen_dioxide": 14.8}
    return base.get(variable, 1.5)


def air_quality(latitude: float, longitude: float, names: list[str], now: float | None = None) -> dict[str, Any]:
    """``/v1/air-quality`` with ``current`` variables, shaped as Open-Meteo's."""
    answer, local_now, _ = _head(latitude, longitude, now)
    hour = local_now.replace(minute=0, second=0, microsecond=0)
    answer["current_units"] = {
        "time": "iso8601",
        "interval": "seconds",
        **{v: AIR_UNITS.get(v, "grains/m³" if v.endswith("_pollen") else "μg/m³") for v in names},
    }
    answer["current"] = {
        "time": hour.isoformat(timespec="minutes"),
        "interval": 3600,
        **{v: _air(v, latitude) for v in names},
    }
    return answer


def _sea(variable: str, index: int, inland: bool) -> Any:
    if inland:
        return None
    if "direction" in variable:
        return (200 + index * 10) % 360
    if "period" in variable:
        return round(7.5 + index * 0.5, 1)
    if variable == "sea_surface_temperature":
        return 19.4
    return round((0.6 if "swell" in variable else 1.2) + index * 0.2, 2)


def _marine_unit(variable: str) -> str:
    for key, unit in MARINE_UNITS.items():
        if key in variable:
            return unit
    return "m"


def marine(
    latitude: float, longitude: float, sections: dict[str, list[str]], days: int, now: float | None = None
) -> dict[str, Any]:
    """``/v1/marine`` with ``current`` and ``daily`` variables; an inland point gets nulls, as upstream."""
    answer, local_now, _ = _head(latitude, longitude, now)
    place = nearest(latitude, longitude, 0.2)
    inland = place is not None and place["name"] in INLAND
    midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
    if sections.get("current"):
        names = sections["current"]
        quarter = local_now.replace(minute=local_now.minute // 15 * 15, second=0, microsecond=0)
        answer["current_units"] = {"time": "iso8601", "interval": "seconds", **{v: _marine_unit(v) for v in names}}
        answer["current"] = {
            "time": quarter.isoformat(timespec="minutes"),
            "interval": 900,
            **{v: _sea(v, 0, inland) for v in names},
        }
    if sections.get("daily"):
        names = sections["daily"]
        answer["daily_units"] = {"time": "iso8601", **{v: _marine_unit(v) for v in names}}
        answer["daily"] = {
            "time": [(midnight + timedelta(days=d)).date().isoformat() for d in range(days)],
            **{v: [_sea(v, d, inland) for d in range(days)] for v in names},
        }
    return answer


def archive(
    latitude: float, longitude: float, start: str, end: str, names: list[str], units: dict[str, str]
) -> dict[str, Any]:
    """``/v1/archive`` daily values from ``start`` to ``end`` (ISO dates, both included)."""
    answer, _, _ = _head(latitude, longitude, None)
    first, last = datetime.fromisoformat(start), datetime.fromisoformat(end)
    dates = [(first + timedelta(days=d)).date().isoformat() for d in range((last - first).days + 1)]
    answer["daily_units"] = {"time": "iso8601", **{v: _label(v, units) for v in names}}
    answer["daily"] = {
        "time": dates,
        **{v: [_value(v.replace("_mean", ""), latitude, d, units, dates[d]) for d in range(len(dates))] for v in names},
    }
    return answer
