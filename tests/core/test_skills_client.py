"""The host side of the skills extension (:mod:`plainmcp.skills_client`, SEP-2640, issue 29.3) and the
core hook it rides on (:meth:`plainmcp.Server.add_method`), in both eras, against a real server
whose skill content a test can tamper with: a refused skill is never returned and nothing after it
is read; listing reads nothing; unlisted files are refused without a read."""

from __future__ import annotations

import base64

import pytest
from plainmcp import MCPError, Resource, Server
from plainmcp import skills as rules
from plainmcp.skills import EXTENSION, SkillError, VerificationError, check_entry, digest, parse_frontmatter
from plainmcp.skills_client import SkillsClient
from plainmcp.testing import connect_in_memory

ERAS = ["2025-11-25", "2026-07-28"]
URI = "skill://pdf-processing/SKILL.md"
FORMS = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"
FORMS_MD = "Supporting content.\n"


class SkillServer:
    """A server declaring the extension over ``files`` (uri -> served content) and the entries it
    lists (by default the honest entry of ``files``); it counts every read."""

    def __init__(self, *, declare: bool = True, settings: dict | None = None) -> None:
        self.files: dict[str, str | bytes] = {URI: SKILL_MD, FORMS: FORMS_MD}
        self.reads: list[str] = []
        self.entries: list[dict] | None = None
        self.pages: list[tuple[list[dict], str | None]] | None = None
        self.server = Server("skills-test", "1.0")
        for uri in self.files:
            self.server.add_resource(Resource(uri, uri.rpartition("/")[2], self.read, mime_type="text/markdown"))
        if declare:
            self.server.declare_extension(EXTENSION, settings)
            self.server.add_method(rules.SKILLS_LIST, self.skills_list, cacheable=True)
            self.server.add_method(rules.SKILLS_GET, self.skills_get, cacheable=True)

    def honest(self) -> dict:
        resources = []
        for uri, content in self.files.items():
            data = content.encode() if isinstance(content, str) else content
            resources.append({"uri": uri, "digest": digest(data), "size": len(data)})
        return {"uri": URI, "frontmatter": parse_frontmatter(SKILL_MD), "resources": resources}

    async def read(self, ctx, uri):
        self.reads.append(uri)
        return self.files[uri]

    async def skills_list(self, ctx, params):
        if self.pages is not None:
            index = int(params.get("cursor") or 0)
            skills, next_cursor = self.pages[index]
            return {"skills": skills, **({"nextCursor": next_cursor} if next_cursor else {})}
        return {"skills": self.entries if self.entries is not None else [self.honest()]}

    async def skills_get(self, ctx, params):
        if params.get("uri") != URI:
            raise MCPError(-32602, f"No skill is served at {params.get('uri')}")
        return {"skill": self.honest()}


# ------------------------------------------------------------------------------------- the hook


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_add_method_serves_an_extension_method_in_both_eras(era):
    fixture = SkillServer()
    async with connect_in_memory(fixture.server, protocol_version=era) as client:
        listed = await client.request("skills/list", {})
        with pytest.raises(MCPError) as unknown:
            await client.request("skills/nothing", {})
    assert listed["skills"] == [fixture.honest()]
    assert unknown.value.code == -32601
    if era == "2026-07-28":
        assert listed["resultType"] == "complete" and listed["ttlMs"] == 60_000 and listed["cacheScope"] == "private"
    else:
        assert "ttlMs" not in listed


def test_add_method_refuses_a_base_protocol_method():
    server = Server("x", "1")

    async def handler(ctx, params):
        return {}

    with pytest.raises(ValueError, match="base protocol"):
        server.add_method("tools/call", handler)


