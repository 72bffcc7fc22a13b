"""Dotprompt files (``*.prompt``, issue 21): what is read from the front matter, the Handlebars subset
served (variables, roles, conditions), typed arguments from Picoschema or JSON Schema, and a clear
report for everything else."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from plainmcp import MCPError
from plainmcp.testing import connect_in_memory
from plainmcp_prompts import dotprompt, template
from plainmcp_prompts.formats import load_file_text
from plainmcp_prompts.frontmatter import FormatError
from plainmcp_prompts.library import Library
from plainmcp_prompts.template import render

from .support import MODERN, server_over, text_of, write

ERAS = ["2025-11-25", MODERN]

GREETING = """
    ---
    model: googleai/gemini-2.5-flash
    config:
      temperature: 0.9
    input:
      schema:
        location: string, Where the assistant works
        style?(enum, How to greet): [pirate, formal]
        name?: string
        loud?: boolean
      default:
        location: a restaurant
    output:
      format: text
    ---
    {{role "system"}}
    You are the world's most welcoming assistant, working at {{location}}.
    {{! a comment the model never sees }}
    {{role "user"}}
    Greet a guest{{#if name}} named {{name}}{{/if}}{{#if style}} in the style of {{style}}{{/if}}.
    {{#unless loud}}Speak softly.{{else}}SHOUT.{{/unless}}
    {{role "model"}}
    Ahoy!
    """


def load(text: str, path: str = "p.prompt"):
    return load_file_text(textwrap.dedent(text).lstrip("\n"), root="/library", path=path)


def test_dotprompt_front_matter_and_picoschema_become_typed_arguments():
    spec, warnings = load(GREETING, "greeting.prompt")
    assert (spec.name, spec.format, warnings) == ("greeting", "dotprompt", [])
    assert spec.description == "You are the world's most welcoming assistant, working at {{location}}."
    arguments = {argument.name: argument for argument in spec.arguments}
    assert list(arguments) == ["location", "style", "name", "loud"]
    location = arguments["location"]
    assert (location.required, location.default, location.description) == (
        False,
        "a restaurant",
        "Where the assistant works",
    )
    assert (arguments["style"].values, arguments["style"].description) == (("pirate", "formal"), "How to greet")
    assert arguments["name"].required is False
    assert arguments["loud"].type == "boolean"


def test_dotprompt_variant_file_name_keeps_the_variant():
    spec, _ = load("Hello {{who}}", "greeting.formal.prompt")
    assert spec.name == "greeting.formal"
    assert [(a.name, a.required) for a in spec.arguments] == [("who", False)]  # no schema: optional


def test_dotprompt_json_schema_input_with_required_pattern_and_bounds():
    spec, _ = load(
        """
        ---
        input:
          schema:
            type: object
            properties:
              ticket: {type: string, pattern: "^[A-Z]+-[0-9]+$", description: The ticket}
              points: {type: integer, minimum: 1, maximum: 8, default: 2}
            required: [ticket]
        ---
        {{ticket}} is worth {{points}}.
        """
    )
    ticket, points = spec.arguments
    assert (ticket.required, ticket.pattern, ticket.description) == (True, "^[A-Z]+-[0-9]+$", "The ticket")
    assert (points.type, points.minimum, points.maximum, points.default, points.required) == (
        "integer",
        1,
        8,
        "2",
        False,
    )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("{{#each items}}x{{/each}}", 1, "'{{#each items}}': this server serves variables"),
        ("{{> header}}", 1, "'{{> header}}': this server serves variables"),
        ("a\n{{history}}", 2, "{{history}} needs a conversation"),
        ('{{media url="x.png"}}', 1, "{{media}} needs media parts"),
        ("{{user.name}}", 1, "'{{user.name}}' is not a variable"),
        ("{{#if a}}x", 1, "{{#if a}} is never closed"),
        ("{{/if}}", 1, "{{/if}} closes no open {{#if}}"),
        ('{{#if a}}{{role "user"}}{{/if}}', 1, "{{role}} inside a condition"),
        ('{{role "tool"}}x', 1, "role 'tool' is not one of user, model, system"),
        ("{{ unclosed", 1, "'{{' is never closed"),
    ],
)
def test_dotprompt_constructs_outside_the_subset_are_reported_with_their_line(text, line, message):
    with pytest.raises(FormatError) as caught:
        load(text)
    assert message in caught.value.message
    assert caught.value.line == line


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("tags(array): string", "argument 'tags' is an array: MCP prompt arguments are single strings"),
        ("address:\n      street: string", "argument 'address' is a structure"),
        ("n: date", "argument 'n' has type 'date'"),
        ("n(enum): [a, b]\n  default:\n    n: c", "default 'c' of argument 'n' is not one of its values (a, b)"),
    ],
)
def test_dotprompt_schemas_that_cannot_be_prompt_arguments_are_reported(schema, message):
    text = f"---\ninput:\n  schema:\n    {schema}\n---\n{{{{n}}}}\n"
    with pytest.raises(FormatError) as caught:
        load_file_text(text, root="/library", path="p.prompt")
    assert message in caught.value.message


def test_dotprompt_schema_must_declare_every_variable():
    with pytest.raises(FormatError, match="uses other but input.schema does not declare it"):
        load("---\ninput:\n  schema:\n    a: string\n---\n{{a}} {{other}}")


def test_dotprompt_partials_are_not_prompts_and_markdown_still_is(tmp_path):
    write(tmp_path, "_header.prompt", "A partial: {{x}}")
    write(tmp_path, "greet.prompt", "Hello {{who}}")
    write(tmp_path, "plain.md", "Plain {{thing}}")
    library = Library([tmp_path])
    library.scan()
    assert {name: spec.format for name, spec in library.prompts.items()} == {"greet": "dotprompt", "plain": "plainmcp"}
    assert library.problems == []


# ------------------------------------------------------------------------------------ the protocol


@pytest.fixture
def library(tmp_path):
    write(tmp_path, "greeting.prompt", GREETING)
    return tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_dotprompt_renders_roles_conditions_and_defaults(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        (listed,) = await client.list_all_prompts()
        quiet = await client.get_prompt("greeting")
        loud = await client.get_prompt(
            "greeting", {"name": "Ada", "style": "pirate", "loud": "true", "location": "sea"}
        )
    assert [argument["name"] for argument in listed["arguments"]] == ["location", "style", "name", "loud"]
    assert [message["role"] for message in quiet["messages"]] == ["user", "user", "assistant"]
    assert text_of(quiet["messages"][0]) == "You are the world's most welcoming assistant, working at a restaurant."
    assert text_of(quiet["messages"][1]) == "Greet a guest.\nSpeak softly."
    assert text_of(loud["messages"][1]) == "Greet a guest named Ada in the style of pirate.\nSHOUT."
    assert text_of(loud["messages"][2]) == "Ahoy!"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_dotprompt_typed_arguments_are_enforced_with_invalid_params(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        with pytest.raises(MCPError) as wrong_enum:
            await client.get_prompt("greeting", {"style": "rude"})
        with pytest.raises(MCPError) as wrong_boolean:
            await client.get_prompt("greeting", {"loud": "very"})
        completed = await client.complete({"type": "ref/prompt", "name": "greeting"}, "style", "p")
    assert wrong_enum.value.code == wrong_boolean.value.code == -32602
    assert (
        wrong_enum.value.message == "Argument 'style' of prompt 'greeting' must be one of: pirate, formal (got 'rude')"
    )
    assert wrong_boolean.value.message == "Argument 'loud' of prompt 'greeting' must be true or false (got 'very')"
    assert completed["values"] == ["pirate"]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_readme_dotprompt_example_is_served(tmp_path, era):
    """The README's Dotprompt example, saved as greeting.prompt, renders and refuses as the README says."""
    readme = (Path(__file__).parents[3] / "servers/prompts/docs/formats.md").read_text(encoding="utf-8")
    example = readme.split("```handlebars\n", 1)[1].split("```", 1)[0]
    (tmp_path / "greeting.prompt").write_text(example, encoding="utf-8")
    async with connect_in_memory(server_over(tmp_path), protocol_version=era) as client:
        result = await client.get_prompt("greeting", {"name": "Ada"})
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("greeting", {"style": "rude"})
    assert [message["role"] for message in result["messages"]] == ["user", "user"]
    assert text_of(result["messages"][1]) == "Greet a guest named Ada."
    assert caught.value.code == -32602
    assert caught.value.message == "Argument 'style' of prompt 'greeting' must be one of: pirate, formal (got 'rude')"


def test_dotprompt_escapes_comments_triple_stash_and_whitespace_control():
    spec, _ = load("Use \\{{literal}} and {{{raw}}}.{{!-- gone --}}  {{~x~}}  !")
    (message,) = render(spec.messages, {"raw": "<b>", "x": "X"}, None)
    assert message["content"]["text"] == "Use {{literal}} and <b>.X!"
    assert [argument.name for argument in spec.arguments] == ["raw", "x"]


class CountingText(str):
    """A body that tallies the characters its ``count`` scans: line numbers for thousands of
    placeholders must cost one pass over the text, not one pass per placeholder (a 256 KiB file of
    ``{{a}}`` took seconds to compile when each placeholder's line was counted from the start)."""

    scanned = 0

    def count(self, sub, start=0, end=None):  # type: ignore[override]
        end = len(self) if end is None else end
        CountingText.scanned += max(0, end - start)
        return str.count(self, sub, start, end)


@pytest.mark.parametrize("compile_body", ["native", "dotprompt"])
def test_line_numbers_of_many_placeholders_cost_one_pass(compile_body):
    body = CountingText("{{a}}\n" * 5_000 + "{{#each}}" if compile_body == "dotprompt" else "{{a}}\n" * 5_000 + "{{")
    CountingText.scanned = 0
    with pytest.raises(FormatError) as caught:
        if compile_body == "native":
            template.compile_native(body, 1)
        else:
            dotprompt._compile(body, 1, {})
    assert caught.value.line == 5_001  # the line is still right...
    assert CountingText.scanned <= len(body)  # ...and each character was counted once
