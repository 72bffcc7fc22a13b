"""The tools' input and output JSON Schemas (draft 2020-12), in one place so they can be read together.

Inputs are checked twice: by these schemas (the core validates before a handler runs) and by the
handlers, which also enforce what a schema cannot say plainly ("location, or latitude and longitude").
"""

from __future__ import annotations

from typing import Any

from .units import UNIT_SYSTEMS, WIND_UNITS

MAX_DAYS = 16
MAX_COUNT = 100

NUMBER_OR_NULL = {"type": ["number", "null"]}
STRING_OR_NULL = {"type": ["string", "null"]}

# The input schemas are what a host puts in front of the model on every turn, so they say only what a
# model needs to call well: no description where the name and bounds say it, no "type" beside an enum,
# no rule the handler checks anyway with a clearer sentence ("latitude and longitude together").
#: Bounds are checked by the handlers, whose sentence names the range ("latitude must be a number from -90 to 90").
LATITUDE = {"type": "number"}
LONGITUDE = {"type": "number"}
#: Latitude and longitude are the other way to give a place: the schema shows them, the instructions say it.
#: Its length is bounded by the handlers (:data:`plainmcp_weather.places.MAX_NAME`), with a sentence.
LOCATION = {"type": "string", "description": 'Place name, e.g. "Portland, OR"'}
UNITS = {"enum": list(UNIT_SYSTEMS)}  # metric by default
WIND_SPEED_UNIT = {"enum": list(WIND_UNITS)}


def _where(**more: Any) -> dict[str, Any]:
    """An input schema taking a place by name or by coordinates, plus ``more`` properties."""
    return {
        "type": "object",
        "properties": {"location": LOCATION, "latitude": LATITUDE, "longitude": LONGITUDE, **more},
        "additionalProperties": False,
    }


SEARCH_INPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": '"Portland" or "Portland, OR"'},
        "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},  # 5 by default
        "country": {"type": "string", "pattern": "^[A-Za-z]{2}$"},  # an ISO 3166-1 alpha-2 code
    },
    "required": ["name"],
    "additionalProperties": False,
}
CURRENT_INPUT = _where(units=UNITS, wind_speed_unit=WIND_SPEED_UNIT)
FORECAST_INPUT = _where(
    days={"type": "integer", "minimum": 1, "maximum": MAX_DAYS},  # 7 by default
    units=UNITS,
    wind_speed_unit=WIND_SPEED_UNIT,
    hourly={"type": "boolean"},  # the next 48 hours, said in the description
    detail={"enum": ["summary", "full"]},
    source={"enum": ["open-meteo", "nws"]},
)
ALERTS_INPUT = {
    "type": "object",
    "properties": {
        "state": {"type": "string", "description": "CA or California"},
        "latitude": LATITUDE,
        "longitude": LONGITUDE,
    },
    "additionalProperties": False,
}

PLACE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "region": STRING_OR_NULL,
        "country": STRING_OR_NULL,
        "country_code": STRING_OR_NULL,
        "latitude": {"type": "number"},
        "longitude": {"type": "number"},
        "timezone": STRING_OR_NULL,
        "population": {"type": ["integer", "null"]},
        "elevation": NUMBER_OR_NULL,
    },
    "required": ["name", "latitude", "longitude"],
}
LOCATION_USED = {
    "type": "object",
    "description": "The place the answer is for: check it is the one meant",
    "properties": {**PLACE["properties"], "source": {"enum": ["geocoded", "coordinates"]}},
    "required": ["name", "latitude", "longitude", "source"],
}
FRESHNESS = {
    "stale": {"type": "boolean", "description": "True: the upstream is unavailable and this is an older cached answer"},
    "retrieved_at": {"type": "string", "description": "When the data was fetched from the upstream (UTC, ISO 8601)"},
    "attribution": {"type": "string"},
}
GRID = {
    "type": "object",
    "description": "The model grid cell the values are for (may be a few km from the place)",
    "properties": {
        "latitude": {"type": "number"},
        "longitude": {"type": "number"},
        "elevation": NUMBER_OR_NULL,
        "timezone": {"type": "string", "description": "The place's IANA time zone: local dates and times are in it"},
        "utc_offset_seconds": {"type": "integer", "description": "The zone's offset from UTC now"},
    },
    "required": ["latitude", "longitude", "timezone"],
}
UNIT_LABELS = {
    "type": "object",
    "properties": {
        "temperature": {"type": "string"},
        "wind_speed": {"type": "string"},
        "precipitation": {"type": "string"},
    },
}


