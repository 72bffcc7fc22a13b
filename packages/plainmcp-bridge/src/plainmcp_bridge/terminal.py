"""The interactive chat in a terminal: streamed answers, each tool call and its result in one line, progress,
confirmation questions, and the slash commands (``/prompt``, ``/read``, ``/tools``, ``/counts``, ``/quit``).

Ctrl-C while the model or a tool is working cancels that turn (the model request is closed, the server is
sent ``notifications/cancelled``) and the chat goes on; Ctrl-C or Ctrl-D at the prompt ends the chat.
"""

from __future__ import annotations

import json
import re
import shlex
import signal
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

import anyio
from plainmcp import MCPError

from .agent import Bridge, Hooks
from .interceptor import ValidCall, answer_for_model
from .shapes import mapping

HELP = """Commands:
  /tools                   the tools the model can call
  /prompt NAME [k=v ...]   ask with a server's prompt
  /read URI                put a resource into the conversation
  /counts                  tool calls so far: proposed, valid at first try, repaired, rejected, failed
  /quit                    end the chat (Ctrl-D too)"""

ReadLine = Callable[[str], Awaitable[str | None]]

# Control characters other than newline and tab: a model or a server could otherwise move the cursor,
# rewrite earlier lines (a fake "-> read_file" over a real "-> delete_file") or retitle the terminal.
# Also the invisible and reordering characters (zero-width, bidirectional overrides and isolates, line
# and paragraph separators, the byte-order mark): "/tmp/\u202eexe.txt" shows as a name it is not.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def printable(text: str) -> str:
    """``text`` with terminal control characters and invisible or reordering ones shown as
    ``\\xNN`` / ``\\uNNNN`` instead of acted on."""
    return _CONTROL.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def confirmation(call: ValidCall, route: tuple[str, str] = ("", "")) -> str:
    """The question before a call that may change things: the whole call, every argument in full
    (never cut: what the user agrees to is exactly what runs), escaped for the terminal."""
    server, own = route
    where = f" (the tool {own!r} of the server {server!r})" if server else ""
    arguments = json.dumps(call.arguments, ensure_ascii=False, indent=2)
    return printable(
        f"?  {call.name}{where} may change things. It runs with exactly these arguments "
        f"({len(arguments)} characters, shown whole):\n{arguments}"
    )


class TerminalHooks(Hooks):
    """Shows the conversation on ``out`` and asks confirmations through ``read_line``."""

    def __init__(self, out: TextIO, read_line: ReadLine) -> None:
        self.out = out
        self.read_line = read_line
        self._mid_line = False

    def _line(self, text: str) -> None:
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        self.out.write(printable(text) + "\n")
        self.out.flush()

    def text(self, fragment: str) -> None:
        self.out.write(printable(fragment))
        self.out.flush()
        self._mid_line = not fragment.endswith("\n")

    def event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "call":
            notes = f"  ({'; '.join(event['notes'])})" if event["notes"] else ""
            self._line(f"-> {event['name']} {_short(json.dumps(event['arguments'], ensure_ascii=False))}{notes}")
        elif kind == "result":
            mark = "<- error:" if event["is_error"] else "<-"
            self._line(f"{mark} {_short(' '.join(str(event['text']).split()))}")
        elif kind == "rejected":
            what = "unknown tool" if event["unknown_tool"] else "; ".join(event["problems"])
            self._line(f"x  {event['name']} not sent ({what}); asking the model to repair it")
        elif kind in ("gave_up", "round_limit", "model_error", "call_limit"):
            self._line(f"!  {event['message']}")
        elif kind == "declined":
            self._line(f"x  {event['name']} not run (declined)")
        elif kind == "cancelled":
            self._line("x  cancelled")
        elif kind == "elicitation":
            self._line(f"   {event['action']}")
        elif kind == "tools_changed":
            self._line(f"i  the tools changed: {', '.join(event['tools'])}")

    async def confirm(self, call: ValidCall, tool: dict[str, Any], route: tuple[str, str] = ("", "")) -> bool:
        self._line(confirmation(call, route))
        answer = await self.read_line("   Run it? [y/N] ")
        return (answer or "").strip().lower() in ("y", "yes")

    def progress(self, call: ValidCall, progress: float, total: float | None, message: str | None) -> None:
        share = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        self._line(f"   {call.name}: {share}{f' {message}' if message else ''}")

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        return await ask_form(self.read_line, self._line, server, message, schema)


async def ask_form(
    read_line: ReadLine, show: Callable[[str], None], server: str, message: str, schema: dict[str, Any]
) -> dict[str, Any]:
    """Ask the user a server's question (``elicitation/create``, form mode): accept or not, then each
    field of ``requestedSchema`` (flat: strings, numbers, booleans, enums). End of input cancels; an
    empty required field or a value of the wrong type declines. Everything the server wrote is shown
    escaped (:func:`printable`), whatever ``show`` does."""

    def say(text: str) -> None:
        show(printable(text))

    say(f"?  {server} asks: {message}")
    answer = await read_line("   Accept? [y/N] ")
    if answer is None:
        return {"action": "cancel"}
    if answer.strip().lower() not in ("y", "yes"):
        return {"action": "decline"}
    properties = mapping(schema.get("properties"))
    required = set(schema.get("required") or ())
    content: dict[str, Any] = {}
    for name, field in properties.items():
        field = field if isinstance(field, dict) else {}
        options = field.get("enum") if isinstance(field.get("enum"), list) else None
        kind = field.get("type")
        hint = f" ({', '.join(map(str, options))})" if options else f" ({kind})" if kind else ""
        text = await read_line(f"   {printable(str(field.get('title') or name))}{printable(hint)}: ")
        if text is None:
            return {"action": "cancel"}
        if not text.strip():
            if name in required:
                return {"action": "decline"}
            continue
        try:
            content[name] = _coerce(text.strip(), kind)
        except ValueError:
            say(f"!  {name}: not {kind}; declined")
            return {"action": "decline"}
    return {"action": "accept", "content": content}


