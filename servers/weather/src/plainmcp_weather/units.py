"""Unit systems: what the tools accept and the Open-Meteo query parameters they become."""

from __future__ import annotations

from dataclasses import dataclass

UNIT_SYSTEMS = ("metric", "imperial")
WIND_UNITS = ("kmh", "ms", "mph", "kn")


@dataclass(frozen=True, slots=True)
class Units:
    """The three Open-Meteo unit parameters; every one of them changes the answer (and the cache key)."""

    temperature: str
    wind_speed: str
    precipitation: str

    def query(self) -> dict[str, str]:
        return {
            "temperature_unit": self.temperature,
            "wind_speed_unit": self.wind_speed,
            "precipitation_unit": self.precipitation,
        }


def units_for(system: str = "metric", wind_speed_unit: str | None = None) -> Units:
    """``metric`` is celsius, km/h and mm; ``imperial`` is fahrenheit, mph and inches.
    ``wind_speed_unit`` overrides the wind unit of either (``ms`` and ``kn`` exist only that way).

    Raises:
        ValueError: an unknown system or wind unit (the schema already refuses both; this guards
            callers that skip it).
    """
    if system not in UNIT_SYSTEMS:
        raise ValueError(f"units must be one of {', '.join(UNIT_SYSTEMS)}")
    if wind_speed_unit is not None and wind_speed_unit not in WIND_UNITS:
        raise ValueError(f"wind_speed_unit must be one of {', '.join(WIND_UNITS)}")
    if system == "imperial":
        return Units("fahrenheit", wind_speed_unit or "mph", "inch")
    return Units("celsius", wind_speed_unit or "kmh", "mm")
