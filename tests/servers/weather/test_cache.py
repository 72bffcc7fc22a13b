"""The TTL cache: normalized keys, expiry, stale serving, the size bound."""

from __future__ import annotations

from plainmcp_weather.cache import TTLCache, cache_key


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_cache_key_normalizes_names_and_coordinates():
    assert cache_key("geo", name="paris") == cache_key("geo", name="  Paris ")
    assert cache_key("geo", name="New  York") == cache_key("geo", name="new york")
    assert cache_key("w", latitude=48.853411, longitude=2.34881) == cache_key("w", longitude=2.3488, latitude=48.8534)
    assert cache_key("w", latitude=-0.00001) == cache_key("w", latitude=0.0)


def test_cache_key_keeps_what_changes_the_answer():
    assert cache_key("w", units="celsius") != cache_key("w", units="fahrenheit")
    assert cache_key("w", days=3) != cache_key("w", days=4)
    assert cache_key("w", hourly=True) != cache_key("w", hourly=False)
    assert cache_key("geo", name="paris") != cache_key("weather", name="paris")


def test_cache_entry_expires_after_its_ttl():
    clock = Clock()
    cache = TTLCache(10, stale_for=0, clock=clock, wall=lambda: 5.0)
    cache.put("k", "v", ttl=60)
    assert cache.get("k").value == "v"
    clock.now = 59.9
    assert cache.get("k") is not None
    clock.now = 60
    assert cache.get("k") is None
    assert (cache.hits, cache.misses) == (2, 1)


def test_cache_serves_stale_within_the_window_only():
    clock = Clock()
    cache = TTLCache(10, stale_for=100, clock=clock, wall=lambda: 5.0)
    cache.put("k", "v", ttl=10)
    clock.now = 50
    assert cache.get("k") is None
    hit = cache.get_stale("k")
    assert hit.value == "v" and hit.stale and hit.stored_at == 5.0
    assert cache.stale_hits == 1
    clock.now = 110
    assert cache.get_stale("k") is None
    assert len(cache) == 0  # dropped once too old even to be stale


def test_cache_is_bounded_and_evicts_least_recently_used():
    cache = TTLCache(2, clock=Clock())
    cache.put("a", 1, ttl=10)
    cache.put("b", 2, ttl=10)
    cache.get("a")  # a is now more recent than b
    cache.put("c", 3, ttl=10)
    assert len(cache) == 2
    assert cache.get("b") is None and cache.get("a").value == 1 and cache.get("c").value == 3


def test_cache_of_size_zero_keeps_nothing():
    cache = TTLCache(0, clock=Clock())
    cache.put("a", 1, ttl=10)
    assert cache.get("a") is None and len(cache) == 0
