"""The conformance suite's prompts: plain text, arguments (with completion), an embedded resource, an image."""

from __future__ import annotations

from typing import Any

from plainmcp import Context, PromptArgument, Server, content

from .media import PNG

#: Candidates for ``completion/complete`` on test_prompt_with_arguments, matched by prefix: the suite
#: completes arg1 from "test", and its documentation from "par".
ARG1_VALUES = ("hello", "paris", "park", "party", "testValue1")
ARG2_VALUES = ("world", "testValue2")
EMBEDDED_PROMPT_TEXT = "Embedded resource content for testing."

WITH_ARGUMENTS = (
    PromptArgument("arg1", "First test argument", required=True, complete=ARG1_VALUES),
    PromptArgument("arg2", "Second test argument", required=True, complete=ARG2_VALUES),
)
WITH_EMBEDDED_RESOURCE = (PromptArgument("resourceUri", "URI of the resource to embed", required=True),)


async def test_simple_prompt(ctx: Context, args: dict[str, str]) -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


async def test_prompt_with_arguments(ctx: Context, args: dict[str, str]) -> str:
    """A prompt with required arguments"""
    return f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'"


async def test_prompt_with_embedded_resource(ctx: Context, args: dict[str, str]) -> list[dict[str, Any]]:
    """A prompt that includes an embedded resource"""
    embedded = content.text_contents(args["resourceUri"], EMBEDDED_PROMPT_TEXT, "text/plain")
    return [
        content.user(content.embedded_resource(embedded)),
        content.user("Please process the embedded resource above."),
    ]


async def test_prompt_with_image(ctx: Context, args: dict[str, str]) -> list[dict[str, Any]]:
    """A prompt that includes image content"""
    return [content.user(content.image(PNG, "image/png")), content.user("Please analyze the image above.")]


def register(server: Server) -> None:
    """Register the prompts above, in listing order (the name is the handler's, the description its docstring)."""
    server.prompt(title="Simple Test Prompt")(test_simple_prompt)
    server.prompt(title="Prompt With Arguments", arguments=WITH_ARGUMENTS)(test_prompt_with_arguments)
    server.prompt(title="Prompt With Embedded Resource", arguments=WITH_EMBEDDED_RESOURCE)(
        test_prompt_with_embedded_resource
    )
    server.prompt(title="Prompt With Image")(test_prompt_with_image)
