"""The conformance suite's fixed resources: a text, a blob, and a template.

(The resources that change while the server runs, ``test://watched-resource`` and
``test://dynamic-resource``, live in ``changes.py`` with the tools that change them.)
"""

from __future__ import annotations

from plainmcp import Context, Server

from .media import PNG
from .tools import compact_json

STATIC_TEXT = "This is the content of the static text resource."
#: Candidates for completing the template's ``{id}`` (``completion/complete`` with ``ref/resource``).
TEMPLATE_IDS = ("1", "42", "123")


async def static_text(ctx: Context, uri: str) -> str:
    return STATIC_TEXT


async def static_binary(ctx: Context, uri: str) -> bytes:
    return PNG


async def template(ctx: Context, uri: str, variables: dict[str, str]) -> str:
    item = variables["id"]
    return compact_json({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})


def register(server: Server) -> None:
    """Register the resources above, in listing order."""
    server.resource(
        "test://static-text",
        "static-text",
        title="Static Text Resource",
        description="A static text resource for testing",
        mime_type="text/plain",
    )(static_text)
    server.resource(
        "test://static-binary",
        "static-binary",
        title="Static Binary Resource",
        description="A static binary resource (a 1x1 PNG image) for testing",
        mime_type="image/png",
        size=len(PNG),
    )(static_binary)
    server.resource_template(
        "test://template/{id}/data",
        "template",
        title="Resource Template",
        description="A resource template with parameter substitution",
        mime_type="application/json",
        complete={"id": TEMPLATE_IDS},
    )(template)
