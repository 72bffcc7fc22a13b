"""Place names: cleaning what a model typed, qualifiers ("Paris, France", "Portland, OR"), choosing.

Open-Meteo's geocoder matches the *name* only, so the qualifier after the first comma is split off
here, the bare name is looked up, and the candidates are filtered by the qualifier locally: it
matches a candidate's country (name or ISO code) or its first-level region (name, or a US state's
postal code). A qualifier is never silently dropped: when nothing matches it, the lookup fails and
says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

US_STATES: dict[str, str] = {
    "AL": "Alabama",
    "AK": "Alaska",
    "AZ": "Arizona",
    "AR": "Arkansas",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DE": "Delaware",
    "FL": "Florida",
    "GA": "Georgia",
    "HI": "Hawaii",
    "ID": "Idaho",
    "IL": "Illinois",
    "IN": "Indiana",
    "IA": "Iowa",
    "KS": "Kansas",
    "KY": "Kentucky",
    "LA": "Louisiana",
    "ME": "Maine",
    "MD": "Maryland",
    "MA": "Massachusetts",
    "MI": "Michigan",
    "MN": "Minnesota",
    "MS": "Mississippi",
    "MO": "Missouri",
    "MT": "Montana",
    "NE": "Nebraska",
    "NV": "Nevada",
    "NH": "New Hampshire",
    "NJ": "New Jersey",
    "NM": "New Mexico",
    "NY": "New York",
    "NC": "North Carolina",
    "ND": "North Dakota",
    "OH": "Ohio",
    "OK": "Oklahoma",
    "OR": "Oregon",
    "PA": "Pennsylvania",
    "RI": "Rhode Island",
    "SC": "South Carolina",
    "SD": "South Dakota",
    "TN": "Tennessee",
    "TX": "Texas",
    "UT": "Utah",
    "VT": "Vermont",
    "VA": "Virginia",
    "WA": "Washington",
    "WV": "West Virginia",
    "WI": "Wisconsin",
    "WY": "Wyoming",
    "DC": "District of Columbia",
}
#: Areas the NWS issues alerts for besides the states: territories (it also has marine zones,
#: which are not places a user names).
US_TERRITORIES: dict[str, str] = {
    "PR": "Puerto Rico",
    "VI": "U.S. Virgin Islands",
    "GU": "Guam",
    "AS": "American Samoa",
    "MP": "Northern Mariana Islands",
}
#: Common ways to name a country that are not its English name or ISO code.
COUNTRY_ALIASES: dict[str, str] = {
    "usa": "US",
    "u.s.": "US",
    "u.s.a.": "US",
    "united states of america": "US",
    "america": "US",
    "uk": "GB",
    "u.k.": "GB",
    "britain": "GB",
    "great britain": "GB",
    "england": "GB",
    "scotland": "GB",
    "wales": "GB",
}

_PARENTHESES = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
MAX_NAME = 200


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def clean_name(raw: str) -> str:
    """Whitespace collapsed, parenthetical notes ("Paris (the one in France)") removed, stray
    punctuation at the ends trimmed. May return "" (the caller refuses it)."""
    text = raw
    while True:  # nested notes: remove the innermost until none is left
        stripped = _PARENTHESES.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    text = " ".join(text.replace("(", " ").replace(")", " ").split())
    return text.strip(" ,;.")


@dataclass(frozen=True, slots=True)
class PlaceQuery:
    """A cleaned place name split into the name to look up and its qualifiers ("OR", "US")."""

    name: str
    qualifiers: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return ", ".join((self.name, *self.qualifiers))


def parse_place(raw: str) -> PlaceQuery:
    """``"  Portland ,  OR "`` -> ``PlaceQuery("Portland", ("OR",))``.

    Raises:
        ValueError: longer than :data:`MAX_NAME` (checked here, before any cleaning, rather than by the
            tools' schemas, which stay short for the model's context), or nothing is left after cleaning.
    """
    if len(raw) > MAX_NAME:
        raise ValueError(f"A place name is at most {MAX_NAME} characters.")
    cleaned = clean_name(raw)
    parts = [" ".join(part.split()) for part in cleaned.split(",")]
    parts = [part for part in parts if part]
    if not parts:
        raise ValueError("The place name is empty once notes in parentheses and punctuation are removed.")
    return PlaceQuery(parts[0], tuple(parts[1:]))


def state_code(text: str) -> str | None:
    """The NWS area code for a US state or territory given by code or name ("ca", "California"), else None."""
    folded = _fold(text)
    for table in (US_STATES, US_TERRITORIES):
        if folded.upper() in table:
            return folded.upper()
        for code, name in table.items():
            if name.casefold() == folded:
                return code
    return None


def matches_qualifier(place: dict[str, Any], qualifier: str) -> bool:
    """Whether a place (see :func:`plainmcp_weather.openmeteo.place_from`) fits one qualifier."""
    folded = _fold(qualifier)
    country_code = (place.get("country_code") or "").casefold()
    if folded in (_fold(place.get("country") or ""), country_code):
        return True
    if COUNTRY_ALIASES.get(folded, "").casefold() == country_code and country_code:
        return True
    regions = {_fold(place.get(key) or "") for key in ("admin1", "admin2")} - {""}
    if folded in regions:
        return True
    # A US postal code ("OR") names a state only for places in the US.
    if country_code == "us" and US_STATES.get(folded.upper(), "").casefold() in regions:
        return True
    return False


def filter_candidates(places: list[dict[str, Any]], query: PlaceQuery) -> list[dict[str, Any]]:
    """The places that fit every qualifier, in the upstream's order (most populous first)."""
    return [place for place in places if all(matches_qualifier(place, q) for q in query.qualifiers)]


def label(place: dict[str, Any]) -> str:
    """``"Portland, Oregon, United States"``: enough to tell candidates apart."""
    parts = [place.get("name"), place.get("admin1"), place.get("country")]
    seen: list[str] = []
    for part in parts:
        if part and part not in seen:
            seen.append(part)
    return ", ".join(seen)
