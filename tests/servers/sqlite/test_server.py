"""``build_server(config, deps)``: a pure factory over the connections passed in ``deps``. It opens
nothing; serving uses exactly those connections and closes them when it ends."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_sqlite.config import Config
from plainmcp_sqlite.engine import Database
from plainmcp_sqlite.server import Deps, build_server

from .support import make_shop

pytestmark = pytest.mark.anyio


class CountingDatabase(Database):
    """A real connection that counts the statements it ran and its closes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ran = 0
        self.closed = 0

    async def run(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self.ran += 1
        return await super().run(sql, *args, **kwargs)

    async def close(self) -> None:
        self.closed += 1
        await super().close()


async def test_serving_uses_the_connections_of_deps_and_closes_them(tmp_path):
    path = make_shop(tmp_path)
    reader, writer = CountingDatabase(path, "read"), CountingDatabase(path, "write")
    server = build_server(Config(db=path, allow_write=True, confirm_writes=False), Deps(reader, writer))
    assert reader.connections_opened == writer.connections_opened == 0  # building opened nothing
    async with connect_in_memory(server) as client:
        changed = await client.call_tool(
            "execute", {"sql": "insert into customers (name) values (?)", "params": ["Barbara"]}
        )
        counted = await client.call_tool("query", {"sql": "select count(*) from customers"})
        assert changed["structuredContent"]["changes"] == 1
        assert counted["structuredContent"]["rows"] == [[4]]
        assert (reader.ran, writer.ran) == (1, 1) and (reader.closed, writer.closed) == (0, 0)
    assert (reader.closed, writer.closed) == (1, 1)


async def test_without_a_writer_in_deps_there_is_no_execute(tmp_path):
    path = make_shop(tmp_path)
    # The configuration asks for writes; the deps decide what the server talks to.
    server = build_server(Config(db=path, allow_write=True), Deps(Database(path, "read")))
    async with connect_in_memory(server) as client:
        names = [tool["name"] for tool in await client.list_all_tools()]
    assert names == ["query", "list_tables", "describe_database", "describe_table", "sample_rows", "explain_query"]
