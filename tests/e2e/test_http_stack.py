"""The HTTP stack ``run_http`` serves on (issue 20, item 1): uvicorn on httptools and uvloop when
they are installed, h11 and the asyncio loop as the fallbacks, each combination forced by name.

Every combination serves a real server process (the everything fixture) and a real MCP exchange;
which parser and loop it runs on is read from what the process has loaded (``/proc/<pid>/maps``
lists every shared object: httptools' parser and uvloop's loop are C extensions), not only from its
own log line. The connection guard's attack tests run on the default stack (httptools) in
``test_http_connection_slots.py`` and again here on h11.
"""

from __future__ import annotations

import functools
import gc
import sys
from pathlib import Path

import httpx
import pytest
from plainmcp import Server
from plainmcp.http import app as http_app
from plainmcp_everything.tools import SIMPLE_TEXT

from . import test_http_connection_slots as slots
from .http_server import call_body, dumps, initialize_body, legacy_headers, server_process

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps")


def loaded_extensions(pid: int) -> set[str]:
    """The top-level packages of the C extensions a process has loaded (httptools, uvloop, ...)."""
    packages = set()
    for row in Path(f"/proc/{pid}/maps").read_text().splitlines():
        path = row.split(maxsplit=5)[-1] if row.count(" ") >= 5 else ""
        if "/site-packages/" in path and path.endswith(".so"):
            packages.add(path.split("/site-packages/", 1)[1].split("/", 1)[0])
    return packages


def exchange(url: str) -> None:
    """initialize, then a tools/call in the session: a real MCP exchange over the stack."""
    with httpx.Client(timeout=10.0) as http:
        opened = http.post(url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        reply = http.post(url, content=dumps(call_body(1, "test_simple_text")), headers=legacy_headers(session))
        assert reply.status_code == 200 and reply.headers["content-type"] == "application/json", reply.text
        assert reply.json() == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": SIMPLE_TEXT}]},
        }


@linux_only
@pytest.mark.parametrize("parser", ["httptools", "h11"])
@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_each_parser_and_loop_forced_by_name_serves_a_real_exchange(parser, loop):
    env = {"PLAINMCP_HTTP_PARSER": parser, "PLAINMCP_EVENT_LOOP": loop}
    with server_process(env=env) as served:
        exchange(served.url)
        loaded = loaded_extensions(served.process.pid)
        assert ("httptools" in loaded) == (parser == "httptools"), loaded
        assert ("uvloop" in loaded) == (loop == "uvloop"), loaded
        served.stop()  # the log is written in batches by a thread of its own: every line is out at exit
        assert f"uvicorn with the {parser} parser on the {loop} event loop" in served.log()


@linux_only
def test_by_default_the_fast_parser_and_loop_serve():
    with server_process() as served:
        exchange(served.url)
        assert {"httptools", "uvloop"} <= loaded_extensions(served.process.pid)


def test_without_the_fast_parts_auto_falls_back_to_h11_and_asyncio(monkeypatch):
    # A None entry in sys.modules makes the import fail, as on a platform without their wheels.
    for name in ("httptools", "uvloop", "uvicorn.protocols.http.httptools_impl"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delenv("PLAINMCP_HTTP_PARSER", raising=False)
    monkeypatch.delenv("PLAINMCP_EVENT_LOOP", raising=False)
    protocol, loop = http_app._http_stack(None, None)
    assert (protocol.__name__, loop) == ("H11Protocol", "asyncio")
    # Asked for by name, a missing part is a start error, not a silent fallback.
    with pytest.raises(http_app.StartError, match="httptools"):
        http_app._http_stack("httptools", None)
    with pytest.raises(http_app.StartError, match="uvloop"):
        http_app._http_stack("h11", "uvloop")


def test_an_unknown_parser_or_loop_is_refused_by_name(monkeypatch):
    with pytest.raises(ValueError, match="unknown HTTP parser 'spdy'"):
        http_app._http_stack("spdy", None)
    monkeypatch.setenv("PLAINMCP_EVENT_LOOP", "trio")
    with pytest.raises(ValueError, match="unknown event loop 'trio'"):
        http_app._http_stack(None, None)


# The connection guard's attack tests, again with uvicorn's pure-Python parser (their own module
# runs them on the default, httptools): the guard subclasses whichever protocol class serves.
_ON_H11 = functools.partial(server_process, env={"PLAINMCP_HTTP_PARSER": "h11"})


@pytest.mark.parametrize(
    "attack",
    [
        slots.test_silent_and_half_sent_connections_beyond_the_limit_neither_lock_out_requests_nor_stay_open,
        functools.partial(slots.test_a_head_dripped_byte_by_byte_is_cut_off_at_the_deadline, first_request=False),
        functools.partial(slots.test_a_head_dripped_byte_by_byte_is_cut_off_at_the_deadline, first_request=True),
        slots.test_one_peer_cannot_take_more_than_its_share_of_the_slots,
        slots.test_with_every_slot_serving_a_request_health_is_answered_and_the_rest_gets_a_clear_503,
    ],
    ids=["silent-and-half-sent", "dripped-first-head", "dripped-after-keep-alive", "one-peer-share", "every-slot-busy"],
)
def test_the_connection_guard_holds_on_the_h11_parser(attack, monkeypatch):
    monkeypatch.setattr(slots, "server_process", _ON_H11)
    attack()


def test_run_http_freezes_the_start_up_heap_before_serving(monkeypatch):
    """Objects made at start (modules, the server, its schemas) live as long as the process: frozen
    out of the cyclic collector's sight, a full collection under load took ~1 ms instead of 7-30 ms
    (every in-flight request waits for it)."""
    frozen: list[int] = []

    def serve(app, config, listener):
        frozen.append(gc.get_freeze_count())
        listener.close()

    monkeypatch.setattr(http_app, "_serve", serve)
    try:
        http_app.run_http(Server("freeze-test", "0"), port=0)
    finally:
        gc.unfreeze()
    assert frozen and frozen[0] > 1000