# --------------------------------------------------------------------------------- the host side


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_client_lists_without_reading_and_loads_verified(era):
    fixture = SkillServer()
    async with connect_in_memory(fixture.server, protocol_version=era) as client:
        skills = SkillsClient(client)
        [entry] = await skills.list_skills()
        assert fixture.reads == []  # no prefetch: listing reads no file
        loaded = await skills.load(entry)
        forms = await skills.read_file(loaded, "references/FORMS.md")
        again = await skills.read_file(loaded, FORMS)
        got = await skills.get_skill(URI)
    assert entry.name == "pdf-processing" and entry.description.startswith("Extract")
    assert loaded.text == SKILL_MD
    assert forms == again == FORMS_MD.encode()
    assert fixture.reads == [URI, FORMS]  # the second read of FORMS.md came from the held copy
    assert got == entry


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (SKILL_MD.replace("Skill body.", "Evil body!!"), "does not match the entry's digest"),
        (SKILL_MD + "extra bytes the entry did not account for\n", "bytes read, the entry says"),
    ],
)
async def test_skills_client_refuses_a_skill_md_that_is_not_the_listed_bytes(era, tamper, message):
    fixture = SkillServer()
    fixture.entries = [fixture.honest()]
    fixture.files[URI] = tamper
    async with connect_in_memory(fixture.server, protocol_version=era) as client:
        skills = SkillsClient(client)
        [entry] = await skills.list_skills()
        with pytest.raises(VerificationError, match=message):
            await skills.load(entry)
    assert fixture.reads == [URI]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_client_refuses_front_matter_that_differs_from_the_entry(era):
    fixture = SkillServer()
    fixture.files[URI] = SKILL_MD.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials")
    entry = fixture.honest()  # digest and size of the tampered file: only the front matter tells
    entry["frontmatter"] = parse_frontmatter(SKILL_MD)
    fixture.entries = [entry]
    async with connect_in_memory(fixture.server, protocol_version=era) as client:
        skills = SkillsClient(client)
        [listed] = await skills.list_skills()
        with pytest.raises(VerificationError, match="front matter differs from the entry's in description"):
            await skills.load(listed)
    assert fixture.reads == [URI]


@pytest.mark.anyio
async def test_skills_client_refuses_an_unlisted_file_without_reading_it():
    fixture = SkillServer()
    entry = fixture.honest()
    entry["resources"] = entry["resources"][:1]  # FORMS.md is served, but not in the entry
    fixture.entries = [entry]
    async with connect_in_memory(fixture.server, protocol_version="2026-07-28") as client:
        skills = SkillsClient(client)
        [listed] = await skills.list_skills()
        loaded = await skills.load(listed)
        with pytest.raises(VerificationError, match="not a file of the skill's entry"):
            await skills.read_file(loaded, "references/FORMS.md")
        for outside in ("../other/SKILL.md", "/etc/passwd", "skill://pdf-processing/../other/SKILL.md"):
            with pytest.raises(SkillError):
                await skills.read_file(loaded, outside)
    assert fixture.reads == [URI]


@pytest.mark.anyio
async def test_skills_client_verifies_a_binary_file_read_as_a_blob():
    fixture = SkillServer()
    fixture.files[FORMS] = b"\x89PNG\r\n\x00\xff"
    async with connect_in_memory(fixture.server, protocol_version="2026-07-28") as client:
        skills = SkillsClient(client)
        [entry] = await skills.list_skills()
        loaded = await skills.load(entry)
        data = await skills.read_file(loaded, FORMS)
        raw = await client.read_resource(FORMS)
    assert data == b"\x89PNG\r\n\x00\xff"
    assert base64.b64decode(raw["contents"][0]["blob"]) == data


@pytest.mark.anyio
async def test_skills_client_leaves_out_entries_that_break_the_rules():
    fixture = SkillServer()
    good = fixture.honest()
    wrong_name = {**good, "uri": "skill://other/SKILL.md"}
    no_resources = {key: value for key, value in good.items() if key != "resources"}
    bad_digest = {**good, "resources": [{**good["resources"][0], "digest": "md5:abc"}, good["resources"][1]]}
    outside = {
        **good,
        "resources": [
            *good["resources"],
            {"uri": "skill://x/a.md", "digest": good["resources"][0]["digest"], "size": 1},
        ],
    }
    no_skill_md = {**good, "resources": good["resources"][1:]}
    twice = {**good, "resources": [*good["resources"], good["resources"][1]]}
    fixture.entries = [wrong_name, no_resources, bad_digest, outside, no_skill_md, twice, "junk", good]
    async with connect_in_memory(fixture.server, protocol_version="2025-11-25") as client:
        skills = SkillsClient(client)
        listed = await skills.list_skills()
    assert [entry.uri for entry in listed] == [URI]
    assert len(skills.rejected) == 7
    for reason in (
        "does not end in /pdf-processing/SKILL.md",
        "resources must be",
        "digest",
        "outside the skill's directory",
    ):
        assert any(reason in line for line in skills.rejected), (reason, skills.rejected)
    assert fixture.reads == []


