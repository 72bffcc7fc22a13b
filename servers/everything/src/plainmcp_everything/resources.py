"""The conformance suite's fixed resources: a text, a blob, and a template.

(The resources that change while the server runs, ``test://watched-resource`` and
``test://dynamic-resource``, live in ``changes.py`` with the tools that change them.)
"""

from __future__ import annotations

from plainmcp import Server

from .media import PNG
from .tools import compact_json

STATIC_TEXT = "This is the content of the static text resource."
#: Candidates for completing the template's ``{id}`` (``completion/complete`` with ``ref/resource``).
TEMPLATE_IDS = ("1", "42", "123")


def register(server: Server) -> None:
    @server.resource(
        "test://static-text",
        "static-text",
        title="Static Text Resource",
        description="A static text resource for testing",
        mime_type="text/plain",
    )
    async def static_text(ctx, uri):
        return STATIC_TEXT

    @server.resource(
        "test://static-binary",
        "static-binary",
        title="Static Binary Resource",
        description="A static binary resource (a 1x1 PNG image) for testing",
        mime_type="image/png",
        size=len(PNG),
    )
    async def static_binary(ctx, uri):
        return PNG

    @server.resource_template(
        "test://template/{id}/data",
        "template",
        title="Resource Template",
        description="A resource template with parameter substitution",
        mime_type="application/json",
        complete={"id": TEMPLATE_IDS},
    )
    async def template(ctx, uri, variables):
        item = variables["id"]
        return compact_json({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})
