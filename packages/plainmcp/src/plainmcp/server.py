"""The server API: what a server registers (tools, resources, templates, prompts) and publishes.

A :class:`Server` is plain data plus decorators, a pure registry: it imports no connection, session
or transport. A transport serves it (``plainmcp.run_stdio(server)``, ``MCPApp(server)``), each
client through a :class:`~plainmcp.connection.ServerConnection`.
Capabilities are derived from what was registered, so they cannot disagree with what is served.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from . import protocol
from .pagination import DEFAULT_PAGE_SIZE
from .prompts import Prompt, PromptArgument
from .resources import Completer, Resource, ResourceTemplate
from .state import SharedState
from .state.keyring import KeyRing
from .state.memory import MemoryState
from .state.notifications import NotificationRelay
from .subscriptions import SubscriptionBus
from .tasks import TaskStore
from .tools import EMPTY_INPUT_SCHEMA, Tool, ToolAnnotations

if TYPE_CHECKING:
    from .peer import Peer

F = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ExtensionMethod:
    """A request method an extension defines (:meth:`Server.add_method`)."""

    handler: Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any]]]
    cacheable: bool = False


def _doc(func: F) -> str | None:
    """A function's docstring with its indentation removed (what ``inspect.getdoc`` gives, without
    importing ``inspect`` on a server's cold path)."""
    lines = (func.__doc__ or "").expandtabs().strip().splitlines()
    if not lines:
        return None
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents, default=0)
    return "\n".join([lines[0].strip(), *(line[margin:].rstrip() for line in lines[1:])]).strip() or None


