"""A local stand-in for Open-Meteo (geocoding, forecast, air quality, marine, archive) and the NWS (points,
alerts), with faults.

Run ``plainmcp-weather-standin --port 8765`` and start the weather server with
``--geocoding-url``, ``--forecast-url`` and ``--nws-url`` all set to ``http://127.0.0.1:8765``:
it answers every API at its real path. Offline demos use it; so do the end-to-end tests, which
also start it in-process with :class:`StandIn`.

Faults are set per path prefix, each for a number of requests (``times``, -1 = until reset):

- ``status``: answer ``status`` (429, 500, 503...) with a problem body, and ``Retry-After``
  when ``retry_after`` is given;
- ``slow``: wait ``delay`` seconds, then answer normally;
- ``malformed``: a 200 whose body is cut-off JSON;
- ``redirect``: a 307 to the same URL (the next request is served normally);
- ``drop``: close the connection without answering.

Control endpoints (JSON): ``POST /_standin/faults`` ``{"rules": [{"path", "mode", ...}]}`` adds
rules, ``GET /_standin/requests`` gives ``{"counts": {path: n}, "log": [...]}``, ``POST
/_standin/reset`` clears both, ``POST /_standin/alerts`` ``{"area": "ME", "events": ["Winter Storm
Warning"]}`` issues alerts for an area (``[]`` clears them; ``/alerts/active`` answers with an ETag and a
304 to a matching ``If-None-Match``), ``POST /_standin/clock`` ``{"now": unix_time}`` sets the moment forecasts
are for (local dates and times follow each place's zone at that moment; ``null``: the real clock).
Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import standin_data as data

HOST = "127.0.0.1"
_POINT = re.compile(r"^/points/(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)$")
_GRIDPOINT = re.compile(r"^/gridpoints/([A-Z]{3})/(\d+),(\d+)/forecast(/hourly)?$")


class State:
    """Fault rules and request counts, shared by the handler threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rules: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []
        #: The Unix time the forecasts are for (None: the real clock); see ``POST /_standin/clock``.
        self.now: float | None = None
        #: Alerts issued per area on top of the recorded ones; see ``POST /_standin/alerts``.
        self.issued: dict[str, list[dict[str, Any]]] = {}

    def record(self, path: str, query: str, headers: Any) -> dict[str, Any] | None:
        """Count a request; return the fault rule it consumes, if any."""
        with self.lock:
            self.counts[path] = self.counts.get(path, 0) + 1
            self.log.append(
                {
                    "path": path,
                    "query": query,
                    "user_agent": headers.get("User-Agent"),
                    "accept": headers.get("Accept"),
                    "if_none_match": headers.get("If-None-Match"),
                }
            )
            for rule in self.rules:
                if path.startswith(rule.get("path", "/")) and rule.get("times", 1) != 0:
                    if rule.get("times", 1) > 0:
                        rule["times"] = rule.get("times", 1) - 1
                    return dict(rule)
            return None

    def reset(self) -> None:
        with self.lock:
            self.rules.clear()
            self.counts.clear()
            self.log.clear()
            self.issued.clear()


class Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # stdout stays clean; stderr only if asked
        if self.server.verbose:
            sys.stderr.write(f"standin: {format % args}\n")

    def _send(
        self, status: int, body: Any, *, headers: dict[str, str] | None = None, content_type: str = "application/json"
    ) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    # --------------------------------------------------------------------------------- control

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/_standin/faults":
            with state.lock:
                state.rules.extend(body.get("rules", []))
            self._send(200, {"ok": True})
        elif self.path == "/_standin/clock":
            with state.lock:
                state.now = None if body.get("now") is None else float(body["now"])
            self._send(200, {"ok": True})
        elif self.path == "/_standin/alerts":
            area, events = str(body.get("area", "")).upper(), body.get("events", [])
            with state.lock:
                state.issued[area] = [data.issued_alert(area, str(event), n) for n, event in enumerate(events, 1)]
            self._send(200, {"ok": True})
        elif self.path == "/_standin/reset":
            state.reset()
            self._send(200, {"ok": True})
        else:
            self._send(404, {"error": True, "reason": "Not Found"})

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/_standin/requests":
            with self.server.state.lock:
                self._send(200, {"counts": dict(self.server.state.counts), "log": list(self.server.state.log)})
            return
        rule = self.server.state.record(parts.path, parts.query, self.headers)
        if rule is not None and self._fault(rule):
            return
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if parts.path == "/v1/search":
            self._search(query)
        elif parts.path == "/v1/forecast":
            self._forecast(query)
        elif parts.path in ("/v1/air-quality", "/v1/marine", "/v1/archive"):
            self._more(parts.path.removeprefix("/v1/"), query)
        elif parts.path.startswith("/points/"):
            self._point(parts.path)
        elif parts.path in ("/alerts/active", "/alerts/active/"):
            self._alerts(query)
        elif parts.path.startswith("/gridpoints/"):
            self._gridpoint(parts.path, query)
        else:
            self._send(404, {"error": True, "reason": "Not Found"})

    def _fault(self, rule: dict[str, Any]) -> bool:
        """Play a fault; True when it replaced the answer."""
        mode = rule.get("mode")
        if mode == "slow":
            time.sleep(float(rule.get("delay", 1.0)))
            return False
        if mode == "status":
            status = int(rule.get("status", 503))
            headers = {"Retry-After": str(rule["retry_after"])} if "retry_after" in rule else {}
            self._send(
                status,
                data.problem(status, "Unexpected Problem", "UnexpectedProblem", "An unexpected problem has occurred."),
                headers=headers,
                content_type="application/problem+json",
            )
            return True
        if mode == "malformed":
            self._send(200, b'{"latitude": 52.52, "longitude": 13.41, "current": {"time": ')
            return True
        if mode == "redirect":
            self._send(307, b"", headers={"Location": self.path})
            return True
        if mode == "drop":
            self.close_connection = True
            self.connection.close()
            return True
        return False

    # ------------------------------------------------------------------------------- Open-Meteo

    def _bad(self, reason: str) -> None:
        self._send(400, {"error": True, "reason": reason})

    def _search(self, query: dict[str, str]) -> None:
        name = query.get("name", "")
        try:
            count = int(query.get("count", "10"))
        except ValueError:
            return self._bad("Parameter count must be an integer.")
        if not 1 <= count <= 100:
            return self._bad("Parameter count must be between 1 and 100.")
        results = data.search(name, count, query.get("countryCode"))
        body: dict[str, Any] = {"generationtime_ms": 0.52}
        if results:
            body["results"] = results  # absent when nothing matches, as upstream
        self._send(200, body)

    def _forecast(self, query: dict[str, str]) -> None:
        try:
            latitude, longitude = float(query["latitude"]), float(query["longitude"])
        except (KeyError, ValueError):
            return self._bad("Parameter 'latitude' and 'longitude' must be floating point numbers.")
        if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
            return self._bad(f"Latitude must be in range of -90 to 90°. Given: {latitude}.")
        units = {
            "temperature_unit": query.get("temperature_unit", "celsius"),
            "wind_speed_unit": query.get("wind_speed_unit", "kmh"),
            "precipitation_unit": query.get("precipitation_unit", "mm"),
        }
        for key, allowed in (
            ("temperature_unit", data.TEMPERATURE_LABELS),
            ("wind_speed_unit", data.WIND_LABELS),
            ("precipitation_unit", data.PRECIPITATION_LABELS),
        ):
            if units[key] not in allowed:
                return self._bad(f"Cannot initialize {key} from invalid String value {units[key]}")
        sections: dict[str, list[str]] = {}
        for section in ("current", "hourly", "daily"):
            names = [name for name in query.get(section, "").split(",") if name]
            unknown = [name for name in names if name not in data.KNOWN[section]]
            if unknown:
                return self._bad(
                    f"Cannot initialize WeatherVariable from invalid String value {unknown[0]} for key {section}"
                )
            sections[section] = names
        if sections["daily"] and not query.get("timezone"):
            return self._bad("Timezone is required")
        days = int(query.get("forecast_days", "7"))
        if not 0 <= days <= 16:
            return self._bad("Forecast days is invalid. Allowed range 0 to 16.")
        self._send(200, data.forecast(latitude, longitude, sections, days, units, self.server.state.now))

    def _more(self, api: str, query: dict[str, str]) -> None:
        """Air quality, marine and archive: coordinates and variables checked as upstream does."""
        try:
            latitude, longitude = float(query["latitude"]), float(query["longitude"])
        except (KeyError, ValueError):
            return self._bad("Parameter 'latitude' and 'longitude' must be floating point numbers.")
        if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
            return self._bad(f"Latitude must be in range of -90 to 90°. Given: {latitude}.")
        sections: dict[str, list[str]] = {}
        for section in ("current", "hourly", "daily"):
            names = [name for name in query.get(section, "").split(",") if name]
            unknown = [name for name in names if name not in data.KNOWN_MORE[api]]
            if unknown:
                return self._bad(f"Cannot initialize {api} variable from invalid String value {unknown[0]}")
            sections[section] = names
        now = self.server.state.now
        if api == "air-quality":
            return self._send(200, data.air_quality(latitude, longitude, sections["current"], now))
        if api == "marine":
            days = int(query.get("forecast_days", "5"))
            if not 0 <= days <= 16:
                return self._bad("Forecast days is invalid. Allowed range 0 to 16.")
            return self._send(200, data.marine(latitude, longitude, sections, days, now))
        start, end = query.get("start_date", ""), query.get("end_date", "")
        if not (re.fullmatch(r"\d{4}-\d{2}-\d{2}", start) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", end)):
            return self._bad("Parameter 'start_date' and 'end_date' must be set and be dates (yyyy-mm-dd).")
        if start < data.ARCHIVE_FIRST or end < start:
            return self._bad(f"Parameter 'start_date' is out of allowed range from {data.ARCHIVE_FIRST}.")
        units = {
            "temperature_unit": query.get("temperature_unit", "celsius"),
            "wind_speed_unit": query.get("wind_speed_unit", "kmh"),
            "precipitation_unit": query.get("precipitation_unit", "mm"),
        }
        self._send(200, data.archive(latitude, longitude, start, end, sections["daily"], units))

    # ------------------------------------------------------------------------------------ NWS

    def _nws_ok(self) -> bool:
        if not self.headers.get("User-Agent"):
            self._send(
                403,
                data.problem(403, "Forbidden", "Forbidden", "A User-Agent header is required."),
                content_type="application/problem+json",
            )
            return False
        return True

    def _point(self, path: str) -> None:
        if not self._nws_ok():
            return
        match = _POINT.match(path)
        if match is None:
            self._send(
                404, data.problem(404, "Not Found", "NotFound", "Not a point."), content_type="application/problem+json"
            )
            return
        raw_latitude, raw_longitude = match.groups()
        latitude, longitude = float(raw_latitude), float(raw_longitude)
        if any(len(part.partition(".")[2]) > 4 for part in (raw_latitude, raw_longitude)):
            rounded = f"/points/{round(latitude, 4)},{round(longitude, 4)}"
            self._send(
                301,
                data.problem(
                    301, "Adjusting Precision", "AdjustingPrecision", "The precision of the point has been adjusted."
                ),
                headers={"Location": rounded},
                content_type="application/problem+json",
            )
            return
        found = data.point(latitude, longitude)
        if found is None:
            self._send(
                404,
                data.problem(
                    404,
                    "Data Unavailable For Requested Point",
                    "InvalidPoint",
                    f"Unable to provide data for requested point {latitude},{longitude}",
                ),
                content_type="application/problem+json",
            )
            return
        self._send(200, found, content_type="application/geo+json")

    def _gridpoint(self, path: str, query: dict[str, str]) -> None:
        if not self._nws_ok():
            return
        match = _GRIDPOINT.match(path)
        units = query.get("units", "us")
        found = None
        if match is not None and units in ("us", "si"):
            office, x, y, hourly = match.groups()
            found = data.gridpoint_forecast(office, int(x), int(y), hourly is not None, units, self.server.state.now)
        if found is None:
            self._send(
                404,
                data.problem(404, "Not Found", "NotFound", "The requested gridpoint is not valid."),
                content_type="application/problem+json",
            )
            return
        self._send(200, found, content_type="application/geo+json")

    def _alerts(self, query: dict[str, str]) -> None:
        if not self._nws_ok():
            return
        area, where = query.get("area"), query.get("point")
        if area is not None and area not in data.US_AREAS:
            self._send(
                400,
                data.problem(400, "Invalid Parameter", "InvalidParameter", f'Parameter "area" is invalid: {area}'),
                content_type="application/problem+json",
            )
            return
        latitude = longitude = None
        if where is not None:
            latitude, longitude = (float(part) for part in where.split(","))
        elif area is None:
            area = "US"
        with self.server.state.lock:
            issued = list(self.server.state.issued.get(area or "", []))
            now = self.server.state.now
        # Dated by the hour (the alerts' times are), so the ETag stays the same within one.
        hour = (time.time() if now is None else now) // 3600 * 3600
        body = json.dumps(data.alerts(area, latitude, longitude, issued, hour)).encode("utf-8")
        # Conditional requests as the NWS answers them: an ETag of the body, and a 304 when it matches.
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        headers = {"ETag": etag, "Last-Modified": formatdate(hour, usegmt=True)}
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send(200, body, headers=headers, content_type="application/geo+json")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: State
    verbose: bool


class StandIn:
    """The stand-in on a thread of this process (port 0: a free one). Use as a context manager."""

    def __init__(self, port: int = 0, *, verbose: bool = False) -> None:
        self.httpd = _Server((HOST, port), Handler)
        self.httpd.state = State()
        self.httpd.verbose = verbose
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.httpd.server_address[1]}"

    @property
    def state(self) -> State:
        return self.httpd.state

    def __enter__(self) -> StandIn:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="weather-standin", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def fault(self, path: str, mode: str, times: int = 1, **options: Any) -> None:
        with self.state.lock:
            self.state.rules.append({"path": path, "mode": mode, "times": times, **options})

    def set_clock(self, now: float | None) -> None:
        """Answer forecasts as of ``now`` (Unix time; None: the real clock)."""
        with self.state.lock:
            self.state.now = now

    def issue_alerts(self, area: str, events: list[str]) -> None:
        """Make ``events`` the alerts issued for ``area`` (on top of the recorded ones); [] clears them."""
        with self.state.lock:
            self.state.issued[area.upper()] = [data.issued_alert(area.upper(), e, n) for n, e in enumerate(events, 1)]

    def count(self, prefix: str) -> int:
        """Requests received whose path starts with ``prefix``."""
        with self.state.lock:
            return sum(n for path, n in self.state.counts.items() if path.startswith(prefix))

    def requests(self, prefix: str = "/") -> list[dict[str, Any]]:
        with self.state.lock:
            return [entry for entry in self.state.log if entry["path"].startswith(prefix)]

    def reset(self) -> None:
        self.state.reset()


def _version() -> str:
    from . import __version__

    return __version__


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="plainmcp-weather-standin", description="A local stand-in for Open-Meteo and the NWS (127.0.0.1 only)."
    )
    parser.add_argument("--version", action="version", version=f"plainmcp-weather-standin {_version()}")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free one)")
    parser.add_argument("--verbose", action="store_true", help="log each request to stderr")
    args = parser.parse_args(argv)
    standin = StandIn(args.port, verbose=args.verbose)
    # One line on stdout, so a script that started us can read the URL (the port may have been 0).
    print(f"weather stand-in listening on {standin.url}", flush=True)
    try:
        standin.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        standin.httpd.server_close()


if __name__ == "__main__":
    main()
