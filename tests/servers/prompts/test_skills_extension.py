"""The skills extension on the prompts server (``io.modelcontextprotocol/skills``, SEP-2640, issue 29.3):
entries with digests of the real files on disk, ``skills/get``, directory reads, pagination, caching
hints, hostile skill folders, in both eras; and the installed server as a real stdio process."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys

import pytest
import yaml
from plainmcp import MCPError
from plainmcp.skills import EXTENSION
from plainmcp.skills_client import SkillsClient
from plainmcp.testing import connect_in_memory

from .stdio_process import StdioServer
from .support import MODERN, dir_args, server_over, write

ERAS = ["2025-11-25", MODERN]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
SKILL = """
    ---
    name: pdf-processing
    description: Extract, fill, and assemble PDF documents
    license: Apache-2.0
    released: 2025-01-31
    metadata:
      version: "2.1.0"
      reviewed: true
    ---
    # PDF processing

    Read references/FORMS.md, then pick a template from templates/.
    """


@pytest.fixture
def library(tmp_path):
    root = tmp_path / "lib"
    write(root, "pdf-processing/SKILL.md", SKILL)
    write(root, "pdf-processing/references/FORMS.md", "# Forms\n\nName, date.\n")
    write(root, "pdf-processing/templates/invoice.md", "Invoice for {{who}}\n")
    write(root, "pdf-processing/templates/regional/eu-invoice.md", "EU invoice\n")
    (root / "pdf-processing/assets").mkdir()
    (root / "pdf-processing/assets/logo.png").write_bytes(PNG)
    write(root, "greet.md", "Hello {{who}}")
    return root


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def on_disk(root, skill: str) -> list[dict]:
    """The manifest the files on disk call for: SKILL.md first, then every other file, sorted."""
    folder = root / skill
    paths = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "SKILL.md")
    manifest = []
    for relative in ["SKILL.md", *paths]:
        data = (folder / relative).read_bytes()
        manifest.append({"uri": f"skill://{skill}/{relative}", "digest": sha(data), "size": len(data)})
    return manifest


# ---------------------------------------------------------------------------------- declaration


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_extension_is_declared_with_directory_read_beside_resources(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        capabilities = client.server_capabilities
    assert capabilities["extensions"][EXTENSION] == {"directoryRead": True}
    assert "resources" in capabilities and "prompts" in capabilities


# -------------------------------------------------------------------------------------- entries


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_list_entry_is_the_front_matter_and_the_files_on_disk(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        result = await client.request("skills/list", {})
    assert [entry["uri"] for entry in result["skills"]] == ["skill://pdf-processing/SKILL.md"]
    entry = result["skills"][0]
    text = (library / "pdf-processing/SKILL.md").read_text()
    expected = yaml.safe_load(text.split("---\n")[1])
    expected["released"] = "2025-01-31"  # a YAML timestamp stays the text written (JSON has no dates)
    assert entry["frontmatter"] == expected
    assert entry["resources"] == on_disk(library, "pdf-processing")
    assert "nextCursor" not in result
    if era == MODERN:
        assert result["resultType"] == "complete"
        assert result["ttlMs"] == 60_000 and result["cacheScope"] == "private"
    else:
        assert "ttlMs" not in result


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_get_answers_the_listed_entry_and_32602_otherwise(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        listed = (await client.request("skills/list", {}))["skills"][0]
        got = await client.request("skills/get", {"uri": "skill://pdf-processing/SKILL.md"})
        errors = {}
        for uri in ("skill://nobody/SKILL.md", "skill://greet/SKILL.md", "skill://pdf-processing", 7):
            with pytest.raises(MCPError) as caught:
                await client.request("skills/get", {"uri": uri})
            errors[str(uri)] = caught.value
    assert got["skill"] == listed
    assert "nextCursor" not in got
    assert all(error.code == -32602 for error in errors.values())
    assert "No skill is served at skill://nobody/SKILL.md" in errors["skill://nobody/SKILL.md"].message
    if era == MODERN:
        assert got["ttlMs"] == 60_000 and got["cacheScope"] == "private"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skill_files_read_back_verify_against_the_entry_text_and_binary(library, era):
    """The core's host side and this server agree on every byte: each file, the PNG as a blob."""
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        skills = SkillsClient(client)
        [entry] = await skills.list_skills()
        loaded = await skills.load(entry)
        read = {file.uri: await skills.read_file(loaded, file.uri) for file in entry.files if file.uri != entry.uri}
        reference = await skills.read_file(loaded, "references/FORMS.md")
    assert loaded.text == (library / "pdf-processing/SKILL.md").read_text()
    assert read["skill://pdf-processing/assets/logo.png"] == PNG
    assert reference == b"# Forms\n\nName, date.\n"
    assert len(read) == 4


