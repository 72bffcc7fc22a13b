"""Shared helpers of the sqlite server tests: a real database file in a temporary folder, and a
server on it, in memory, with a chosen configuration."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from plainmcp import Client
from plainmcp.testing import connect_in_memory
from plainmcp_sqlite.config import Config
from plainmcp_sqlite.server import build_server

#: Upper bound of one wait in these tests (a notification, a process).
WAIT = 10.0
STDIO_COMMAND = [sys.executable, "-m", "plainmcp_sqlite"]

SHOP_SQL = '''
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    total REAL NOT NULL DEFAULT 0,
    note BLOB
);
CREATE INDEX orders_customer ON orders(customer_id);
CREATE UNIQUE INDEX customers_name ON customers(name);
CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
CREATE TABLE "odd ""name""" (x);
INSERT INTO customers (id, name, city) VALUES (1, 'Ada', 'London'), (2, 'Grace', 'New York'), (3, 'Linus', NULL);
INSERT INTO orders (customer_id, total, note) VALUES (1, 120.5, x'00ff10'), (1, 15, NULL), (2, 300, NULL);
'''


def make_shop(folder: Path, name: str = "shop.db") -> Path:
    path = folder / name
    connection = sqlite3.connect(path, isolation_level=None)
    connection.executescript(SHOP_SQL)
    connection.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_state(folder: Path) -> dict[str, str]:
    """Every file of ``folder`` with its digest: a write anywhere in it shows up here."""
    return {item.name: digest(item) for item in sorted(folder.iterdir()) if item.is_file()}


@asynccontextmanager
async def serve(path: Path | None, **options: Any) -> AsyncIterator[Client]:
    client_options = {
        key: options.pop(key) for key in ("protocol_version", "on_notification", "elicitation") if key in options
    }
    server = build_server(Config(db=path, **options))
    async with connect_in_memory(server, **client_options) as client:
        yield client


def answering(action: str, asked: list[dict[str, Any]] | None = None) -> Any:
    """A client's ``elicitation/create`` handler that answers ``action`` (and keeps each request in ``asked``)."""

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        if asked is not None:
            asked.append(params)
        return {"action": action, "content": {}} if action == "accept" else {"action": action}

    return answer


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
