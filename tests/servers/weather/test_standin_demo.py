"""The stand-in as its own process (as the demo and README run it), and the offline demo."""

from __future__ import annotations

import subprocess
import sys

import httpx

from .support import QUICK


def test_standin_process_serves_all_three_apis_on_loopback():
    process = subprocess.Popen(
        [sys.executable, "-m", "plainmcp_weather.standin", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("weather stand-in listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1].strip()
        with httpx.Client(base_url=url, timeout=QUICK, trust_env=False) as http:
            found = http.get("/v1/search", params={"name": "Sydney"}).json()
            assert found["results"][0]["country_code"] == "AU"
            assert "results" not in http.get("/v1/search", params={"name": "Atlantis"}).json()
            bad = http.get("/v1/forecast", params={"latitude": 1, "longitude": 1, "current": "tempeture_2m"})
            assert bad.status_code == 400 and bad.json()["error"] is True
            moved = http.get("/points/45.523451,-122.67621", headers={"User-Agent": "t"})
            assert moved.status_code == 301 and moved.headers["location"] == "/points/45.5235,-122.6762"
            assert http.get("/alerts/active", params={"area": "ZZ"}, headers={"User-Agent": "t"}).status_code == 400
            http.post("/_standin/faults", json={"rules": [{"path": "/v1/search", "mode": "status", "status": 503}]})
            assert http.get("/v1/search", params={"name": "Paris"}).status_code == 503
            assert http.get("/v1/search", params={"name": "Paris"}).status_code == 200
            assert http.get("/_standin/requests").json()["counts"]["/v1/search"] == 4
    finally:
        process.terminate()
        process.wait(QUICK)


def test_demo_offline_says_it_uses_the_standin_and_answers():
    done = subprocess.run(
        [sys.executable, "-m", "plainmcp_weather.demo", "--offline"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "answers come from the local stand-in" in done.stdout
    assert "Portland, Oregon, United States" in done.stdout
    assert "Hurricane Warning" in done.stdout
    assert "(error)" not in done.stdout