def _row(*numbers: str, strings: tuple[str, ...] = ()) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "time": {"type": "string"},
        "conditions": {"type": "string"},
        "weather_code": {"type": ["integer", "null"]},
    }
    properties.update({name: NUMBER_OR_NULL for name in numbers})
    properties.update({name: STRING_OR_NULL for name in strings})
    return {"type": "object", "properties": properties, "required": ["time", "conditions"]}


CURRENT_ROW = _row(
    "temperature",
    "apparent_temperature",
    "relative_humidity",
    "precipitation",
    "cloud_cover",
    "pressure_msl",
    "wind_speed",
    "wind_direction",
    "wind_gusts",
    "is_day",
)
DAILY_ROW = _row(
    "temperature_max",
    "temperature_min",
    "precipitation_sum",
    "precipitation_probability_max",
    "wind_speed_max",
    "wind_gusts_max",
    "uv_index_max",
    strings=("sunrise", "sunset", "day"),
)
HOURLY_ROW = _row(
    "temperature",
    "apparent_temperature",
    "relative_humidity",
    "precipitation_probability",
    "precipitation",
    "wind_speed",
    strings=("wind",),  # the NWS's "10 mph E"
)
#: A named 12-hour period of an NWS forecast ("Tonight"), its forecaster's text in ``text``.
PERIOD = {
    "type": "object",
    "properties": {
        "name": STRING_OR_NULL,
        "start": STRING_OR_NULL,
        "end": STRING_OR_NULL,
        "is_daytime": {"type": ["boolean", "null"]},
        "temperature": NUMBER_OR_NULL,
        "temperature_unit": STRING_OR_NULL,
        "precipitation_probability": NUMBER_OR_NULL,
        "wind": STRING_OR_NULL,
        "conditions": STRING_OR_NULL,
        "text": STRING_OR_NULL,
    },
}


def _output(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, **FRESHNESS},
        "required": [*required, "stale", "retrieved_at", "attribution"],
    }


SEARCH_OUTPUT = _output(
    {"query": {"type": "string"}, "results": {"type": "array", "items": PLACE}},
    ["query", "results"],
)
CURRENT_OUTPUT = _output(
    {
        "location": LOCATION_USED,
        "alternatives": {"type": "array", "items": PLACE},
        "grid": GRID,
        "units": UNIT_LABELS,
        "current": CURRENT_ROW,
    },
    ["location", "alternatives", "grid", "units", "current"],
)
FORECAST_OUTPUT = _output(
    {
        "location": LOCATION_USED,
        "alternatives": {"type": "array", "items": PLACE},
        "grid": GRID,
        "units": UNIT_LABELS,
        "days": {"type": "integer"},
        "source": {"enum": ["open-meteo", "nws"], "description": "open-meteo: daily and grid; nws: periods"},
        "detail": {"enum": ["summary", "full"], "description": "summary: the main fields of each row"},
        "daily": {"type": "array", "items": DAILY_ROW},
        "hourly": {"type": "array", "items": HOURLY_ROW},
        "updated": STRING_OR_NULL,
        "periods": {"type": "array", "items": PERIOD},
    },
    ["location", "alternatives", "units", "days", "source"],
)
ALERT = {
    "type": "object",
    "properties": {
        name: STRING_OR_NULL
        for name in (
            "event",
            "headline",
            "severity",
            "urgency",
            "certainty",
            "area",
            "effective",
            "onset",
            "expires",
            "ends",
            "sender",
            "description",
            "instruction",
        )
    },
    "required": ["event", "severity"],
}
ALERTS_OUTPUT = _output(
    {
        "state": STRING_OR_NULL,
        "point": {"type": ["object", "null"]},
        "title": STRING_OR_NULL,
        "updated": STRING_OR_NULL,
        "count": {"type": "integer"},
        "alerts": {"type": "array", "items": ALERT},
    },
    ["state", "count", "alerts"],
)


# ------------------------------------------------------------------ the tools added for issue 21

MAX_MARINE_DAYS = 7
MAX_HISTORY_DAYS = 31
MIN_PLACES, MAX_PLACES = 2, 5

