"""One conversation: the model proposes, the interceptor checks, the user confirms, the servers answer.

For each user turn: the model is asked (with the live tools and the system prompt rebuilt when a server's
tool list changed); its calls go through the interceptor; valid calls run (after the user's confirmation
for tools that may change things, unless ``--yes`` or the allow-list says so); invalid ones are answered
with the repair message; results go back; and again, until the model answers in words, the repair budget
is spent (the bridge gives up and says so), or the limit of tool rounds is reached. Nothing invalid is
ever sent to a server, and every call the model made is answered in the history, so the next turn's
request is well-formed for either API.

Every step is also an event (a plain dict) for the transcript, the ``--log`` file and the terminal.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from plainmcp import MCPError

from .chat_apis import ModelError, ModelTurn
from .constrain import (
    ANSWER,
    CALL,
    CALLING_RULE,
    CHOICE,
    CONSTRAINED,
    DECIDING,
    DECISION,
    IN_WORDS,
    PLACEHOLDER_CORRECTION,
    is_placeholder,
)
from .hostile import non_finite, too_deep
from .interceptor import Interceptor, Review, ToolCatalog, ValidCall, answer_for_model, gave_up_message
from .models import DEFAULT_URLS, ChatModel
from .prompt import TEXT_CALLS, build_system_prompt
from .rendering import server_renders_tools
from .shapes import mapping
from .shortlist import shortlist
from .toolbox import Toolbox

logger = logging.getLogger(__name__)

DEFAULT_MAX_ROUNDS = 8
#: Tool calls run from one model turn; the rest are answered "not run" (a model, or text posing as
#: its calls, may propose hundreds at once).
DEFAULT_MAX_CALLS_PER_TURN = 8

#: Outcomes of a user turn (``plainmcp-bridge ask`` maps them to exit codes).
ANSWERED, GAVE_UP, ROUND_LIMIT, MODEL_FAILED = "answered", "gave_up", "round_limit", "model_failed"
#: The model answered in words without any tool result while ``require_tool`` was set.
NO_TOOL = "no_tool"
#: The model's answer stopped at the length limit (in words; a cut call gets a repair message instead).
TRUNCATED = "truncated"


@dataclass(frozen=True)
class BridgeOptions:
    """``max_rounds``: model turns with tool calls per user turn. ``max_calls_per_turn``: calls run from
    one model turn. ``yes``: run every tool without asking. ``allow``: exposed tool names that run
    without asking. ``tool_timeout``: seconds per tool call."""

    max_repairs: int = 2
    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_calls_per_turn: int = DEFAULT_MAX_CALLS_PER_TURN
    yes: bool = False
    allow: frozenset[str] = frozenset()
    tool_timeout: float | None = 120.0
    prompt_template: str | None = None
    #: An answer without any successful tool result is not an answer (outcome ``no_tool``).
    require_tool: bool = False
    #: Constrained, the turn may call only the question's best-matching tools, this many (0: any tool;
    #: see :mod:`plainmcp_bridge.shortlist`).
    shortlist: int = 0


@dataclass(frozen=True)
class Outcome:
    """``tool_results``: calls of this question that ran and did not fail (0: the answer used no tool)."""

    status: str
    answer: str
    rounds: int
    tool_results: int = 0


class Hooks:
    """What the conversation tells its user interface. The defaults show nothing and decline every
    confirmation (a script that wants writes passes ``--yes`` or an allow-list)."""

    def text(self, fragment: str) -> None:
        """A piece of the model's streamed answer."""

    def event(self, event: dict[str, Any]) -> None:
        """A step of the conversation (see :meth:`Bridge.record`)."""

    async def confirm(self, call: ValidCall, tool: dict[str, Any], route: tuple[str, str] = ("", "")) -> bool:
        """Whether the user lets ``call`` run; ``tool`` is the listing of the tool it runs, ``route``
        the server and the tool's own name there. Show the user the whole call."""
        return False

    def progress(self, call: ValidCall, progress: float, total: float | None, message: str | None) -> None:
        """A long tool call's progress."""

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        """A server asks the user (``elicitation/create``): the result, ``{"action": "accept", "content":
        {...}}``, ``decline`` or ``cancel``. The default declines."""
        return {"action": "decline"}