@pytest.mark.anyio
async def test_skills_list_digest_follows_a_changed_file(library):
    server = server_over(library)
    async with connect_in_memory(server, protocol_version=MODERN) as client:
        before = (await client.request("skills/list", {}))["skills"][0]["resources"]
        (library / "pdf-processing/references/FORMS.md").write_text("# Forms, second edition\n")
        after = (await client.request("skills/list", {}))["skills"][0]["resources"]
    assert before != after
    assert after == on_disk(library, "pdf-processing")


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_list_pages_keep_each_entry_whole_and_refuse_a_bad_cursor(tmp_path, era):
    for index in range(63):
        write(
            tmp_path, f"s{index:02}/SKILL.md", f"---\nname: s{index:02}\ndescription: Skill {index}\n---\nDo {index}."
        )
        write(tmp_path, f"s{index:02}/notes.md", f"Notes {index}")
    async with connect_in_memory(server_over(tmp_path), protocol_version=era) as client:
        first = await client.request("skills/list", {})
        second = await client.request("skills/list", {"cursor": first["nextCursor"]})
        with pytest.raises(MCPError) as bad:
            await client.request("skills/list", {"cursor": "not-a-cursor"})
        listed = await SkillsClient(client).list_skills()
    assert len(first["skills"]) == 50 and len(second["skills"]) == 13 and "nextCursor" not in second
    uris = [entry["uri"] for entry in first["skills"] + second["skills"]]
    assert len(set(uris)) == 63
    assert all(len(entry["resources"]) == 2 for entry in first["skills"] + second["skills"])
    assert bad.value.code == -32602
    assert [entry.uri for entry in listed] == uris