AIR_QUALITY_INPUT = _where()
MARINE_INPUT = _where(days={"type": "integer", "minimum": 1, "maximum": MAX_MARINE_DAYS})  # 3 by default
HISTORY_INPUT = {
    **_where(
        start_date={"type": "string", "format": "date"},
        end_date={"type": "string", "format": "date"},
        units=UNITS,
    ),
    "required": ["start_date", "end_date"],
}
COMPARE_INPUT = {
    "type": "object",
    "properties": {
        "locations": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": MIN_PLACES,
            "maxItems": MAX_PLACES,
            "description": 'Place names, e.g. ["Paris, France", "Rome"]',
        },
        "units": UNITS,
    },
    "required": ["locations"],
    "additionalProperties": False,
}

AIR_QUALITY_ROW = {
    "type": "object",
    "properties": {
        "time": {"type": ["string", "null"]},
        "european_aqi": NUMBER_OR_NULL,
        "us_aqi": NUMBER_OR_NULL,
        "pm2_5": NUMBER_OR_NULL,
        "pm10": NUMBER_OR_NULL,
        "ozone": NUMBER_OR_NULL,
        "nitrogen_dioxide": NUMBER_OR_NULL,
        "sulphur_dioxide": NUMBER_OR_NULL,
        "carbon_monoxide": NUMBER_OR_NULL,
        "alder_pollen": NUMBER_OR_NULL,
        "birch_pollen": NUMBER_OR_NULL,
        "grass_pollen": NUMBER_OR_NULL,
        "mugwort_pollen": NUMBER_OR_NULL,
        "olive_pollen": NUMBER_OR_NULL,
        "ragweed_pollen": NUMBER_OR_NULL,
    },
    "required": ["time"],
}
AIR_QUALITY_OUTPUT = _output(
    {
        "location": LOCATION_USED,
        "alternatives": {"type": "array", "items": PLACE},
        "grid": GRID,
        "units": {"type": "object", "additionalProperties": {"type": "string"}},
        "current": AIR_QUALITY_ROW,
        "european_category": STRING_OR_NULL,
        "us_category": STRING_OR_NULL,
    },
    ["location", "alternatives", "grid", "units", "current"],
)
MARINE_OUTPUT = _output(
    {
        "location": LOCATION_USED,
        "alternatives": {"type": "array", "items": PLACE},
        "grid": GRID,
        "units": {"type": "object", "additionalProperties": {"type": "string"}},
        "current": {
            "type": "object",
            "properties": {
                "time": {"type": ["string", "null"]},
                **{
                    name: NUMBER_OR_NULL
                    for name in (
                        "wave_height",
                        "wave_direction",
                        "wave_period",
                        "swell_wave_height",
                        "swell_wave_direction",
                        "swell_wave_period",
                        "sea_surface_temperature",
                    )
                },
            },
            "required": ["time"],
        },
        "days": {"type": "integer"},
        "daily": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "time": {"type": "string"},
                    "wave_height_max": NUMBER_OR_NULL,
                    "wave_direction_dominant": NUMBER_OR_NULL,
                    "wave_period_max": NUMBER_OR_NULL,
                    "swell_wave_height_max": NUMBER_OR_NULL,
                },
                "required": ["time"],
            },
        },
        "at_sea": {"type": "boolean", "description": "False: no sea data for this point (it is inland)"},
    },
    ["location", "alternatives", "grid", "units", "current", "days", "daily", "at_sea"],
)
HISTORY_ROW = _row("temperature_max", "temperature_min", "temperature_mean", "precipitation_sum", "wind_speed_max")
HISTORY_OUTPUT = _output(
    {
        "location": LOCATION_USED,
        "alternatives": {"type": "array", "items": PLACE},
        "grid": GRID,
        "units": UNIT_LABELS,
        "start_date": {"type": "string"},
        "end_date": {"type": "string"},
        "daily": {"type": "array", "items": HISTORY_ROW},
        "totals": {
            "type": "object",
            "description": "Over the whole range",
            "properties": {
                "temperature_max": NUMBER_OR_NULL,
                "temperature_min": NUMBER_OR_NULL,
                "precipitation_sum": NUMBER_OR_NULL,
                "days_with_precipitation": {"type": "integer"},
            },
        },
    },
    ["location", "alternatives", "grid", "units", "start_date", "end_date", "daily", "totals"],
)
COMPARE_OUTPUT = _output(
    {
        "units": UNIT_LABELS,
        "places": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "location": LOCATION_USED,
                    "current": CURRENT_ROW,
                    "today": DAILY_ROW,
                },
                "required": ["query", "location", "current", "today"],
            },
        },
    },
    ["units", "places"],
)
