"""Place names: cleaning, qualifiers, state codes."""

from __future__ import annotations

import pytest
from plainmcp_weather.places import (
    PlaceQuery,
    clean_name,
    filter_candidates,
    matches_qualifier,
    parse_place,
    state_code,
)
from plainmcp_weather.standin_data import PLACES

from .support import place


def test_clean_name_drops_parenthetical_notes_and_extra_whitespace():
    assert clean_name("  Paris   (the one in France) ") == "Paris"
    assert clean_name("Springfield [IL] (capital (of Illinois))") == "Springfield"
    assert clean_name("São\tPaulo\n") == "São Paulo"
    assert clean_name("(nothing)") == ""


def test_parse_place_splits_qualifiers():
    assert parse_place(" Portland ,  OR ") == PlaceQuery("Portland", ("OR",))
    assert parse_place("Paris, France") == PlaceQuery("Paris", ("France",))
    assert parse_place("Portland, Oregon, US").qualifiers == ("Oregon", "US")
    assert parse_place("Tokyo,").qualifiers == ()


def test_parse_place_refuses_an_empty_name():
    with pytest.raises(ValueError, match="empty"):
        parse_place(" ( ) , ")


def test_qualifier_matches_country_region_and_us_state_code():
    portland_or, portland_me = place("Portland", "Oregon"), place("Portland", "Maine")
    assert matches_qualifier(portland_or, "OR") and not matches_qualifier(portland_me, "OR")
    assert matches_qualifier(portland_me, "maine")
    assert matches_qualifier(portland_or, "United States") and matches_qualifier(portland_or, "usa")
    assert matches_qualifier(place("Paris", "Île-de-France"), "France")
    assert matches_qualifier(place("Paris", "Île-de-France"), "fr")
    assert not matches_qualifier(place("Paris", "Île-de-France"), "TX")


def test_filter_candidates_honours_every_qualifier():
    assert [p["admin1"] for p in filter_candidates(PLACES, PlaceQuery("Portland", ("ME",)))] == ["Maine"]
    assert filter_candidates(PLACES, PlaceQuery("Paris", ("Texas", "US")))[0]["country_code"] == "US"
    assert filter_candidates(PLACES, PlaceQuery("Paris", ("Germany",))) == []


def test_state_code_accepts_codes_and_names():
    assert state_code("ca") == "CA"
    assert state_code(" North  Carolina ") == "NC"
    assert state_code("Puerto Rico") == "PR"
    assert state_code("Bavaria") is None
