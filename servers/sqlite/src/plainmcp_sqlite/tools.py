"""The tools: ``query``, ``list_tables``, ``describe_database``, ``describe_table``, ``sample_rows``,
``explain_query``, and with ``--allow-write`` (or ``--writable``) ``execute``; their schemas are in
:mod:`.schemas`.

Every failure of the database becomes an ``isError`` result whose text says what was wrong (see
``engine.Database._explain``); nothing here builds SQL from what the model sent, apart from
``EXPLAIN QUERY PLAN`` in front of its own statement, which changes nothing it may do.

The handlers are methods of :class:`ReadTools` and :class:`WriteTools` (what they share: the
configuration, the catalogue, the connections); :func:`register` is the table that adds them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping
from typing import Any

from plainmcp import (
    UI_EXTENSION,
    Context,
    ErrorCode,
    MCPError,
    Server,
    SharedStateUnavailable,
    ToolAnnotations,
    ToolError,
    ToolResult,
    add_app_view,
    app_tool_meta,
    content,
    inputs,
    json_codec,
)

from . import catalog, confirmations, overview, paging, results, views
from .config import Config
from .engine import MAX_SQL_LENGTH, Database, DatabaseError, Outcome, Params
from .schemas import (
    DESCRIBE_DOC,
    DESCRIBE_INPUT,
    DESCRIBE_OUTPUT,
    EXECUTE_DOC,
    EXECUTE_INPUT,
    EXECUTE_OUTPUT,
    EXPLAIN_DOC,
    EXPLAIN_INPUT,
    LIST_DOC,
    LIST_OUTPUT,
    OVERVIEW_DOC,
    OVERVIEW_OUTPUT,
    QUERY_DOC,
    RESULT_OUTPUT,
    SAMPLE_DOC,
    SAMPLE_INPUT,
    SAMPLE_OUTPUT,
    query_input,
)

_EXPLAIN_PREFIX = re.compile(r"^\s*explain(\s+query\s+plan)?\s+", re.IGNORECASE)


_INT64 = range(-(2**63), 2**63)

#: The MCP Apps view of ``query``'s results (views/result_grid.html): a grid to sort, page and chart.
GRID_URI = "ui://plainmcp-sqlite/result-grid.html"


def _value(value: Any, where: str) -> Any:
    if isinstance(value, (list, dict)):
        raise ToolError(
            f"params{where} is an {'array' if isinstance(value, list) else 'object'}: a parameter "
            "value is a string, a number, a boolean or null (JSON text as a string)."
        )
    # JSON integers have no size limit; SQLite's stop at 64 bits (sqlite3 would raise OverflowError).
    if isinstance(value, int) and not isinstance(value, bool) and value not in _INT64:
        raise ToolError(f"The integer {value} does not fit SQLite's 64-bit integers; pass it as a string.")
    return value


def statement(args: dict[str, Any]) -> str:
    """The call's ``sql``, within its length bounds.

    Raises:
        ToolError: empty, or longer than ``MAX_SQL_LENGTH`` characters.
    """
    sql: str = args["sql"]
    if not sql.strip():
        raise ToolError("sql is empty: write one SQL statement.")
    if len(sql) > MAX_SQL_LENGTH:
        raise ToolError(f"sql is longer than {MAX_SQL_LENGTH} characters: write a shorter statement.")
    return sql


def bind(params: Any) -> Params:
    """The JSON ``params`` as sqlite3 wants them: a tuple, or a dict with bare names.

    Raises:
        ToolError: a value that is not a scalar, an integer beyond 64 bits.
    """
    if params is None:
        return ()
    if isinstance(params, list):
        return tuple(_value(value, f"[{index}]") for index, value in enumerate(params))
    return {name.lstrip(":@$"): _value(value, f"[{name!r}]") for name, value in params.items()}


READ_ONLY = ToolAnnotations(read_only=True, open_world=False)
WRITES = ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=False)


class ReadTools:
    """The read-only tools: over ``catalogue`` and its read connection, within ``config``'s limits."""

    def __init__(
        self, config: Config, catalogue: catalog.Catalog, others: Mapping[str, catalog.Catalog] | None = None
    ) -> None:
        self.config = config
        self.catalogue = catalogue
        #: Every database by the name calls give (``db``); ``catalogue`` is the first, the default.
        self.catalogues = {config.name: catalogue, **(others or {})}

    def pick(self, args: dict[str, Any]) -> catalog.Catalog:
        """The catalogue of the database the call names (the schema allows only served names)."""
        return self.catalogues[args.get("db", self.config.name)]

    async def query(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Run one read-only SQL statement and return its rows as JSON: {columns, rows, row_count,
        truncated}, at most ``max_rows`` rows and about ``--result-budget`` bytes of them. A cut
        result has ``next_cursor`` (the same call with ``cursor`` gives the next page) and, when the
        budget cut it, a link to a resource holding up to ``--max-rows`` rows of it."""
        config = self.config
        sql, raw, db = statement(args), args.get("params"), args.get("db", config.name)
        offset = paging.offset_of(args["cursor"], db, sql, raw) if "cursor" in args else 0
        want = args.get("max_rows", config.rows_by_default)
        budget = min(config.result_budget, config.max_result_bytes)
        params = bind(raw)
        # The rows become JSON and a table on the database's thread, not on the event loop.
        shape = functools.partial(
            results.shape_with_table, max_cell_chars=config.max_cell_chars, max_rows=config.max_rows
        )
        if ctx.client_extension(UI_EXTENSION) is not None:
            shape = functools.partial(with_column_types, shape)  # the grid shows them; JSON loses REAL 1.0
        # A client that asked for a task has its taskId here; the checks above run again in the task.
        await ctx.start_task()
        outcome = await run_statement(
            self.pick(args).db,
            sql,
            params,
            want,
            budget,
            max_value_bytes=config.max_result_bytes,
            skip=offset,
            shape=shape,
        )
        result, table = outcome.shaped
        blocks = []
        if outcome.more:
            cursor = result["next_cursor"] = paging.next_cursor(db, sql, raw, offset + len(outcome.rows))
            result["hint"] = page_hint(len(outcome.rows), outcome.capped_by, want, config.max_rows, cursor)
            uri = paging.result_uri(db, sql, raw, offset) if outcome.capped_by == "bytes" else None
            if uri is not None and at_least(ctx.version, "2025-06-18"):  # resource_link arrived then
                blocks.append(
                    content.resource_link(
                        uri,
                        "result",
                        title="This result, more rows",
                        mime_type="application/json",
                        description=f"Up to {config.max_rows} rows of this result from row {offset + 1}, as JSON",
                    )
                )
        return ToolResult(content=[content.text(results.summary(result, table)), *blocks], structured=result)

    async def result(self, ctx: Context, uri: str, variables: dict[str, str]) -> str | None:
        """A query's result as JSON, from the row its URI says: up to ``--max-rows`` rows and about
        ``--max-result-bytes`` (what a ``query`` over its budget links to)."""
        found = paging.query_of(variables["query"])
        if found is None or found[0] not in self.catalogues:
            return None  # resources/read answers "resource not found"
        db, sql, raw, offset = found
        try:
            params = bind(raw)
            outcome = await self.catalogues[db].db.run(
                sql,
                params,
                max_rows=self.config.max_rows,
                max_bytes=self.config.max_result_bytes,
                skip=offset,
                # Up to --max-result-bytes of rows become JSON text on the database's thread, written by
                # the core's codec (compact, as tool results are), not on the event loop.
                shape=lambda outcome: json_codec.dumps(shaped(outcome, self.config)).decode("utf-8"),
            )
        except (ToolError, DatabaseError) as failure:
            raise MCPError(ErrorCode.INVALID_PARAMS, f"The result cannot be read: {failure}") from None
        text: str = outcome.shaped
        return text

    async def list_tables(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """The tables and views of the database with their column names, and row counts where
        counting is quick (null otherwise)."""
        try:
            listing = await self.pick(args).list_tables()
        except DatabaseError as failure:
            raise ToolError(str(failure)) from None
        lines = [
            f"{t['name']} ({t['type']}"
            + (f", {t['rows']} rows" if t["rows"] is not None else "")
            + "): "
            + ", ".join(t["columns"])
            for t in listing["tables"]
        ] or ["The database has no tables."]
        return ToolResult(content=[content.text("\n".join(lines))], structured=listing)

    async def describe_table(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Columns (type, nullable, default, primary key), foreign keys, indexes, the CREATE
        statement and the row count of one table or view."""
        try:
            description = await self.pick(args).describe(args["table"])
        except DatabaseError as failure:
            raise ToolError(str(failure)) from None
        if self.config.metadata is not None:
            described = self.config.metadata.table(args.get("db", self.config.name), description["name"])
            if "description" in described:
                description["description"] = described["description"]
            notes = described.get("columns", {})
            description["columns"] = [
                {**column, "description": notes[column["name"]]} if column["name"] in notes else column
                for column in description["columns"]
            ]
        return ToolResult(content=[content.text(describe_text(description))], structured=description)

    async def describe_database(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Every table with its row count and foreign-key links, and the views (:mod:`.overview`)."""
        try:
            found = await overview.database_overview(
                self.pick(args), self.config.metadata, args.get("db", self.config.name)
            )
        except DatabaseError as failure:
            raise ToolError(str(failure)) from None
        return ToolResult(content=[content.text(overview.overview_text(found))], structured=found)

    async def sample_rows(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """A table's first rows and a profile of its columns (:mod:`.overview`)."""
        try:
            found = await overview.sample_with_profile(
                self.pick(args),
                args["table"],
                args.get("rows", 5),
                self.config.max_cell_chars,
                computed_value_bytes=self.config.max_result_bytes,  # query's bound
            )
        except DatabaseError as failure:
            raise ToolError(str(failure)) from None
        return ToolResult(content=[content.text(overview.sample_text(found))], structured=found)

    async def explain_query(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """How SQLite would run a statement (EXPLAIN QUERY PLAN): which indexes it uses, where it
        scans whole tables. The statement is not run."""
        sql = _EXPLAIN_PREFIX.sub("", statement(args), count=1)
        outcome = await run_statement(
            self.pick(args).db, f"EXPLAIN QUERY PLAN {sql}", bind(args.get("params")), 10_000, 1 << 20
        )
        plan = [{"id": row[0], "parent": row[1], "detail": row[-1]} for row in outcome.rows]
        return ToolResult(content=[content.text(plan_text(plan))], structured={"plan": plan})


class WriteTools:
    """``execute`` (``--allow-write`` only): over ``writer``, its own read-write connection."""

    def __init__(self, config: Config, writer: Database | None, others: Mapping[str, Database] | None = None) -> None:
        self.config = config
        #: The writable databases by name; the first database's when it is writable, then the others.
        self.writers = {**({config.name: writer} if writer is not None else {}), **(others or {})}
        self.default = next(iter(self.writers))
        #: Confirmations already spent, each until it expires (see :meth:`confirm`).
        self.ledger = confirmations.Ledger()

    def pick(self, args: dict[str, Any]) -> Database:
        return self.writers[args.get("db", self.default)]

    async def execute(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Run one statement that changes the database, in its own transaction (committed when it
        succeeds, rolled back otherwise), once the user confirmed it (see :meth:`confirm`)."""
        return await self.change(ctx, self.pick(args), statement(args), bind(args.get("params")))

    async def change(self, ctx: Context, writer: Database, sql: str, params: Params) -> ToolResult:
        """Run ``sql`` on ``writer`` once confirmed (unless ``--confirm-writes never``): ``execute``'s
        work, and a canned query's with ``write: true``."""
        config = self.config
        expected = await self.confirm(ctx, writer, sql, params) if config.confirm_writes else None
        outcome = await run_statement(
            writer, sql, params, config.rows_by_default, config.max_result_bytes, expect_digest=expected
        )
        result: dict[str, Any] = {"changes": outcome.changes, "last_row_id": outcome.last_row_id or None}
        text = f"{outcome.changes} row(s) changed" + (
            f"; last inserted row id {outcome.last_row_id}" if outcome.last_row_id else ""
        )
        if outcome.columns:
            result.update(shaped(outcome, config))
            text += "\n\n" + results.summary(result)
        return ToolResult(content=[content.text(text)], structured=result)

    async def confirm(self, ctx: Context, writer: Database, sql: str, params: Params) -> str:
        """Ask the user to confirm ``sql``, showing the whole statement and what a dry run found it
        would change; the digest of the changes they confirmed (the real run must make exactly
        these, see :mod:`.changes`).

        In 2026-07-28 the call comes back for the answer (``input_required``), and the question
        comes back with it, sealed in the request state. The answer is taken only under the key of
        this question's nonce, so an answer sent before the question was asked matches nothing;
        the nonce is spent once (:class:`.confirmations.Ledger`).

        Raises:
            ToolError: the statement is too long to show, the client cannot ask, the user did not
                accept, the question failed, expired or was already answered.
        """
        shown = ctx.state.get("confirm")
        if shown is None:
            text = confirmations.shown_statement(sql, params)
            if text is None:
                raise ToolError(TOO_LONG_TO_SHOW)
            if not self.ledger.has_room():
                raise ToolError("The server is holding too many confirmations; nothing was changed. Try again later.")
            # First, so that a statement the server refuses, or SQLite rejects, says so at once.
            dry = await run_statement(writer, sql, params, 1, 1 << 20, dry_run=True)
            shown = ctx.state["confirm"] = {
                "statement": statement_digest(writer, sql, params),
                "digest": dry.digest,
                "message": confirmation(text, dry),
                "nonce": os.urandom(16).hex(),
                "expires": time.time() + confirmations.LIFETIME_SECONDS,
            }
        if not ctx.client_supports("elicitation"):
            raise ToolError(NO_ELICITATION)
        if shown.get("statement") != statement_digest(writer, sql, params):
            raise ToolError("This confirmation was for another statement. Nothing was changed.")
        key = f"confirm-{shown['nonce']}"
        try:
            answers = await ctx.ask({key: inputs.elicitation(shown["message"], CONFIRM_SCHEMA)})
        except MCPError:
            raise ToolError(
                "The user could not be asked to confirm the change (the client did not answer). Nothing was changed."
            ) from None
        action = answers[key].get("action")
        if action != "accept":
            raise ToolError(
                f"The user {'declined' if action == 'decline' else 'dismissed'} the change. "
                "Nothing was changed; do not retry it unless they ask."
            )
        # One accept commits once, however often the sealed state comes back (a retry, a replay).
        refusal = self.ledger.spend(str(shown["nonce"]), float(shown["expires"]))
        if refusal is not None:
            raise ToolError(refusal)
        await spend_everywhere(ctx, str(shown["nonce"]), float(shown["expires"]))
        return str(shown["digest"])


async def spend_everywhere(ctx: Context, nonce: str, expires: float) -> None:
    """With replicas, spend the nonce in the state they share too: the same sealed answer replayed to
    another replica (every replica verifies what any sealed) must not commit there a second time.

    Raises:
        ToolError: another replica already spent it, or the shared store cannot be reached (refused then:
            nothing is changed without knowing the answer was not used).
    """
    shared = ctx.server.shared
    if not shared.replicated:
        return  # one process: the ledger saw every spend
    try:
        first = await shared.claim(f"sqlite-confirm:{nonce}", max(1.0, expires - time.time()))
    except SharedStateUnavailable:
        raise ToolError(
            "The confirmation cannot be checked now (the servers' shared store is unreachable). Nothing was changed."
        ) from None
    if not first:
        raise ToolError("This confirmation was already used, and nothing was changed again. Call execute anew.")


NO_ELICITATION = (
    "Refused: this server asks the user to confirm every change, and this client cannot ask "
    "(it does not support elicitation). Nothing was changed. The operator can start the server "
    "with --confirm-writes never to allow changes without asking."
)
TOO_LONG_TO_SHOW = (
    f"Refused: the statement and its parameters are longer than {confirmations.MAX_SHOWN_CHARS} characters, "
    "too long to show the user whole for confirmation. Nothing was changed; split the change into shorter "
    "statements (or pass long values as params)."
)
#: The confirmation form: nothing to fill in, the user accepts or declines.
CONFIRM_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def statement_digest(writer: Database, sql: str, params: Params) -> str:
    """What a confirmation is for: the database, the statement and its parameters."""
    encoded = json.dumps([str(writer.path), sql, params], ensure_ascii=False, default=repr)
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


def confirmation(shown: str, dry: Outcome) -> str:
    """What the user is asked: what the statement does, how many rows it changes, and the whole
    statement with its parameters (``shown``, see :func:`.confirmations.shown_statement`)."""
    effects = ", ".join(dry.effects) or "no change to any table"
    more = dry.all_changes - dry.changes
    side = f" (and {more} more through triggers or foreign keys)" if more > 0 else ""
    return f"Run this change on the database? {effects}: {dry.changes} row(s){side}.\n\n{shown}"


def register(server: Server, read: ReadTools, write: WriteTools | None = None) -> None:
    """Add the tools to ``server``: the read tools, and ``execute`` when ``write`` is given. With
    several databases, each tool takes ``db``: the database's name (``execute``: a writable one)."""
    names, writable = list(read.catalogues), list(write.writers) if write is not None else []

    def naming(schema: dict[str, Any], among: list[str]) -> dict[str, Any]:
        if len(names) < 2:
            return schema
        # The default is said once, in the server's instructions, not in every tool's schema.
        db = {"enum": among}
        return {**schema, "properties": {**schema.get("properties", {}), "db": db}, "additionalProperties": False}

    add_app_view(
        server,
        GRID_URI,
        views.document("result_grid.html"),
        name="result_grid",
        title="Query result grid",
        description="query's rows as a grid: types, NULLs, sort, next page, a chart, copy as CSV",
        permissions=["clipboardWrite"],
    )
    server.tool(
        description=QUERY_DOC,
        title="Run a read-only SQL query",
        input_schema=naming(query_input(read.config), names),
        output_schema=RESULT_OUTPUT,
        annotations=READ_ONLY,
        meta=app_tool_meta(GRID_URI),
        task_support="optional",  # a long query can run as a task the client polls or cancels
    )(read.query)
    server.tool(
        description=LIST_DOC,
        title="List tables and views",
        input_schema=naming({"type": "object", "additionalProperties": False}, names),
        output_schema=LIST_OUTPUT,
        annotations=READ_ONLY,
    )(read.list_tables)
    server.tool(
        description=OVERVIEW_DOC,
        title="Describe the database",
        input_schema=naming({"type": "object", "additionalProperties": False}, names),
        output_schema=OVERVIEW_OUTPUT,
        annotations=READ_ONLY,
    )(read.describe_database)
    server.tool(
        description=DESCRIBE_DOC,
        title="Describe a table",
        input_schema=naming(DESCRIBE_INPUT, names),
        output_schema=DESCRIBE_OUTPUT,
        annotations=READ_ONLY,
    )(read.describe_table)
    server.tool(
        description=SAMPLE_DOC,
        title="Sample rows and profile columns",
        input_schema=naming(SAMPLE_INPUT, names),
        output_schema=SAMPLE_OUTPUT,
        annotations=READ_ONLY,
    )(read.sample_rows)
    server.tool(
        description=EXPLAIN_DOC,
        title="Explain a query plan",
        input_schema=naming(EXPLAIN_INPUT, names),
        annotations=READ_ONLY,
    )(read.explain_query)
    server.resource_template(paging.RESULT_TEMPLATE, "result", title="A query's result", mime_type="application/json")(
        read.result
    )
    if write is not None:
        server.tool(
            description=EXECUTE_DOC,
            title="Change the database",
            input_schema=naming(EXECUTE_INPUT, writable),
            output_schema=EXECUTE_OUTPUT,
            annotations=WRITES,
        )(write.execute)


_STORAGE_CLASSES = {type(None): "NULL", int: "INTEGER", float: "REAL", str: "TEXT", bytes: "BLOB"}


def with_column_types(shape: Any, outcome: Outcome) -> tuple[dict[str, Any], Any]:
    """``shape(outcome)`` with ``column_types``: each column's SQLite storage classes in this page
    (``["INTEGER", "NULL"]``), for clients that took up MCP Apps (others get exactly today's result)."""
    result, table = shape(outcome)
    seen: list[set[str]] = [set() for _ in outcome.columns]
    for row in outcome.rows:
        for kinds, value in zip(seen, row, strict=True):
            kinds.add(_STORAGE_CLASSES.get(type(value), "TEXT"))
    result["column_types"] = [sorted(kinds) for kinds in seen]
    return result, table


def page_hint(shown: int, capped_by: str | None, asked: int, max_rows: int, cursor: str) -> str:
    """What a cut ``query`` result says, in the text too (many hosts show the model only that)."""
    if capped_by == "bytes":
        why, other = (
            f"the result reached its size limit (--result-budget) after {shown} rows",
            "select fewer or shorter columns",
        )
    else:
        why, other = f"only the first {shown} rows are shown", "pass max_rows"
        other += f" (up to {max_rows})" if asked < max_rows else ""
    return (
        f"More rows exist: {why}. For the next page call query again with the same sql and params and "
        f'cursor "{cursor}"; or {other}, or aggregate (COUNT, GROUP BY) instead of listing rows.'
    )


def at_least(version: str, revision: str) -> bool:
    """Whether protocol ``version`` is ``revision`` or later (revisions are ISO dates)."""
    return version >= revision


def shaped(outcome: Outcome, config: Config) -> dict[str, Any]:
    """A statement's rows as the tools return them, cells cut to ``config``'s limits."""
    return results.to_json(outcome, max_cell_chars=config.max_cell_chars, max_rows=config.max_rows)


async def run_statement(
    db: Database, sql: str, params: Params, max_rows: int, max_bytes: int, **options: Any
) -> Outcome:
    """``db.run`` with its failures as tool errors the model reads (``options``: see ``Database.run``)."""
    try:
        return await db.run(sql, params, max_rows=max_rows, max_bytes=max_bytes, **options)
    except DatabaseError as failure:
        raise ToolError(str(failure)) from None


def describe_text(description: dict[str, Any]) -> str:
    """A readable account of :func:`catalog.describe`'s result."""
    rows = f", {description['rows']} rows" if description.get("rows") is not None else ""
    lines = [f"{description['type']} {description['name']}{rows}"]
    if description.get("description"):
        lines.append(description["description"])
    lines += ["", "columns:"]
    for column in description["columns"]:
        traits = [column["type"] or "(no type)"]
        if column["primary_key"]:
            traits.append("primary key")
        if not column["nullable"]:
            traits.append("not null")
        if column["default"] is not None:
            traits.append(f"default {column['default']}")
        if column.get("generated"):
            traits.append("generated")
        note = f" -- {column['description']}" if column.get("description") else ""
        lines.append(f"  {column['name']}: {', '.join(traits)}{note}")
    for key in description["foreign_keys"]:
        target = key["references"]
        to_columns = ", ".join(c or "(primary key)" for c in target["columns"])
        lines.append(f"foreign key ({', '.join(key['columns'])}) -> {target['table']}({to_columns})")
    for index in description["indexes"]:
        unique = "unique " if index["unique"] else ""
        cols = ", ".join(c or "(expression)" for c in index["columns"])
        lines.append(f"{unique}index {index['name']} ({cols}) [{index['origin']}]")
    if description.get("sql"):
        lines += ["", description["sql"]]
    return "\n".join(lines)


def plan_text(plan: list[dict[str, Any]]) -> str:
    """The plan as an indented tree, as the sqlite3 shell draws it."""
    depth: dict[int, int] = {0: -1}
    lines = ["QUERY PLAN"]
    for step in plan:
        level = depth.get(step["parent"], -1) + 1
        depth[step["id"]] = level
        lines.append("  " * level + "- " + str(step["detail"]))
    return "\n".join(lines)