def _coerce(text: str, kind: Any) -> Any:
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True
        if text.lower() in ("n", "no", "false"):
            return False
        raise ValueError(text)
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    return text


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def counts_line(counters: dict[str, int]) -> str:
    return (
        "tool calls: {proposed} proposed, {valid_first_try} valid at first try, {repaired} repaired, "
        "{rejected} rejected, {failed_at_server} failed at the server, {gave_up} given up"
    ).format(**counters)


async def chat(bridge: Bridge, hooks: TerminalHooks, read_line: ReadLine) -> None:
    """The chat loop until /quit, end of input, or Ctrl-C at the prompt."""
    out = hooks.out
    out.write("plainmcp-bridge: " + f"{len(bridge.toolbox.tools)} tools. /help for commands, Ctrl-D to quit.\n")
    out.flush()
    turn: anyio.CancelScope | None = None
    with anyio.CancelScope() as whole:

        async def interrupts() -> None:
            with anyio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    if turn is not None:
                        turn.cancel()
                    else:
                        whole.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(interrupts)
            while True:
                line = await read_line("> ")
                if line is None:
                    break
                line = line.strip()
                if not line:
                    continue
                if line in ("/quit", "/exit"):
                    break
                with anyio.CancelScope() as turn:
                    await _one(bridge, hooks, line)
                if turn.cancelled_caught:
                    hooks._line("(interrupted)")
                turn = None
            group.cancel_scope.cancel()
    out.write("\n" + counts_line(bridge.counters) + "\n")
    out.flush()


async def _one(bridge: Bridge, hooks: TerminalHooks, line: str) -> None:
    if line.startswith("/"):
        question = await command(bridge, hooks, line)
        if question is None:
            return
    else:
        question = line
    outcome = await bridge.ask(question)
    if outcome.status == "answered":
        hooks._line("")


async def command(bridge: Bridge, hooks: TerminalHooks, line: str) -> str | None:
    """Run a slash command; returns a question to ask the model (``/prompt``), or None."""
    try:
        words = shlex.split(line)
    except ValueError as error:
        hooks._line(f"!  {error}")
        return None
    name, args = words[0], words[1:]
    if name == "/help":
        hooks._line(HELP)
    elif name == "/tools":
        hooks._line("\n".join(f"  {tool['name']}" for tool in bridge.toolbox.tools) or "  (no tools)")
    elif name == "/counts":
        hooks._line(counts_line(bridge.counters))
    elif name == "/read" and len(args) == 1:
        await _read(bridge, hooks, args[0])
    elif name == "/prompt" and args:
        return await _prompt(bridge, hooks, args[0], args[1:])
    else:
        hooks._line(f"!  unknown or incomplete command: {line}\n{HELP}")
    return None


async def _read(bridge: Bridge, hooks: TerminalHooks, uri: str) -> None:
    errors = []
    for server, client in bridge.toolbox.servers.items():
        try:
            result = await client.read_resource(uri)
        except MCPError as error:
            errors.append(f"{server}: {error.message}")
            continue
        texts = [
            item.get("text") or f"[{item.get('mimeType', 'binary')} content]"
            for item in result.get("contents") or ()
            if isinstance(item, dict)
        ]
        bridge.add_context(f"The resource {uri}:\n" + "\n".join(texts))
        hooks._line(f"i  {uri} ({sum(len(text) for text in texts)} characters) is in the conversation")
        return
    hooks._line(f"!  cannot read {uri}: {'; '.join(errors) or 'no servers'}")


async def _prompt(bridge: Bridge, hooks: TerminalHooks, name: str, pairs: list[str]) -> str | None:
    arguments = {}
    for pair in pairs:
        key, found, value = pair.partition("=")
        if not found:
            hooks._line(f"!  prompt arguments are key=value, not {pair!r}")
            return None
        arguments[key] = value
    errors = []
    for server, client in bridge.toolbox.servers.items():
        try:
            result = await client.get_prompt(name, arguments)
        except MCPError as error:
            errors.append(f"{server}: {error.message}")
            continue
        # Each message's content as text (an embedded resource's text included), in order.
        texts = [
            answer_for_model({"content": [message["content"]]})
            for message in result.get("messages") or ()
            if isinstance(message, dict) and isinstance(message.get("content"), dict)
        ]
        return "\n\n".join(texts)
    hooks._line(f"!  cannot get the prompt {name}: {'; '.join(errors) or 'no servers'}")
    return None
