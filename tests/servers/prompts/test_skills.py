"""Agent Skills folders (``SKILL.md``, issue 21): each skill a prompt and a set of resources (its
instructions and every other file of its folder), read path-safely, in both eras."""

from __future__ import annotations

import base64
import os

import jsonschema
import pytest
from plainmcp import MCPError
from plainmcp.testing import connect_in_memory
from plainmcp_prompts import library as library_module
from plainmcp_prompts.library import MAX_SKILL_FILES, Library
from plainmcp_prompts.tools import LIST_OUTPUT

from .support import MODERN, server_over, text_of, write

ERAS = ["2025-11-25", MODERN]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"

SKILL = """
    ---
    name: pdf-forms
    description: Fill PDF forms. Use when the user asks to fill or inspect a PDF form.
    license: Apache-2.0
    allowed-tools: Bash(python:*)
    metadata:
      version: "1.2"
    ---
    # PDF forms

    Read references/fields.md first, then run scripts/fill.py. {{this is not a template}}
    """


@pytest.fixture
def library(tmp_path):
    write(tmp_path, "skills/pdf-forms/SKILL.md", SKILL)
    write(tmp_path, "skills/pdf-forms/references/fields.md", "# Fields\n\nName, date.\n")
    write(tmp_path, "skills/pdf-forms/scripts/fill.py", "print('filled')\n")
    (tmp_path / "skills/pdf-forms/assets").mkdir()
    (tmp_path / "skills/pdf-forms/assets/logo.png").write_bytes(PNG)
    write(tmp_path, "skills/pdf-forms/examples/nested.md", "Not a prompt: a file of the skill {{x}}")
    write(tmp_path, "greet.md", "Hello {{who}}")
    return tmp_path


def test_skill_folder_is_one_prompt_with_its_files(library):
    lib = Library([library])
    lib.scan()
    assert lib.problems == []
    assert sorted(lib.prompts) == ["greet", "pdf-forms"]
    skill = lib.prompts["pdf-forms"]
    assert skill.format == "skill"
    assert skill.description == "Fill PDF forms. Use when the user asks to fill or inspect a PDF form."
    assert skill.files == ("assets/logo.png", "examples/nested.md", "references/fields.md", "scripts/fill.py")
    assert [argument.name for argument in skill.arguments] == ["request"]


def test_skill_inside_a_skill_is_a_file_of_the_outer_one(tmp_path):
    write(tmp_path, "outer/SKILL.md", "---\nname: outer\ndescription: Outer\n---\nOuter steps.")
    write(tmp_path, "outer/inner/SKILL.md", "---\nname: inner\ndescription: Inner\n---\nInner steps.")
    lib = Library([tmp_path])
    lib.scan()
    assert list(lib.prompts) == ["outer"]
    assert lib.prompts["outer"].files == ("inner/SKILL.md",)


@pytest.mark.parametrize(
    ("front", "folder", "warning"),
    [
        ("description: D", "tidy", "a skill needs a name"),
        ("name: other\ndescription: D", "tidy", "name 'other' differs from the skill's folder name 'tidy'"),
        ("name: Tidy_Up\ndescription: D", "Tidy_Up", "breaks the Agent Skills rule"),
        ("name: tidy", "tidy", "a skill needs a description"),
    ],
)
def test_skill_front_matter_outside_the_specification_is_served_with_a_warning(tmp_path, front, folder, warning):
    write(tmp_path, f"{folder}/SKILL.md", f"---\n{front}\n---\nSteps.")
    lib = Library([tmp_path])
    lib.scan()
    assert len(lib.prompts) == 1
    assert any(warning in problem.message for problem in lib.problems), lib.problems


def test_skill_with_claude_code_arguments_substitutes_them(tmp_path):
    write(
        tmp_path,
        "fix-issue/SKILL.md",
        "---\nname: fix-issue\ndescription: Fix an issue\n---\nFix issue $ARGUMENTS now.",
    )
    lib = Library([tmp_path])
    lib.scan()
    assert [argument.name for argument in lib.prompts["fix-issue"].arguments] == ["arguments"]


def test_a_file_added_to_a_skill_is_a_change(library):
    lib = Library([library])
    lib.scan()
    write(library, "skills/pdf-forms/references/more.md", "More.")
    assert lib.scan() is True
    assert "references/more.md" in lib.prompts["pdf-forms"].files
    assert lib.scan() is False


def test_files_of_a_skill_are_bounded(tmp_path):
    write(tmp_path, "big/SKILL.md", "---\nname: big\ndescription: Big\n---\nSteps.")
    for index in range(MAX_SKILL_FILES + 5):
        write(tmp_path, f"big/data/{index:04}.txt", "x")
    lib = Library([tmp_path])
    lib.scan()
    assert len(lib.prompts["big"].files) == MAX_SKILL_FILES
    assert any(f"more than {MAX_SKILL_FILES} files in a skill" in problem.message for problem in lib.problems)


