"""The modern era (2026-07-28): stateless requests, each carrying its own ``_meta`` envelope.

Nothing is remembered between requests: every request says its protocol version, the client's
capabilities (and optionally its info and a log level), and is served on those terms alone.
This module serves ``server/discover`` and ``subscriptions/listen``, runs the
shared feature methods with multi-round-trip input, and decorates results as the revision wants
(``resultType``, caching hints, ``serverInfo`` in ``_meta``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from . import protocol
from .context import Context
from .envelope import SUPPORTED_VERSIONS, check_version, parse_envelope
from .errors import ErrorCode, MCPError, invalid_params, method_not_found
from .handlers import FEATURE_METHODS, METHOD_CAPABILITY
from .inputs import InputRequired, InputRound, binding, open_state, seal_state
from .peer import extras_of
from .subscriptions import any_covers
from .tasks import StartTask, TaskRecord

if TYPE_CHECKING:
    from .jsonrpc import Request, RequestId
    from .peer import Peer
    from .server import Server
    from .session import InFlight

logger = logging.getLogger(__name__)


class ModernDispatcher:
    """Serves the modern requests that reach one peer; it keeps no state between them."""

    def __init__(self, server: Server, peer: Peer) -> None:
        self.server = server
        self.peer = peer

    async def handle(self, request: Request, call: InFlight) -> dict[str, Any]:
        """The result of one modern request. Raises MCPError (-32602 for a malformed envelope,
        -32022 for a revision we do not speak, -32601 for a method this era or server lacks)."""
        params = request.params or {}
        extras = extras_of(call.extras)
        envelope = extras.envelope if extras is not None and extras.envelope is not None else parse_envelope(params)
        check_version(envelope.version)
        method = request.method
        ctx = Context(
            self.server,
            self.peer,
            call,
            version=envelope.version,
            client_info=envelope.client_info,
            client_capabilities=envelope.client_capabilities,
            log_threshold=envelope.log_threshold,
        )
        if method == protocol.SERVER_DISCOVER:
            return self._complete(self._discover(), method)
        if method == protocol.SUBSCRIPTIONS_LISTEN:
            return await self._listen(params, call)
        if method in protocol.TASK_METHODS and self._offers_tasks():
            return await self._task_method(ctx, method, params, extras.principal if extras is not None else None)
        extension = self.server.methods.get(method)
        if extension is not None and method not in FEATURE_METHODS:
            return self._complete(await extension.handler(ctx, params), method)
        handler = FEATURE_METHODS.get(method)
        capability = METHOD_CAPABILITY.get(method)
        if handler is None or (capability is not None and not self.server.offers(capability)):
            raise method_not_found(method)  # removed methods (initialize, ping, setLevel, ...) too
        if method not in protocol.MULTI_ROUND_METHODS:
            try:
                return self._complete(await handler(ctx, params), method)
            except InputRequired:
                logger.error("a %s handler asked for input, which only multi-round methods may", method)
                raise MCPError(ErrorCode.INTERNAL_ERROR, "Internal error") from None
        return await self._serve_multi_round(ctx, handler, method, params)

    # ----------------------------------------------------------------------------------- results

    def _complete(self, result: dict[str, Any], method: str) -> dict[str, Any]:
        result["resultType"] = "complete"
        extension = self.server.methods.get(method)
        if method in protocol.LIST_METHODS or method == protocol.SERVER_DISCOVER or (extension and extension.cacheable):
            result["ttlMs"] = self.server.list_ttl_ms
            result["cacheScope"] = self.server.cache_scope
        elif method == protocol.RESOURCES_READ:
            result["ttlMs"] = self.server.read_ttl_ms
            result["cacheScope"] = self.server.cache_scope
        return self._stamp(result, full=method == protocol.SERVER_DISCOVER)

    def _stamp(self, result: dict[str, Any], *, full: bool = False) -> dict[str, Any]:
        """``result`` with ``_meta["io.modelcontextprotocol/serverInfo"]`` added (beside any ``_meta``
        the handler set).

        Every result carries the server's ``name`` and ``version`` only: the schema's
        ``ResultMetaObject`` asks for an ``Implementation`` on every response (SHOULD), for display,
        logging and debugging, and an ``Implementation`` requires exactly those two fields; title,
        description, website and icons are optional there. A client learns them once, from
        ``server/discover`` (``full``, the whole ``serverInfo``) or ``initialize``; repeating them on
        every tool call is bytes on the wire and work per call that nobody reads.
        """
        meta = result.get("_meta")
        server = self.server
        info = server.server_info() if full else {"name": server.name, "version": server.version}
        result["_meta"] = {**(meta if isinstance(meta, dict) else {}), protocol.META_SERVER_INFO: info}
        return result

    def _discover(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": self.server.capabilities(),
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        if self._offers_tasks():
            result["capabilities"].setdefault("extensions", {})[protocol.TASKS_EXTENSION] = {}
        return result

    # ------------------------------------------------------------------------------------ tasks

    def _offers_tasks(self) -> bool:
        return any(tool.task_support != "forbidden" for tool in self.server.tools.values())

    async def _task_method(
        self, ctx: Context, method: str, params: dict[str, Any], owner: str | None
    ) -> dict[str, Any]:
        """``tasks/get``, ``tasks/update``, ``tasks/cancel``: only for a client that declared the
        extension (-32021 otherwise), only on the caller's own tasks (-32602 otherwise), answered
        from the task records on whichever replica the request reaches (-32000 when they cannot be
        reached)."""
        if not _declares_tasks(ctx):
            raise _tasks_capability_missing()
        store = self.server.tasks
        task = await store.find(params.get("taskId"), owner)
        if method == protocol.TASKS_GET:
            return self._stamp({"resultType": "complete", **task.detailed()})
        if method == protocol.TASKS_UPDATE:
            await store.update(task, params.get("inputResponses"))
        else:
            await store.cancel(task)
        return self._stamp({"resultType": "complete"})

    def _allow_task(self, ctx: Context, method: str, params: dict[str, Any]) -> None:
        """Let a task-supporting tool's handler become a task, if the client declared the
        extension; a tool that requires it refuses a client that did not (-32021)."""
        name = params.get("name")  # a peer's value: a list here would not even hash
        tool = self.server.tools.get(name) if method == protocol.TOOLS_CALL and isinstance(name, str) else None
        if tool is None or tool.task_support == "forbidden":
            return
        if _declares_tasks(ctx):
            ctx.may_start_task = True
        elif tool.task_support == "required":
            raise _tasks_capability_missing()

    async def _start_task(self, ctx: Context, handler: Any, params: dict[str, Any]) -> TaskRecord:
        """The task a handler asked to become: it runs again from the top, with this round's input.
        Its slots are the principal's; without authentication, the HTTP peer address's (so one
        unauthenticated client cannot take every client's slots), else one shared quota."""
        extras = extras_of(ctx.call.extras) if ctx.call is not None else None

        async def run_round(task_id: str, inputs: InputRound) -> dict[str, Any]:
            task_ctx = Context(
                self.server,
                None,
                None,
                version=ctx.version,
                client_info=ctx.client_info,
                client_capabilities=ctx.client_capabilities,
                log_threshold=None,
                inputs=inputs,
                task_id=task_id,
            )
            result: dict[str, Any] = await handler(task_ctx, params)
            result["resultType"] = "complete"  # a task's result is a 2026-07-28 result like any other
            return result

        first = ctx.inputs if ctx.inputs is not None else InputRound({}, {})
        owner = extras.principal if extras is not None else None
        address = extras.client_address if extras is not None else None
        quota = owner if owner is not None else (f"address:{address}" if address is not None else None)
        return await self.server.tasks.create(owner, run_round, first, quota=quota)

    # ---------------------------------------------------------------------------- multi-round

    async def _serve_multi_round(
        self, ctx: Context, handler: Any, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        extras = extras_of(ctx.call.extras) if ctx.call is not None else None
        principal = extras.principal if extras is not None else None
        answers: dict[str, Any] = {}
        state: dict[str, Any] = {}
        if "requestState" in params:  # the digest only when a state is there to check (most calls have none)
            answers, state = open_state(
                self.server.keyring, _bound_to(method, params, principal), params["requestState"]
            )
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise invalid_params('"inputResponses" must be an object')
        ctx.inputs = InputRound({**answers, **(responses or {})}, state)
        self._allow_task(ctx, method, params)
        try:
            return self._complete(await handler(ctx, params), method)
        except StartTask:
            try:
                task = await self._start_task(ctx, handler, params)
            except RuntimeError:
                logger.warning("no room for another task (%d tasks)", len(self.server.tasks))
                busy = {"content": [{"type": "text", "text": "The server is running too many tasks; try again later"}]}
                return self._complete({**busy, "isError": True}, method)
            return self._stamp({"resultType": "task", **task.envelope()})
        except InputRequired as need:
            known = {key: value for key, value in ctx.inputs.used.items() if key not in need.requests}
            result = {
                "resultType": "input_required",
                "inputRequests": {key: request.to_dict() for key, request in need.requests.items()},
                "requestState": seal_state(
                    self.server.keyring, _bound_to(method, params, principal), known, ctx.inputs.state
                ),
            }
            return self._stamp(result)

    # ------------------------------------------------------------------------------- listening

    async def _listen(self, params: dict[str, Any], call: InFlight) -> dict[str, Any]:
        agreed = self._agreed_notifications(params.get("notifications"))
        subscription_id = call.request.id
        listener = Listener(self.peer, subscription_id, agreed)
        # Attached before the acknowledgement goes out, so nothing published after the client has
        # it can be missed; what comes before it is held and follows it.
        self.server.bus.attach(listener)
        try:
            await self.server.subscribed(listener.uris)  # e.g. until a file watcher covers them
            await self.peer.notify(
                protocol.SUBSCRIPTIONS_ACKNOWLEDGED,
                {"_meta": {protocol.META_SUBSCRIPTION_ID: subscription_id}, "notifications": agreed},
                related_to=subscription_id,
            )
            await listener.open()
            await self.peer.wait_closed()  # the client cancelling ends it too (no result then)
        finally:
            self.server.bus.detach(listener)
        return self._stamp({"resultType": "complete", "_meta": {protocol.META_SUBSCRIPTION_ID: subscription_id}})

    def _agreed_notifications(self, requested: Any) -> dict[str, Any]:
        """The subset of the requested notification types this server honours."""
        if not isinstance(requested, dict):
            raise invalid_params('"notifications" must be an object')
        capabilities = self.server.capabilities()
        agreed: dict[str, Any] = {}
        for flag, capability in (
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ):
            value = requested.get(flag)
            if value is not None and not isinstance(value, bool):
                raise invalid_params(f'"{flag}" must be a boolean')
            if value and capability in capabilities:
                agreed[flag] = True
        uris = requested.get("resourceSubscriptions")
        if uris is not None:
            if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
                raise invalid_params('"resourceSubscriptions" must be a list of URIs')
            if uris and self.server.resource_subscriptions:
                agreed["resourceSubscriptions"] = list(dict.fromkeys(uris))
        return agreed


def _declares_tasks(ctx: Context) -> bool:
    extensions = ctx.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and protocol.TASKS_EXTENSION in extensions


def _tasks_capability_missing() -> MCPError:
    return MCPError(
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"This request needs the client's {protocol.TASKS_EXTENSION} extension",
        {"requiredCapabilities": {"extensions": {protocol.TASKS_EXTENSION: {}}}},
    )


_FLAG_OF = {
    protocol.TOOLS_LIST_CHANGED: "toolsListChanged",
    protocol.PROMPTS_LIST_CHANGED: "promptsListChanged",
    protocol.RESOURCES_LIST_CHANGED: "resourcesListChanged",
}


class Listener:
    """One ``subscriptions/listen`` stream, as a subscriber of the server's bus."""

    def __init__(self, peer: Peer, subscription_id: RequestId, agreed: dict[str, Any]) -> None:
        self.peer = peer
        self.subscription_id = subscription_id
        self.agreed = agreed
        self.uris = frozenset(agreed.get("resourceSubscriptions", ()))
        self.subscribed_uris = self.uris
        self._held: list[tuple[str, dict[str, Any] | None]] | None = []  # until the acknowledgement is out

    async def open(self) -> None:
        """The acknowledgement is sent: deliver what was held, then everything as it comes."""
        while self._held:
            method, params = self._held.pop(0)
            await self._send(method, params)
        self._held = None

    def wants(self, method: str, params: dict[str, Any] | None) -> bool:
        if method == protocol.RESOURCE_UPDATED:
            return any_covers(self.uris, (params or {}).get("uri", ""))
        flag = _FLAG_OF.get(method)
        return flag is not None and self.agreed.get(flag, False)

    async def deliver(self, method: str, params: dict[str, Any] | None) -> None:
        if self.peer.closed or not self.wants(method, params):
            return
        if self._held is not None:
            self._held.append((method, params))
            return
        await self._send(method, params)

    async def _send(self, method: str, params: dict[str, Any] | None) -> None:
        tagged = {**(params or {}), "_meta": {protocol.META_SUBSCRIPTION_ID: self.subscription_id}}
        await self.peer.notify(method, tagged, related_to=self.subscription_id)


def _bound_to(method: str, params: dict[str, Any], principal: str | None) -> str:
    """:func:`~plainmcp.inputs.binding`, with arguments too deep to encode refused as invalid params."""
    try:
        return binding(method, params, principal)
    except RecursionError:
        raise invalid_params('"arguments" are nested too deeply') from None