# ---------------------------------------------------------------------------------- directories


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_directory_read_lists_direct_children_with_folders_as_directories(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        root = await client.request("resources/directory/read", {"uri": "skill://pdf-processing"})
        templates = await client.request("resources/directory/read", {"uri": "skill://pdf-processing/templates"})
        through_client = await SkillsClient(client).read_directory("skill://pdf-processing/templates/regional")
    assert root["resources"] == [
        {"uri": "skill://pdf-processing/assets", "name": "assets", "mimeType": "inode/directory"},
        {"uri": "skill://pdf-processing/references", "name": "references", "mimeType": "inode/directory"},
        {"uri": "skill://pdf-processing/templates", "name": "templates", "mimeType": "inode/directory"},
        {"uri": "skill://pdf-processing/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
    ]
    assert templates["resources"] == [
        {"uri": "skill://pdf-processing/templates/regional", "name": "regional", "mimeType": "inode/directory"},
        {"uri": "skill://pdf-processing/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown"},
    ]
    assert through_client == [
        {
            "uri": "skill://pdf-processing/templates/regional/eu-invoice.md",
            "name": "eu-invoice.md",
            "mimeType": "text/markdown",
        }
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_directory_read_of_a_file_or_unknown_directory_is_32602(library, era):
    async with connect_in_memory(server_over(library), protocol_version=era) as client:
        messages = {}
        for uri in (
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/templates/invoice.md",
            "skill://pdf-processing/nothing",
            "skill://greet",
            "prompts://source/greet",
        ):
            with pytest.raises(MCPError) as caught:
                await client.request("resources/directory/read", {"uri": uri})
            assert caught.value.code == -32602, uri
            messages[uri] = caught.value.message
    assert messages["skill://pdf-processing/SKILL.md"] == "skill://pdf-processing/SKILL.md is not a directory resource"
    assert messages["skill://pdf-processing/nothing"] == "skill://pdf-processing/nothing does not exist"


# -------------------------------------------------------------------------------- hostile folders


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_breaking_the_rules_stay_prompts_and_are_left_out_with_a_log_line(tmp_path, era, caplog):
    write(tmp_path, "good/SKILL.md", "---\nname: good\ndescription: Good\n---\nSteps.")
    write(tmp_path, "nodesc/SKILL.md", "---\nname: nodesc\n---\nSteps without a description.")
    write(tmp_path, "aliased/SKILL.md", "---\nname: aliased\ndescription: &d Aliased\nsummary: *d\n---\nSteps.")
    write(tmp_path, "huge/SKILL.md", "---\nname: huge\ndescription: Huge file\n---\nSteps.")
    (tmp_path / "huge/data.bin").write_bytes(b"\0" * (1024 * 1024 + 1))
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("secret")
    write(tmp_path, "linked/SKILL.md", "---\nname: linked\ndescription: Linked\n---\nSteps.")
    os.symlink(outside, tmp_path / "linked/secret.txt")
    caplog.set_level(logging.WARNING, logger="plainmcp_prompts.skill_extension")
    async with connect_in_memory(server_over(tmp_path), protocol_version=era) as client:
        listed = (await client.request("skills/list", {}))["skills"]
        prompts = {prompt["name"] for prompt in await client.list_all_prompts()}
        with pytest.raises(MCPError) as huge:
            await client.request("skills/get", {"uri": "skill://huge/SKILL.md"})
        with pytest.raises(MCPError) as nodesc:
            await client.request("skills/get", {"uri": "skill://nodesc/SKILL.md"})
        again = (await client.request("skills/list", {}))["skills"]  # still serving, and the same
    assert again == listed
    # A link leading out is a file the server refuses to read: the manifest could not be complete.
    assert [entry["uri"] for entry in listed] == ["skill://good/SKILL.md"]
    assert "secret" not in json.dumps(listed)
    assert {"good", "nodesc", "aliased", "huge", "linked"} <= prompts
    assert huge.value.code == -32602 and "larger than 1024 KiB" in huge.value.message
    assert nodesc.value.code == -32602 and "no description" in nodesc.value.message
    assert str(tmp_path) not in huge.value.message + nodesc.value.message
    logged = [record.getMessage() for record in caplog.records]
    for name, reason in (
        ("nodesc", "no description"),
        ("aliased", "alias"),
        ("huge", "larger than"),
        ("linked", "outside the library directory"),
    ):
        assert sum(f"skill {name!r}" in line and reason in line for line in logged) == 1, logged


@pytest.mark.anyio
async def test_skill_with_more_files_than_served_is_left_out(tmp_path):
    from plainmcp_prompts.library import MAX_SKILL_FILES

    write(tmp_path, "many/SKILL.md", "---\nname: many\ndescription: Many\n---\nSteps.")
    for index in range(MAX_SKILL_FILES + 1):
        write(tmp_path, f"many/data/{index:04}.txt", "x")
    write(tmp_path, "exact/SKILL.md", "---\nname: exact\ndescription: Exact\n---\nSteps.")
    for index in range(MAX_SKILL_FILES):
        write(tmp_path, f"exact/data/{index:04}.txt", "x")
    async with connect_in_memory(server_over(tmp_path), protocol_version=MODERN) as client:
        listed = (await client.request("skills/list", {}))["skills"]
        with pytest.raises(MCPError) as many:
            await client.request("skills/get", {"uri": "skill://many/SKILL.md"})
    assert [entry["uri"] for entry in listed] == ["skill://exact/SKILL.md"]
    assert len(listed[0]["resources"]) == MAX_SKILL_FILES + 1
    assert "more files than the server serves" in many.value.message


# ---------------------------------------------------------------------------- the installed server


def test_installed_server_serves_the_extension_over_stdio(library):
    """``plainmcp-prompts`` as a child process: the extension is declared, listed, got and read."""
    command = [sys.executable, "-m", "plainmcp_prompts", *dir_args(library), "--no-watch"]
    server = StdioServer(command)
    try:
        initialized = server.initialize()
        listed = server.request("skills/list", {})
        got = server.request("skills/get", {"uri": "skill://pdf-processing/SKILL.md"})
        directory = server.request("resources/directory/read", {"uri": "skill://pdf-processing/references"})
        read = server.request("resources/read", {"uri": "skill://pdf-processing/references/FORMS.md"})
    finally:
        server.close()
    assert initialized["capabilities"]["extensions"][EXTENSION] == {"directoryRead": True}
    assert listed["skills"][0]["resources"] == on_disk(library, "pdf-processing")
    assert got["skill"] == listed["skills"][0]
    assert [child["uri"] for child in directory["resources"]] == ["skill://pdf-processing/references/FORMS.md"]
    text = read["contents"][0]["text"]
    manifest = {file["uri"]: file["digest"] for file in on_disk(library, "pdf-processing")}
    assert sha(text.encode()) == manifest["skill://pdf-processing/references/FORMS.md"]
