"""Prompts that help a model start: explore the database, and answer a question with SQL."""

from __future__ import annotations

from typing import Any

from plainmcp import Context, PromptArgument, Server, content

from . import catalog
from .engine import DatabaseError
from .resources import SCHEMA_URI

_RULES = (
    "Rules: the database is read-only through the query tool; write one statement per call; pass "
    "values as params (? or :name) instead of writing them into the SQL; select only the columns "
    "you need and use LIMIT while exploring; if a result says truncated, repeat the call with its "
    "next_cursor as cursor (with a stable ORDER BY), or aggregate instead."
)


EXPLORE_ARGUMENTS = [PromptArgument("focus", "A subject to look at first (optional), e.g. 'sales by month'")]
ANSWER_ARGUMENTS = [PromptArgument("question", "The question to answer from the data", required=True)]


class DatabasePrompts:
    """The prompts, each starting with the schema read from ``catalogue``."""

    def __init__(self, catalogue: catalog.Catalog) -> None:
        self.catalogue = catalogue

    async def schema_block(self) -> dict[str, Any]:
        """A user message embedding the ``sqlite://schema`` resource (or why it could not be read)."""
        try:
            text = await self.catalogue.schema_sql()
        except DatabaseError as failure:
            text = f"-- The schema could not be read: {failure}"
        return content.user(content.embedded_resource(content.text_contents(SCHEMA_URI, text, "application/sql")))

    async def explore_database(self, ctx: Context, args: dict[str, str]) -> list[dict[str, Any]]:
        """Get to know the database: its tables, how they relate, and what the data looks like."""
        focus = args.get("focus", "").strip()
        ask = (
            "Explore this SQLite database and give me an overview: what each table holds, how the "
            "tables relate (foreign keys), how many rows they have, and three questions the data "
            "could answer. Use describe_database, describe_table and sample_rows, then a few small queries to look at "
            "real rows." + (f" Start with what concerns: {focus}." if focus else "")
        )
        return [await self.schema_block(), content.user(f"{ask}\n\n{_RULES}")]

    async def answer_question(self, ctx: Context, args: dict[str, str]) -> list[dict[str, Any]]:
        """Answer a question from the data: find the tables, write the query, check it, explain."""
        question = args["question"].strip()
        ask = (
            f"Answer this question from the database: {question}\n\n"
            "Work in steps: find the tables and columns that hold the answer (the schema is above; "
            "describe_table shows keys and indexes), write one query, use explain_query if it may be "
            "slow, run it with the query tool, check that the numbers are plausible, then answer in "
            "plain words and show the SQL you used."
        )
        return [await self.schema_block(), content.user(f"{ask}\n\n{_RULES}")]


def register(server: Server, prompts: DatabasePrompts) -> None:
    """Add the prompts of ``prompts`` to ``server``."""
    server.prompt(title="Explore the database", arguments=EXPLORE_ARGUMENTS)(prompts.explore_database)
    server.prompt(title="Answer a question with SQL", arguments=ANSWER_ARGUMENTS)(prompts.answer_question)