# ------------------------------------------------------------------------------------ the protocol


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skill_is_served_as_a_prompt_of_its_instructions_and_the_request(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        prompts = {prompt["name"]: prompt for prompt in await client.list_all_prompts()}
        bare = await client.get_prompt("pdf-forms")
        asked = await client.get_prompt("pdf-forms", {"request": "Fill in form.pdf for Ada"})
    assert prompts["pdf-forms"]["arguments"] == [
        {"name": "request", "description": "What you want done with this skill."}
    ]
    assert len(bare["messages"]) == 1
    instructions = text_of(bare["messages"][0])
    assert instructions.startswith("# PDF forms\n\nRead references/fields.md first")
    assert "{{this is not a template}}" in instructions  # a skill's text is never a template
    assert [text_of(message) for message in asked["messages"]] == [instructions, "Fill in form.pdf for Ada"]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skill_files_are_resources_text_and_binary(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        listed = {resource["uri"]: resource for resource in await client.list_all_resources()}
        instructions = await client.read_resource("skill://pdf-forms/SKILL.md")
        reference = await client.read_resource("skill://pdf-forms/references/fields.md")
        logo = await client.read_resource("skill://pdf-forms/assets/logo.png")
    skill_uris = sorted(uri for uri in listed if uri.startswith("skill://"))
    assert skill_uris == [
        "skill://pdf-forms/SKILL.md",
        "skill://pdf-forms/assets/logo.png",
        "skill://pdf-forms/examples/nested.md",
        "skill://pdf-forms/references/fields.md",
        "skill://pdf-forms/scripts/fill.py",
    ]
    assert listed["skill://pdf-forms/SKILL.md"]["description"].startswith("Fill PDF forms.")
    assert listed["skill://pdf-forms/assets/logo.png"]["mimeType"] == "image/png"
    assert instructions["contents"][0]["text"] == (library / "skills/pdf-forms/SKILL.md").read_text()
    assert reference["contents"][0] == {
        "uri": "skill://pdf-forms/references/fields.md",
        "mimeType": "text/markdown",
        "text": "# Fields\n\nName, date.\n",
    }
    assert base64.b64decode(logo["contents"][0]["blob"]) == PNG


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-forms/../../greet.md",
        "skill://pdf-forms/%2E%2E/%2E%2E/greet.md",
        "skill://pdf-forms/references/missing.md",
        "skill://greet/SKILL.md",  # a prompt, not a skill
        "skill://nobody/SKILL.md",
    ],
)
async def test_skill_resources_outside_the_listing_are_not_found(library, era, uri):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert caught.value.code == (-32602 if era == MODERN else -32002)


@pytest.mark.anyio
async def test_skill_file_swapped_for_a_link_out_is_refused_without_host_paths(library, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("the secret", encoding="utf-8")
    async with connect_in_memory(server_over(library)) as client:
        target = library / "skills/pdf-forms/scripts/fill.py"
        target.unlink()  # after the scan: the listing still names it
        os.symlink(outside, target)
        with pytest.raises(MCPError) as caught:
            await client.read_resource("skill://pdf-forms/scripts/fill.py")
    assert caught.value.code == -32603
    assert caught.value.message == "Skill 'pdf-forms': file 'scripts/fill.py' is outside the library directory"
    assert str(library) not in caught.value.message and "the secret" not in caught.value.message


def test_files_of_all_skills_of_a_directory_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(library_module, "MAX_SKILL_FILES_TOTAL", 6)
    for skill in ("a", "b", "c"):
        write(tmp_path, f"{skill}/SKILL.md", f"---\nname: {skill}\ndescription: {skill}\n---\nSteps.")
        for index in range(3):
            write(tmp_path, f"{skill}/{index}.txt", "x")
    lib = Library([tmp_path])
    lib.scan()
    assert sorted(lib.prompts) == ["a", "b", "c"]  # every skill is still served...
    assert [len(lib.prompts[name].files) for name in "abc"] == [3, 3, 0]  # ...its files up to the bound
    assert sum("more than 6 files in skills" in problem.message for problem in lib.problems) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_list_prompts_tool_shows_each_format_within_its_output_schema(library, era):
    write(library, "hello.prompt", "---\ninput:\n  schema:\n    loud?: boolean\n---\nHello{{#if loud}}!{{/if}}")
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        result = await client.call_tool("list_prompts", {})
    assert result.get("isError") is not True
    jsonschema.validate(result["structuredContent"], LIST_OUTPUT)  # the schema clients were given
    formats = {entry["name"]: entry["format"] for entry in result["structuredContent"]["prompts"]}
    assert formats == {"greet": "plainmcp", "hello": "dotprompt", "pdf-forms": "skill"}
    hello = next(entry for entry in result["structuredContent"]["prompts"] if entry["name"] == "hello")
    assert hello["arguments"] == [{"name": "loud", "required": False, "type": "boolean"}]