@pytest.mark.anyio
async def test_skills_client_refuses_a_skill_over_the_limits_before_any_read():
    fixture = SkillServer()
    entry = fixture.honest()
    entry["resources"] = [entry["resources"][0]] + [
        {"uri": f"skill://pdf-processing/data/{index}.txt", "digest": digest(b"x"), "size": 1} for index in range(512)
    ]
    big = fixture.honest()
    big["resources"][1]["size"] = rules.MAX_TOTAL_BYTES
    async with connect_in_memory(fixture.server, protocol_version="2026-07-28") as client:
        skills = SkillsClient(client)
        with pytest.raises(SkillError, match="513 files"):
            await skills.load(check_entry(entry))
        with pytest.raises(SkillError, match="more than the 16777216"):
            await skills.load(check_entry(big))
    assert fixture.reads == []


@pytest.mark.anyio
async def test_skills_client_stops_at_a_repeated_cursor():
    fixture = SkillServer()
    fixture.pages = [([fixture.honest()], "1"), ([], "1")]
    async with connect_in_memory(fixture.server, protocol_version="2026-07-28") as client:
        listed = await SkillsClient(client).list_skills()
    assert [entry.uri for entry in listed] == [URI]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_skills_client_needs_the_servers_declaration(era):
    fixture = SkillServer(declare=False)
    async with connect_in_memory(fixture.server, protocol_version=era) as client:
        skills = SkillsClient(client)
        assert not skills.supported
        with pytest.raises(SkillError, match="does not declare"):
            await skills.list_skills()
        with pytest.raises(SkillError, match="does not offer resources/directory/read"):
            await skills.read_directory("skill://pdf-processing")


# ------------------------------------------------------------------------------------ the rules


def test_parse_frontmatter_keeps_dates_as_text_and_refuses_aliases_and_bombs():
    assert parse_frontmatter("\ufeff---\nname: a\ndescription: b\nwhen: 2025-01-31\n---\nbody") == {
        "name": "a",
        "description": "b",
        "when": "2025-01-31",
    }
    refused = {
        "no block": "no front matter here",
        "alias": "---\na: &x [1]\nb: *x\n---\n",
        "deep": "---\na: " + "[" * 40 + "]" * 40 + "\n---\n",
        "big": "---\na: " + "x" * (rules.MAX_FRONTMATTER_BYTES + 1) + "\n---\n",
        "list": "---\n- a\n---\n",
        "not yaml": "---\na: [\n---\n",
    }
    for case, text in refused.items():
        with pytest.raises(SkillError):
            parse_frontmatter(text)
        assert case


def test_same_frontmatter_is_strict_about_types():
    assert rules.same_frontmatter({"a": 1, "b": [True]}, {"a": 1.0, "b": [True]}) == []
    assert rules.same_frontmatter({"a": True}, {"a": 1}) == ["a"]
    assert rules.same_frontmatter({"a": "1"}, {"a": 1}) == ["a"]
    assert rules.same_frontmatter({"a": {"x": 1}}, {"a": {"x": 1}, "b": None}) == ["b"]


@pytest.mark.anyio
async def test_skills_client_loads_a_dynamic_skill_with_its_front_matter_still_checked():
    fixture = SkillServer()
    dynamic = {**fixture.honest(), "resources": "dynamic"}
    tampered = {**dynamic, "frontmatter": {**dynamic["frontmatter"], "description": "Something else"}}
    fixture.entries = [dynamic]
    async with connect_in_memory(fixture.server, protocol_version="2026-07-28") as client:
        skills = SkillsClient(client)
        [entry] = await skills.list_skills()
        loaded = await skills.load(entry)
        forms = await skills.read_file(loaded, "references/FORMS.md")  # no manifest: any file of the skill
        with pytest.raises(VerificationError, match="differs"):
            await skills.load(check_entry(tampered))
    assert entry.files is None
    assert forms == FORMS_MD.encode()
    assert loaded.read_bytes == len(SKILL_MD) + len(FORMS_MD)