def needs_confirmation(tool: dict[str, Any], policy: str = "unless-read-only") -> bool:
    """Whether the user is asked before ``tool`` runs, under its server's ``policy``: ``"always"``,
    ``"never"``, or by default unless the tool is annotated read-only and not destructive (the MCP
    defaults: a tool without annotations may change things). The annotations are the server's own
    word; a server not trusted for them gets ``"always"``."""
    if policy == "always":
        return True
    if policy == "never":
        return False
    hints = mapping(tool.get("annotations"))
    return hints.get("readOnlyHint") is not True or hints.get("destructiveHint") is True


@dataclass
class Bridge:
    toolbox: Toolbox
    model: ChatModel
    options: BridgeOptions = field(default_factory=BridgeOptions)
    hooks: Hooks = field(default_factory=Hooks)
    #: Extra receivers of every event (the --log file, the --json transcript).
    sinks: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)
    #: Receivers of the raw model turns and tool schemas as well (the --log file).
    log_sinks: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        #: Whether the model server renders the tools itself (asked before the first turn; None: cannot say).
        self.renders_tools: bool | None = None
        self._asked_rendering = False
        self.interceptor = Interceptor(ToolCatalog(self.toolbox.tools), max_repairs=self.options.max_repairs)
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": self._system_prompt()}]
        self._tools_version = self.toolbox.version
        self.toolbox.elicitation_handler = self._elicit
        self._ran: dict[str, int] = {}  # the calls run in this user turn (canonical JSON -> times asked)
        self._useful = 0  # the calls of this user turn that ran and did not fail
        self._answer_now = False  # constrained: the next turn must answer in words
        self._question = ""  # the user turn under way (what the shortlist ranks the tools for)
        self._offered: list[str] | None = None  # the shortlist last recorded for it
        self._told_placeholder = False  # constrained: the model was told its answer was the placeholder

    async def _elicit(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        message = str(params.get("message") or "")
        schema = mapping(params.get("requestedSchema"))
        answer = await self.hooks.elicit(server, message, schema)
        self.record("elicitation", server=server, message=message, action=answer.get("action"))
        return answer

    @property
    def counters(self) -> dict[str, int]:
        return self.interceptor.counters.as_dict()

    @property
    def _constrained(self) -> bool:
        return self._mode in CONSTRAINED

    @property
    def _mode(self) -> str | None:
        settings = getattr(self.model, "settings", None)
        return getattr(settings, "constrain", None)

    def _system_prompt(self) -> str:
        calling = CALLING_RULE if self._constrained else TEXT_CALLS
        # Unconstrained, the tools go as the API's tools: a server whose template renders them needs no
        # second description in words (constrained, they are not sent as tools, so the words stay).
        rendered = self.renders_tools is True and not self._constrained
        return build_system_prompt(
            self.toolbox.tools, template=self.options.prompt_template, calling=calling, rendered=rendered
        )

    async def _ask_rendering(self) -> None:
        """Once per conversation, before the first turn: does the model server render the tools?"""
        settings = getattr(self.model, "settings", None)
        if self._asked_rendering or settings is None or self._constrained or self.options.prompt_template:
            return
        self._asked_rendering = True
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else None
        base = settings.base_url or DEFAULT_URLS[settings.api]
        self.renders_tools = await server_renders_tools(settings.api, base, settings.model, headers=headers)
        if self.renders_tools:
            self.messages[0] = {"role": "system", "content": self._system_prompt()}
            self.record("tools_rendered")

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send one event (``{"type": kind, ...}``) to the hooks and every sink."""
        event = {"type": kind, **fields}
        self.hooks.event(event)
        for sink in self.sinks:
            sink(event)
        return event

    def log_only(self, kind: str, **fields: Any) -> None:
        """An event for the ``--log`` file alone (the model's raw turns, the tool schemas): what
        ``eval --from-log`` replays, and nothing the user interface or the transcript shows."""
        for sink in self.log_sinks:
            sink({"type": kind, **fields})

    async def _follow_tool_changes(self) -> None:
        await self.toolbox.refresh_if_stale()
        if self.toolbox.version != self._tools_version:
            self._tools_version = self.toolbox.version
            self.interceptor.catalog = ToolCatalog(self.toolbox.tools)
            self.messages[0] = {"role": "system", "content": self._system_prompt()}
            self.record("tools_changed", tools=[tool["name"] for tool in self.toolbox.tools])

    def add_context(self, text: str) -> None:
        """Put text (a prompt's messages, a resource) into the conversation as the user's."""
        self.messages.append({"role": "user", "content": text})

    async def ask(self, question: str) -> Outcome:
        """One user turn, to the end. Cancelling the caller's scope (Ctrl-C) stops the model request or
        the tool call under way (the server is sent ``notifications/cancelled``)."""
        self.interceptor.start_turn()
        await self._ask_rendering()
        self.messages.append({"role": "user", "content": question})
        self.record("user", content=question)
        self.log_only("tools", tools=self.toolbox.tools)
        self._ran = {}
        self._useful = 0
        self._answer_now = False
        self._question = question
        self._offered = None
        self._told_placeholder = False
        rounds = 0
        repairing = False
        while True:
            await self._follow_tool_changes()
            try:
                turn = await self._complete()
            except ModelError as error:
                self.record("model_error", message=str(error))
                return Outcome(MODEL_FAILED, str(error), rounds, self._useful)
            self.log_only(
                "model_turn",
                text=turn.text,
                calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.calls],
                finish=turn.finish,
            )
            review = self.interceptor.review(turn.text, turn.calls)
            if turn.finish == "length" and not review.has_calls:
                if _looks_like_a_call(turn.text):
                    review = self.interceptor.cut_off(turn.text)
                    self.record("truncated", call=True)
                else:
                    self.interceptor.counters.truncated += 1
                    self._remember(turn, review)
                    self.record("truncated", call=False)
                    return Outcome(TRUNCATED, review.text, rounds, self._useful)
            if self._constrained and review.valid and not review.invalid and all(map(self._already_ran, review.valid)):
                # Constrained, a repeat is not kept in the history: the model is asked again, held to an
                # answer in words, with the result it already has as the last message.
                self.interceptor.counters.repeated += len(review.valid)
                self.record("repeated", name=review.valid[0].name, arguments=review.valid[0].arguments)
                if self._answer_now:
                    return Outcome(ROUND_LIMIT, "Stopped: the model kept repeating its call.", rounds, self._useful)
                self._answer_now = True
                continue
            self._remember(turn, review)
            if review.dropped:
                self.record("cut", message=f"{review.dropped} more call(s) written after the first were not run")
            if not review.has_calls:
                if self._constrained and not repairing and is_placeholder(review.text):
                    given_up = self._placeholder(review.text, rounds)
                    if given_up is None:
                        continue  # told once: asked again
                    return given_up
                return self._final(review, rounds, repairing)
            rounds += 1
            repairing = bool(review.invalid)
            if review.gave_up:
                message = gave_up_message(review)
                self._answer_all(turn, review, {}, "Not run: " + message)
                self.record("gave_up", message=message)
                return Outcome(GAVE_UP, message, rounds, self._useful)
            if rounds > self.options.max_rounds:
                message = f"Stopped: the model was still calling tools after {self.options.max_rounds} rounds."
                self._answer_all(
                    turn,
                    review,
                    {},
                    f"Not run: the limit of {self.options.max_rounds} tool rounds "
                    "for this question was reached. Answer with what you have.",
                )
                self.record("round_limit", message=message)
                return Outcome(ROUND_LIMIT, message, rounds, self._useful)
            await self._run_all(turn, review)

    async def _complete(self) -> ModelTurn:
        """Ask the model. Constrained, a model that repeated a call it has the result of is held to an
        answer in words (small models otherwise repeat the call until the round limit)."""
        if self._answer_now:
            self.record("answer_only")
            return await self.model.complete(
                self.messages, self.toolbox.tools, on_text=self.hooks.text, answer_only=True
            )
        tools = self._offered_tools()
        if self._mode in DECIDING and tools:
            return await self._decide_then_complete(tools)
        return await self.model.complete(self.messages, tools, on_text=self.hooks.text)

    def _offered_tools(self) -> list[dict[str, Any]]:
        """The tools this turn may call: constrained with a shortlist, the question's best matches
        (recorded when they change), else every tool."""
        tools = self.toolbox.tools
        if not (self._constrained and self.options.shortlist > 0):
            return tools
        offered = shortlist(self._question, tools, self.options.shortlist)
        names = [str(tool["name"]) for tool in offered]
        if len(offered) < len(tools) and names != self._offered:
            self.record("shortlist", tools=names)
        self._offered = names
        return offered

    async def _decide_then_complete(self, tools: list[dict[str, Any]]) -> ModelTurn:
        """The decision step: a constrained choice between each of ``tools`` and an answer in words
        (asked with :data:`DECISION` after the conversation, a question never kept in the history),
        then the turn itself held to the chosen tool's call, or to words. A choice that cannot be read
        (a server that ignored the constraint) falls back to the undivided turn."""
        asked = [*self.messages, {"role": "user", "content": DECISION}]
        decision = await self.model.complete(asked, tools, shape=CHOICE)
        chosen = decided_tool(decision.text, [str(tool["name"]) for tool in tools])
        self.log_only("decision_turn", text=decision.text, finish=decision.finish)
        self.record("decision", tool=chosen)
        if chosen is None:
            return await self.model.complete(self.messages, tools, on_text=self.hooks.text)
        if chosen == IN_WORDS:
            return await self.model.complete(self.messages, tools, on_text=self.hooks.text, shape=ANSWER)
        return await self.model.complete(self.messages, [self.toolbox.listing(chosen)], shape=CALL)

    def _placeholder(self, answer: str, rounds: int) -> Outcome | None:
        """An answer that is the instructions' stand-in copied back is no answer: the first time the
        model is told so (None: ask again), the second time the question is given up."""
        if not self._told_placeholder:
            self._told_placeholder = True
            self.messages.append({"role": "user", "content": PLACEHOLDER_CORRECTION})
            self.record("placeholder", answer=answer)
            return None
        self.interceptor.counters.gave_up += 1
        message = "The model gave no answer in words (it wrote back the instructions' placeholder)."
        self.record("gave_up", message=message)
        return Outcome(GAVE_UP, message, rounds, self._useful)

    def _final(self, review: Review, rounds: int, repairing: bool) -> Outcome:
        """The outcome of a turn answered in words."""
        if repairing:
            # The model was told its call was wrong and answered in prose: that is no answer to trust.
            self.interceptor.counters.gave_up += 1
            message = (
                "The model answered in words instead of correcting its rejected call; "
                "nothing it says is based on a tool result."
            )
            self.record("gave_up", message=message)
            return Outcome(GAVE_UP, message, rounds, self._useful)
        if not self._useful:
            self.interceptor.counters.answered_without_tool += 1
            if self.options.require_tool and self.toolbox.tools:
                message = "The model answered without using any tool (--require-tool): its answer is not shown."
                self.record("no_tool", message=message, answer=review.text)
                return Outcome(NO_TOOL, message, rounds, 0)
        return Outcome(ANSWERED, review.text, rounds, self._useful)

    async def _run_all(self, turn: ModelTurn, review: Review) -> None:
        """Run a turn's valid calls (at most ``max_calls_per_turn``; repeats answered, not run) and
        answer every call in the history."""
        limit = self.options.max_calls_per_turn
        over = f"Not run: at most {limit} tool calls are run from one turn. Call it again if you still need it."
        answers: dict[int, str] = {}
        try:
            for number, call in enumerate(review.valid):
                answers[id(call)] = over if number >= limit else await self._run_once(call)
        except anyio.get_cancelled_exc_class():
            # Ctrl-C: the history must still answer every call, or the next request is malformed.
            self._answer_all(turn, review, {}, "Not run: the user cancelled this call.")
            self.record("cancelled")
            raise
        if len(review.valid) > limit:
            skipped = len(review.valid) - limit
            message = f"{skipped} of the model's {len(review.valid)} calls were not run (at most {limit} a turn)"
            self.record("call_limit", message=message)
        for refused in review.invalid:
            self.record(
                "rejected",
                name=refused.name,
                problems=[str(p) for p in refused.problems],
                unknown_tool=refused.unknown_tool,
                round=review.repair_round,
            )
        self._answer_all(turn, review, answers, None)

    def _already_ran(self, call: ValidCall) -> bool:
        return json.dumps([call.name, call.arguments], sort_keys=True, default=str) in self._ran

    async def _run_once(self, call: ValidCall) -> str:
        """Run ``call`` unless the same call (name and arguments) already ran in this user turn."""
        key = json.dumps([call.name, call.arguments], sort_keys=True, default=str)
        if key in self._ran:
            self._ran[key] += 1
            self.interceptor.counters.repeated += 1
            self.record("repeated", name=call.name, arguments=call.arguments)
            return (
                f"Not run again: you already called {call.name} with these arguments for this question, "
                "and its result is above. Do not repeat the call: answer the user from that result, "
                "or call a tool with different arguments."
            )
        self._ran[key] = 1
        return await self._run(call)

    def _remember(self, turn: ModelTurn, review: Review) -> None:
        """The model's turn into the history, as the API gave it."""
        if review.from_text or not turn.calls:
            # What followed a call written as text is left out: the model did not get to say it.
            said = review.said if review.said is not None else turn.text
            self.messages.append({"role": "assistant", "content": said})
        else:
            self.messages.append(
                {
                    "role": "assistant",
                    "content": turn.text,
                    "calls": [
                        {"id": call.id, "name": call.name, "arguments": _replayable(call.arguments)}
                        for call in turn.calls
                    ],
                }
            )
        if review.text:
            self.record("assistant", content=review.text)

    def _answer_all(self, turn: ModelTurn, review: Review, answers: dict[int, str], instead: str | None) -> None:
        """Answer every call of the turn: a result, a repair message, or ``instead`` for all of them."""
        by_id: dict[str | None, str] = {}
        for valid in review.valid:
            by_id[valid.id] = instead or answers[id(valid)]
        for invalid in review.invalid:
            by_id[invalid.id] = instead or invalid.message
        repair = (
            f"\n\n(Repair round {review.repair_round} of {self.interceptor.max_repairs}.)"
            if review.invalid and review.repair_round
            else ""
        )
        if review.from_text:
            # No call ids to answer: the results come back as the user's message.
            parts = [f"Result of {call.name}:\n{by_id[call.id]}" for call in review.valid]
            parts += [by_id[call.id] for call in review.invalid]
            self.messages.append({"role": "user", "content": "\n\n".join(parts) + repair})
            return
        names = {call.id: call.name for call in turn.calls}
        last = turn.calls[-1].id if turn.calls else None
        for call in turn.calls:
            content = by_id.get(call.id, instead or "Not run.")
            if call.id == last:
                content += repair
            self.messages.append({"role": "tool", "call_id": call.id, "name": str(names[call.id]), "content": content})

    async def _run(self, call: ValidCall) -> str:
        """Run one valid call (after confirmation when needed); the text the model gets back."""
        tool = self.toolbox.listing(call.name)  # the listing of the tool this name runs, never a namesake's
        server, own = self.toolbox.route(call.name)
        policy = self.toolbox.confirm_policies.get(server, "unless-read-only")
        if needs_confirmation(tool, policy) and not (self.options.yes or call.name in self.options.allow):
            if not await self.hooks.confirm(call, tool, (server, own)):
                # Never a "call" event for it: the transcript shows only what was sent.
                self.record("declined", name=call.name, arguments=call.arguments)
                return (
                    "Not run: the user declined this call. Do not call it again for this request; "
                    "tell the user what you would have done instead."
                )
        self.record("call", name=call.name, arguments=call.arguments, notes=list(call.notes))
        self.interceptor.counters.ran += 1

        def progress(value: float, total: float | None, message: str | None) -> None:
            self.hooks.progress(call, value, total, message)

        try:
            result = await self.toolbox.call(
                call.name, call.arguments, on_progress=progress, timeout=self.options.tool_timeout
            )
        except MCPError as error:
            self.interceptor.counters.failed_at_server += 1
            self.record("result", name=call.name, is_error=True, text=error.message)
            return answer_for_model(
                {
                    "content": [{"type": "text", "text": f"the server refused the call: {error.message}"}],
                    "isError": True,
                }
            )
        text = answer_for_model(result)
        failed = result.get("isError") is True
        if failed:
            self.interceptor.counters.failed_at_server += 1
        else:
            self.interceptor.counters.succeeded += 1
            self._useful += 1
        self.record("result", name=call.name, is_error=failed, text=_brief(result))
        return text


def decided_tool(text: str, names: list[str]) -> str | None:
    """The decision's answer (``{"tool": ...}``): a tool of ``names``, :data:`IN_WORDS`, or None when
    it is neither (not JSON, another shape, a name not listed)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    tool = value.get("tool") if isinstance(value, dict) else None
    return tool if isinstance(tool, str) and (tool == IN_WORDS or tool in names) else None


def _looks_like_a_call(text: str) -> bool:
    """Whether a turn cut at the length limit was writing a call (a tag, or a JSON object naming one)."""
    return "<tool_call>" in text or bool(re.search(r'\{\s*"(name|function)"\s*:', text))


def _replayable(arguments: Any) -> Any:
    """A call's arguments as the history replays them to the model API: as sent, unless JSON cannot
    carry them (NaN, an infinity, nesting past the bridge's depth): then an empty object (the call's
    answer says what was wrong with them)."""
    if too_deep(arguments) or non_finite(arguments):
        return {}
    return arguments


def _brief(result: dict[str, Any], limit: int = 500) -> str:
    text = answer_for_model({k: v for k, v in result.items() if k != "isError"})
    return text if len(text) <= limit else text[:limit] + "..."


def transcript_line(event: dict[str, Any]) -> str:
    """One event as a JSONL line."""
    return json.dumps(event, ensure_ascii=False, default=str)
