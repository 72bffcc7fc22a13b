"""The conformance suite's prompts: plain text, arguments (with completion), an embedded resource, an image."""

from __future__ import annotations

from plainmcp import PromptArgument, Server, content

from .media import PNG

#: Candidates for ``completion/complete`` on test_prompt_with_arguments, matched by prefix: the suite
#: completes arg1 from "test", and its documentation from "par".
ARG1_VALUES = ("hello", "paris", "park", "party", "testValue1")
ARG2_VALUES = ("world", "testValue2")
EMBEDDED_PROMPT_TEXT = "Embedded resource content for testing."


def register(server: Server) -> None:
    @server.prompt(title="Simple Test Prompt")
    async def test_simple_prompt(ctx, args):
        """A simple prompt without arguments"""
        return "This is a simple prompt for testing."

    @server.prompt(
        title="Prompt With Arguments",
        arguments=[
            PromptArgument("arg1", "First test argument", required=True, complete=ARG1_VALUES),
            PromptArgument("arg2", "Second test argument", required=True, complete=ARG2_VALUES),
        ],
    )
    async def test_prompt_with_arguments(ctx, args):
        """A prompt with required arguments"""
        return f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'"

    @server.prompt(
        title="Prompt With Embedded Resource",
        arguments=[PromptArgument("resourceUri", "URI of the resource to embed", required=True)],
    )
    async def test_prompt_with_embedded_resource(ctx, args):
        """A prompt that includes an embedded resource"""
        embedded = content.text_contents(args["resourceUri"], EMBEDDED_PROMPT_TEXT, "text/plain")
        return [
            content.user(content.embedded_resource(embedded)),
            content.user("Please process the embedded resource above."),
        ]

    @server.prompt(title="Prompt With Image")
    async def test_prompt_with_image(ctx, args):
        """A prompt that includes image content"""
        return [content.user(content.image(PNG, "image/png")), content.user("Please analyze the image above.")]
