"""The suite's ``sep-2640-client-*`` scenarios: a host using a server's skills (SEP-2640).

Played as a host does, through the public API only (``connect_http`` and
:class:`plainmcp.skills_client.SkillsClient`): list the skills and read nothing
(``-no-prefetch``); or list, then load the first skill and, once its ``SKILL.md`` is verified, read
its other files (``-verify-digest``, ``-verify-size``, ``-verify-frontmatter``, whose scenario
servers tamper with ``SKILL.md``: the host must refuse it and read nothing further). A refusal is
the behaviour asked for, so it is logged and the run ends normally.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from plainmcp.http_client import connect_http
from plainmcp.skills import EXTENSION, VerificationError
from plainmcp.skills_client import SkillsClient

from . import protocol_version

logger = logging.getLogger(__name__)

#: Seconds one scenario may take in the client (the suite's own --timeout bounds the process).
SCENARIO_TIMEOUT = 20.0
LOADING = ("sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter")


async def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    if scenario != "sep-2640-client-no-prefetch" and scenario not in LOADING:
        raise SystemExit(f"conformance client: no skills scenario {scenario!r}")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect_http(url, protocol_version=protocol_version(), extensions={EXTENSION: {}}) as client:
            logger.info("connected at protocol version %s", client.protocol_version)
            skills = SkillsClient(client)
            entries = await skills.list_skills()
            logger.info("skills: %s", [entry.uri for entry in entries])
            if scenario in LOADING and entries:
                await load_and_read(skills, entries[0])


async def load_and_read(skills: SkillsClient, entry: Any) -> None:
    """Load ``entry``'s skill and read each of its other files, as a model following it would."""
    try:
        loaded = await skills.load(entry)
    except VerificationError as refused:
        logger.info("skill refused: %s", refused)
        return
    for file in entry.files or ():
        if file.uri != entry.uri:
            data = await skills.read_file(loaded, file.uri)
            logger.info("read %s: %d bytes, verified", file.uri, len(data))