class Server:
    """An MCP server definition.

    Args:
        name: ``serverInfo.name`` (by convention the distribution name).
        version: ``serverInfo.version``.
        instructions: text for the client's model about how to use this server.
        resource_subscriptions: offer ``resources/subscribe``; the server then publishes updates with
            :meth:`notify_resource_updated`.
        page_size: items per page of the ``*/list`` methods.
        list_ttl_ms, read_ttl_ms, cache_scope: the caching hints of 2026-07-28 results
            (``server/discover`` and lists, and ``resources/read``). ``"private"`` is always safe;
            say ``"public"`` only when results are the same for every user.
        state_key: the HMAC key that seals ``requestState`` (random per process by default). For
            several processes serving one endpoint, give them shared state instead
            (:meth:`share`, or ``--redis`` / ``PLAINMCP_STATE_KEYS`` on the command line).
        declare: capabilities to declare even while nothing of their kind is registered
            (``{"prompts", "resources"}`` for a server whose prompts come and go with files), so
            an empty list is an empty answer, not "method not found".
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        instructions: str | None = None,
        resource_subscriptions: bool = False,
        logging: bool = True,
        page_size: int = DEFAULT_PAGE_SIZE,
        list_ttl_ms: int = 60_000,
        read_ttl_ms: int = 0,
        cache_scope: str = "private",
        state_key: bytes | None = None,
        declare: Collection[str] = (),
    ) -> None:
        if cache_scope not in ("public", "private"):
            raise ValueError('cache_scope must be "public" or "private"')
        if list_ttl_ms < 0 or read_ttl_ms < 0:
            raise ValueError("ttl values must be >= 0")
        unknown = set(declare) - {"tools", "resources", "prompts"}
        if unknown:
            raise ValueError(f"declare takes tools, resources and prompts, not {sorted(unknown)}")
        self.declare = frozenset(declare)
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.website_url = website_url
        self.icons = icons
        self.instructions = instructions
        self.resource_subscriptions = resource_subscriptions
        self.logging = logging
        self.page_size = page_size
        self.list_ttl_ms = list_ttl_ms
        self.read_ttl_ms = read_ttl_ms
        self.cache_scope = cache_scope
        #: What replicas share (:mod:`plainmcp.state`): in this process unless :meth:`share` was called.
        self.shared: SharedState = MemoryState(KeyRing([state_key]) if state_key is not None else None)
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.bus = SubscriptionBus()
        #: Extensions this server offers (``capabilities.extensions``, both eras): identifier -> settings.
        #: Use :meth:`declare_extension`; tasks are declared by the session from the tools registered.
        self.extensions: dict[str, dict[str, Any]] = {}
        #: Request methods an extension defines (``skills/list``), served in both eras: see :meth:`add_method`.
        self.methods: dict[str, ExtensionMethod] = {}
        #: The tasks of task-supporting tools (2026-07-28); its limits are attributes to tune.
        self.tasks = TaskStore()
        #: Called as ``await on_roots_changed(connection)`` when a legacy client's roots change.
        self.on_roots_changed: Callable[[Peer], Any] | None = None
        #: ``async def list(ctx) -> Sequence[Resource]``: resources listed after the registered
        #: ones, computed per ``resources/list`` (see :meth:`resource_list`).
        self.resource_lister: Callable[[Any], Awaitable[Sequence[Resource]]] | None = None
        #: Awaited before a subscription is acknowledged (see :meth:`subscription_ready`).
        self._subscription_gates: list[Callable[[frozenset[str]], Awaitable[None]]] = []
        # Coroutine functions (async def), not any awaitable: anyio's start_soon takes those only.
        self._background: list[Callable[[Server], Coroutine[Any, Any, None]]] = []
        self._running = 0

    # --------------------------------------------------------------------------- shared state

    def share(self, shared: SharedState) -> None:
        """Keep the state replicas must share in ``shared`` (a :class:`~plainmcp.state.redis_state.RedisState`
        for several replicas). Call it before serving.

        Raises:
            RuntimeError: the server is being served already.
        """
        if self._running:
            raise RuntimeError("share() must be called before the server is served")
        self.shared = shared

    @property
    def keyring(self) -> KeyRing:
        """The ring sealing 2026-07-28 ``requestState`` (see :mod:`plainmcp.state.keyring`)."""
        return self.shared.keyring

    # ------------------------------------------------------------------------------ description

    def server_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("websiteUrl", self.website_url),
            ("icons", self.icons),
        ):
            if value is not None:
                info[key] = value
        return info

    def capabilities(self) -> dict[str, Any]:
        """The capabilities object, derived from what is registered."""
        capabilities: dict[str, Any] = {}
        for name in ("logging", "completions", "prompts", "resources", "tools"):
            if self.offers(name):
                capabilities[name] = {} if name in ("logging", "completions") else {"listChanged": True}
        if "resources" in capabilities and self.resource_subscriptions:
            capabilities["resources"]["subscribe"] = True
        if self.extensions:
            capabilities["extensions"] = {name: dict(settings) for name, settings in self.extensions.items()}
        return capabilities

    def offers(self, capability: str) -> bool:
        """Whether :meth:`capabilities` holds ``capability`` (a top-level key), without building it:
        the check every request of a feature's method makes."""
        declared = self.declare
        if capability == "tools":
            return bool(self.tools) or "tools" in declared
        if capability == "resources":
            return bool(self.resources or self.templates) or self.resource_lister is not None or "resources" in declared
        if capability == "prompts":
            return bool(self.prompts) or "prompts" in declared
        if capability == "completions":
            return bool(self.prompts or self.templates) or "prompts" in declared
        if capability == "logging":
            return bool(self.logging)
        if capability == "extensions":
            return bool(self.extensions)
        return False

    def declare_extension(self, identifier: str, settings: dict[str, Any] | None = None) -> None:
        """Offer an extension (``io.modelcontextprotocol/ui``, ``.../skills``) in the capabilities of
        both eras. A client takes it up by declaring the same identifier in its own capabilities
        (see :meth:`plainmcp.context.Context.client_extension`)."""
        if not identifier or "/" not in identifier:
            raise ValueError(f"an extension identifier is 'vendor-prefix/name', not {identifier!r}")
        self.extensions[identifier] = dict(settings or {})

    def add_method(
        self,
        method: str,
        handler: Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any]]],
        *,
        cacheable: bool = False,
    ) -> None:
        """Serve a request method an extension defines (``skills/list``, ``resources/directory/read``)
        in both eras, as ``async def handler(ctx, params) -> result``; it raises MCPError as any
        handler does. ``cacheable``: its 2026-07-28 results carry ``ttlMs`` and ``cacheScope`` (the
        values of the list methods). A method of the base protocol cannot be replaced."""
        if method in protocol.SERVER_REQUEST_METHODS:
            raise ValueError(f"{method} is a method of the base protocol")
        self.methods[method] = ExtensionMethod(handler, cacheable)

    # ----------------------------------------------------------------------------- registration

    def add_tool(self, tool: Tool) -> Tool:
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.tools[tool.name] = tool
        return tool

    def remove_tool(self, name: str) -> None:
        del self.tools[name]

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        title: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        task_support: str = "forbidden",
    ) -> Callable[[F], F]:
        """Register ``async def handler(ctx, arguments)`` as a tool. The docstring is the default
        description; the input schema defaults to "no arguments". ``task_support`` ("optional",
        "required") lets the handler turn a call into a task (:meth:`Context.start_task`)."""

        def register(handler: F) -> F:
            self.add_tool(
                Tool(
                    name=name or handler.__name__,
                    handler=handler,
                    description=description if description is not None else _doc(handler),
                    title=title,
                    input_schema=input_schema if input_schema is not None else dict(EMPTY_INPUT_SCHEMA),
                    output_schema=output_schema,
                    annotations=annotations,
                    icons=icons,
                    meta=meta,
                    task_support=task_support,
                )
            )
            return handler

        return register

    def add_resource(self, resource: Resource) -> Resource:
        if resource.uri in self.resources:
            raise ValueError(f"a resource {resource.uri!r} is already registered")
        self.resources[resource.uri] = resource
        return resource

    def roots_changed(self, handler: F) -> F:
        """Register ``async def handler(connection)``, called when a legacy client says its roots
        changed (``notifications/roots/list_changed``); ``connection`` is the one ``ctx.connection``
        names in that client's requests."""
        self.on_roots_changed = handler
        return handler

    def resource_list(self, lister: F) -> F:
        """Register ``async def list(ctx) -> Sequence[Resource]`` for resources that come and go
        (the files under a directory): ``resources/list`` lists them after the registered ones,
        paginated by the server. Reads still go to :meth:`resource` or a template that matches."""
        self.resource_lister = lister
        return lister

    def replace_resources(self, resources: Iterable[Resource]) -> None:
        """Serve exactly these static resources from now on (templates stay), swapped in one step.
        Publish :meth:`notify_resources_changed` after it."""
        table: dict[str, Resource] = {}
        for resource in resources:
            if resource.uri in table:
                raise ValueError(f"two resources with the URI {resource.uri!r}")
            table[resource.uri] = resource
        self.resources = table

    def remove_resource(self, uri: str) -> None:
        del self.resources[uri]

    def resource(
        self,
        uri: str,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        icons: list[dict[str, Any]] | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register ``async def read(ctx, uri)`` returning str (text), bytes (blob) or contents."""

        def register(reader: F) -> F:
            self.add_resource(
                Resource(
                    uri,
                    name or reader.__name__,
                    reader,
                    title=title,
                    description=description if description is not None else _doc(reader),
                    mime_type=mime_type,
                    size=size,
                    icons=icons,
                    annotations=annotations,
                )
            )
            return reader

        return register

    def resource_template(
        self,
        uri_template: str,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        annotations: dict[str, Any] | None = None,
        complete: dict[str, Completer] | None = None,
    ) -> Callable[[F], F]:
        """Register ``async def read(ctx, uri, variables)`` for every URI the RFC 6570 template
        matches. ``complete`` maps variable names to completion candidates (list or async function)."""

        def register(reader: F) -> F:
            self.templates.append(
                ResourceTemplate(
                    uri_template,
                    name or reader.__name__,
                    reader,
                    title=title,
                    description=description if description is not None else _doc(reader),
                    mime_type=mime_type,
                    icons=icons,
                    annotations=annotations,
                    completers=complete,
                )
            )
            return reader

        return register

    def add_prompt(self, prompt: Prompt) -> Prompt:
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self.prompts[prompt.name] = prompt
        return prompt

    def replace_prompts(self, prompts: Iterable[Prompt]) -> None:
        """Serve exactly these prompts from now on, swapped in one step (a request sees the old
        set or the new one, never a mix). Publish :meth:`notify_prompts_changed` after it."""
        table: dict[str, Prompt] = {}
        for prompt in prompts:
            if prompt.name in table:
                raise ValueError(f"two prompts named {prompt.name!r}")
            table[prompt.name] = prompt
        self.prompts = table

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]

    def prompt(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        title: str | None = None,
        arguments: Sequence[PromptArgument] = (),
        icons: list[dict[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register ``async def get(ctx, arguments)`` returning a string or a list of messages."""

        def register(handler: F) -> F:
            self.add_prompt(
                Prompt(
                    name or handler.__name__,
                    handler,
                    description=description if description is not None else _doc(handler),
                    title=title,
                    arguments=tuple(arguments),
                    icons=icons,
                )
            )
            return handler

        return register

    def find_resource(self, uri: str) -> tuple[Resource | ResourceTemplate, dict[str, str] | None] | None:
        """The static resource with this URI, else the first template matching it, else None."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, None
        for template in self.templates:
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    # ------------------------------------------------------------------------------ interest

    def listeners(self) -> int:
        """How many subscribers a notification published now is offered to: each connection being
        served (it passes on what its client asked for) and each 2026-07-28 listen stream, subscribed
        to a URI or not. A watcher that also announces list changes runs while this is above zero."""
        return len(self.bus)

    def subscribed_uris(self) -> set[str]:
        """Every resource URI a connected client is subscribed to now (legacy ``resources/subscribe`` and
        2026-07-28 ``subscriptions/listen`` alike). A watcher uses it to watch only what someone wants."""
        return self.bus.subscribed_uris()

    def subscription_ready(self, gate: F) -> F:
        """Register ``async def gate(uris)``, awaited after a client subscribed and before the server
        acknowledges it (``resources/subscribe``'s result, ``subscriptions/listen``'s acknowledgement);
        ``uris`` are the resource URIs subscribed to (none for a listen to list changes only). A watcher
        returns once a change made right after the acknowledgement would be reported. The client waits
        for it: the gate bounds its own wait."""
        self._subscription_gates.append(gate)
        return gate

    async def subscribed(self, uris: frozenset[str]) -> None:
        """Await the :meth:`subscription_ready` gates; the dispatchers call it before acknowledging."""
        for gate in self._subscription_gates:
            await gate(uris)

    async def subscriptions_changed(self) -> None:
        """Return after the next change of :meth:`subscribed_uris`' answer (a client subscribed,
        unsubscribed, connected or left); a watcher sleeps here while nobody is subscribed."""
        await self.bus.wait_changed()

    # ------------------------------------------------------------------------------- publishing
    #
    # With replicas, a change a call made (a handler, through ``ctx.notify_*``) reaches subscribers on every
    # replica. A change a watcher *observed* (a file, a database, an upstream, which every replica with
    # subscribers watches for itself) is told with ``observed=True``: to this replica's subscribers only, as
    # the other replicas' watchers tell theirs; each subscriber hears it once.

    async def notify_resource_updated(self, uri: str, *, observed: bool = False) -> None:
        """Tell every client subscribed to ``uri`` that it changed (``observed``: see above)."""
        await self.bus.publish(protocol.RESOURCE_UPDATED, {"uri": uri}, local=observed)

    async def notify_resources_changed(self, *, observed: bool = False) -> None:
        await self.bus.publish(protocol.RESOURCES_LIST_CHANGED, local=observed)

    async def notify_tools_changed(self, *, observed: bool = False) -> None:
        await self.bus.publish(protocol.TOOLS_LIST_CHANGED, local=observed)

    async def notify_prompts_changed(self, *, observed: bool = False) -> None:
        await self.bus.publish(protocol.PROMPTS_LIST_CHANGED, local=observed)

    # ------------------------------------------------------------------------------- lifetime

    def background(
        self, task: Callable[[Server], Coroutine[Any, Any, None]]
    ) -> Callable[[Server], Coroutine[Any, Any, None]]:
        """Register ``async def task(server)`` to run while the server is served: a file watcher, a
        cache sweeper. Transports start it (:meth:`running`) and cancel it when serving ends, so it
        should close what it opened in a ``finally``. An exception in it ends the serving."""
        self._background.append(task)
        return task

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the :meth:`background` tasks, and the :attr:`tasks` clients start, for the block's duration.

        ``run_stdio``, the HTTP app's lifespan and ``connect_in_memory`` enter it. Nested entries
        (two in-memory clients of one server) share the first entry's tasks, which end with it.
        """
        if self._running > 0:
            self._running += 1
            try:
                yield
            finally:
                self._running -= 1
            return
        self._running += 1
        try:
            async with self.shared.opened(), anyio.create_task_group() as task_group:
                if self.shared.replicated:
                    relay = NotificationRelay(self.shared, self.bus)
                    self.bus.relay_through(relay)
                    # Serving starts once the other replicas' notifications can be heard.
                    await task_group.start(relay.run)
                for task in self._background:
                    task_group.start_soon(task, self)
                self.tasks.attach(task_group, self.shared)  # tasks outlive their request, not the server
                try:
                    yield
                finally:
                    self.tasks.attach(None)
                    self.bus.relay_through(None)
                    task_group.cancel_scope.cancel()
        finally:
            self._running -= 1
