"""The catalog: the library installed into a :class:`plainmcp.Server`, and republished on change.

:meth:`Catalog.load` reads the library and serves it, telling nobody (the first read, before any
client is served). :meth:`Catalog.install` turns the library's prompts into the server's prompts and
source resources (synchronously: no request ever sees half of an update). :meth:`Catalog.reload`
rescans the files and tells clients only what really changed: ``prompts/list_changed`` when a prompt
was added, removed or would render differently, ``resources/list_changed`` when the set of sources
changed, and ``resources/updated`` for each source whose text changed.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from plainmcp import Context, Prompt, PromptArgument, Server

from . import typed
from .completion import History, candidates
from .library import Library
from .model import ArgumentSpec, PromptSpec
from .rendering import render_prompt
from .resources import SkillFiles, Sources, skill_uri, source_uri
from .skills import FILENAME

logger = logging.getLogger(__name__)


class Catalog:
    """What ``server`` serves from ``library``; ``history`` feeds completion."""

    def __init__(self, server: Server, library: Library, history: History) -> None:
        self.server = server
        self.library = library
        self.history = history
        #: The specs installed, by name, in name order.
        self.specs: dict[str, PromptSpec] = {}
        self._sources = Sources(self.lookup)
        self._skills = SkillFiles(self.lookup)

    def lookup(self, name: str) -> PromptSpec | None:
        return self.specs.get(name)

    def load(self) -> None:
        """Scan the library and serve what it holds, publishing nothing (no client has seen an
        earlier version). It reads the files in the calling thread, so it runs where no client is
        served yet: the first step of serving (:mod:`.watch`)."""
        self.library.scan()
        self.install()

    def install(self) -> None:
        """Serve what the library holds now."""
        specs = dict(self.library.prompts)
        prompts = [LibraryPrompt(spec, self.library, self.history).prompt() for spec in specs.values()]
        resources = [self._sources.resource(spec) for spec in specs.values()]
        resources += [resource for spec in specs.values() for resource in self._skills.resources(spec)]
        for gone in self.specs.keys() - specs.keys():
            self.history.forget(gone)
        self.specs = specs
        self.server.replace_prompts(prompts)
        self.server.replace_resources(resources)

    async def reload(self) -> bool:
        """Rescan (in a worker thread: it reads files), install and publish. Returns whether
        anything served changed."""
        changed = await anyio.to_thread.run_sync(self.library.scan)
        if not changed:
            return False
        before = self.specs
        self.install()
        after = self.specs
        logger.info("prompt library changed: %d prompts", len(after))
        await self.server.notify_prompts_changed(observed=True)
        if _listing(before) != _listing(after):
            await self.server.notify_resources_changed(observed=True)
        for name, spec in before.items():
            if name not in after or after[name].source != spec.source:
                await self.server.notify_resource_updated(source_uri(name), observed=True)
                if spec.format == "skill":
                    await self.server.notify_resource_updated(skill_uri(name, FILENAME), observed=True)
        return True


class LibraryPrompt:
    """The handlers of one prompt of the library: rendering it, completing its arguments."""

    def __init__(self, spec: PromptSpec, library: Library, history: History) -> None:
        self.spec = spec
        self.library = library
        self.history = history

    def prompt(self) -> Prompt:
        """The prompt as the server serves it."""
        spec = self.spec
        return Prompt(
            spec.name,
            self.get,
            description=spec.description,
            title=spec.title,
            arguments=tuple(
                PromptArgument(
                    argument.name,
                    _describe(argument),
                    # "" counts as absent (rendering.check_values); the core checks presence only.
                    required=argument.required,
                    title=argument.title,
                    complete=ArgumentCompleter(spec, argument.name, self.history),
                )
                for argument in spec.arguments
            ),
        )

    async def get(self, ctx: Context, arguments: dict[str, str]) -> dict[str, Any]:
        """``prompts/get``: the prompt rendered with ``arguments``."""
        return await render_prompt(self.library, self.history, self.spec, arguments)


class ArgumentCompleter:
    """``completion/complete`` for one argument of one prompt (see :func:`completion.candidates`)."""

    def __init__(self, spec: PromptSpec, argument: str, history: History) -> None:
        self.spec = spec
        self.argument = argument
        self.history = history

    async def __call__(self, ctx: Context, value: str, others: dict[str, str]) -> list[str]:
        return candidates(self.spec, self.argument, self.history, value)


def _describe(argument: ArgumentSpec) -> str | None:
    """The argument's description, with its allowed values, type, pattern and default (the MCP
    listing has no field for any of them, and a person filling a form needs them)."""
    description = argument.description
    parts = [description.rstrip(".") + "." if description else ""]
    if argument.values:
        parts.append(f"One of: {', '.join(argument.values)}.")
    parts.append(typed.describe(argument) or "")
    if argument.default is not None:
        parts.append(f"Default: {argument.default}.")
    text = " ".join(part for part in parts if part)
    return text or None


def _listing(specs: dict[str, PromptSpec]) -> list[tuple[Any, ...]]:
    """What the resource listing shows of each prompt (a skill's files included)."""
    return [
        (name, spec.title, spec.format, spec.path, spec.description if spec.format == "skill" else None, spec.files)
        for name, spec in specs.items()
    ]
