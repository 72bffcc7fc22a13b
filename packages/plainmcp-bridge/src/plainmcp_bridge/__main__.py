"""``plainmcp-bridge``: the command line (``chat``, ``ask``, ``eval``).

Exit codes of ``ask``: 0 answered; 1 the model endpoint or a server failed; 2 a usage or configuration
error; 3 the model produced no valid call within the repair rounds; 4 the tool-round limit was reached;
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any, TextIO

import anyio
from plainmcp import MCPError, env_list_option, env_option, env_switch

from . import __version__
from .agent import ANSWERED, GAVE_UP, NO_TOOL, ROUND_LIMIT, TRUNCATED, Bridge, BridgeOptions, Hooks, transcript_line
from .chat_apis import APIS
from .constrain import CONSTRAIN_MODES, CONSTRAINED
from .constrain import resolve as resolve_constrain
from .models import ChatModel, ModelSettings
from .prompt import load_template
from .retry import RetryPolicy
from .servers_config import ServerSpec, inline_server, load_config, unique_names
from .terminal import TerminalHooks, ask_form, chat, confirmation, counts_line, printable
from .toolbox import ServerUnavailable, open_toolbox

EXIT = {ANSWERED: 0, "model_failed": 1, GAVE_UP: 3, ROUND_LIMIT: 4, NO_TOOL: 5, TRUNCATED: 6}


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog="plainmcp-bridge",
        description="Local models use MCP servers through a validating interceptor.",
    )
    command.add_argument("--version", action="version", version=f"plainmcp-bridge {__version__}")
    modes = command.add_subparsers(dest="mode", required=True, metavar="{chat,ask,eval}")
    chat_mode = modes.add_parser("chat", help="talk with the model in the terminal")
    ask_mode = modes.add_parser("ask", help="ask one question; the answer goes to stdout")
    ask_mode.add_argument("question")
    ask_mode.add_argument("--json", action="store_true", help="print the outcome and transcript as JSON instead")
    for mode in (chat_mode, ask_mode):
        _conversation_options(mode)
    eval_mode = modes.add_parser("eval", help="replay recorded model outputs through the interceptor")
    eval_mode.add_argument("cases", nargs="?", help="a corpus file (see plainmcp_bridge.evaluate)")
    eval_mode.add_argument("--from-log", metavar="FILE", help="replay a session recorded with ask/chat --log")
    eval_mode.add_argument("--max-repairs", type=int, default=2)
    eval_mode.add_argument("--json", action="store_true", help="print the rates as JSON")
    return command


def _conversation_options(mode: argparse.ArgumentParser) -> None:
    servers = mode.add_argument_group("servers")
    env_option(
        servers,
        "--config",
        "PLAINMCP_BRIDGE_CONFIG",
        metavar="FILE",
        help="an mcpServers file (the Claude Desktop / Cursor format)",
    )
    servers.add_argument(
        "--server", action="append", default=[], metavar="CMD", help="a stdio server command line (repeatable)"
    )
    model = mode.add_argument_group("model")
    env_option(
        model,
        "--api",
        "PLAINMCP_BRIDGE_API",
        choices=APIS,
        default="ollama",
        help="ollama (native /api/chat) or openai (OpenAI-compatible /chat/completions)",
    )
    env_option(
        model,
        "--base-url",
        "PLAINMCP_BRIDGE_BASE_URL",
        metavar="URL",
        help="default: the local Ollama (http://127.0.0.1:11434, with /v1 for --api openai)",
    )
    env_option(model, "--model", "PLAINMCP_BRIDGE_MODEL", default="llama3.2")
    env_option(model, "--api-key", "PLAINMCP_BRIDGE_API_KEY", metavar="KEY", help="sent as a bearer token")
    env_list_option(
        model,
        "--option",
        "PLAINMCP_BRIDGE_OPTIONS",
        metavar="KEY=VALUE",
        help="a model option (temperature=0, num_ctx=8192; values are JSON where they parse)",
    )
    env_switch(model, "--no-stream", "PLAINMCP_BRIDGE_NO_STREAM", help="ask for whole answers")
    env_option(
        model,
        "--turn-timeout",
        "PLAINMCP_BRIDGE_TURN_TIMEOUT",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds one model turn may take, retries included (default 120)",
    )
    env_option(
        model,
        "--retries",
        "PLAINMCP_BRIDGE_RETRIES",
        type=int,
        default=2,
        help="retries on connection errors, 429 and 5xx (default 2)",
    )
    safety = mode.add_argument_group("interceptor and safety")
    env_option(
        safety,
        "--max-repairs",
        "PLAINMCP_BRIDGE_MAX_REPAIRS",
        type=int,
        default=2,
        help="repair rounds per question before giving up (default 2)",
    )
    env_option(
        safety,
        "--max-rounds",
        "PLAINMCP_BRIDGE_MAX_ROUNDS",
        type=int,
        default=8,
        help="tool rounds per question (default 8)",
    )
    env_switch(safety, "--yes", "PLAINMCP_BRIDGE_YES", help="run tools that may change things without asking")
    env_switch(
        safety,
        "--require-tool",
        "PLAINMCP_BRIDGE_REQUIRE_TOOL",
        help="an answer without any successful tool result is not shown (exit 5)",
    )
    env_option(
        model,
        "--constrain",
        "PLAINMCP_BRIDGE_CONSTRAIN",
        choices=CONSTRAIN_MODES,
        default="auto",
        help="constrain the model's output to the tools' schemas: format (a JSON Schema the server enforces: "
        "llama.cpp's response_format, Ollama's format), grammar (a compact GBNF grammar, llama.cpp), decide "
        "(choose the tool first, then its arguments), tool-choice (decide, then vLLM's named tool_choice), "
        "off, or auto (format for --api openai with a local base URL, off otherwise); see docs/constrain.md",
    )
    env_option(
        model,
        "--shortlist",
        "PLAINMCP_BRIDGE_SHORTLIST",
        default="auto",
        metavar="N|auto|off",
        help="constrained, let each question call only its N best-matching tools (a word ranking of names, "
        f"descriptions and parameters); auto: {AUTO_SHORTLIST} when --constrain is in force, off otherwise",
    )
    env_list_option(
        safety, "--allow", "PLAINMCP_BRIDGE_ALLOW", metavar="TOOL", help="a tool that runs without asking (repeatable)"
    )
    env_option(
        safety,
        "--system-prompt",
        "PLAINMCP_BRIDGE_SYSTEM_PROMPT",
        metavar="FILE",
        help="replace the system prompt; {tools} in it stands for the tool descriptions",
    )
    env_option(mode, "--log", "PLAINMCP_BRIDGE_LOG", metavar="FILE", help="append every event as a JSON line")
    env_option(
        mode,
        "--log-level",
        "PLAINMCP_BRIDGE_LOG_LEVEL",
        default="warning",
        choices=["debug", "info", "warning", "error"],
    )


def _options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, found, value = pair.partition("=")
        if not found or not key:
            raise ValueError(f"--option takes KEY=VALUE, not {pair!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


#: The shortlist ``--shortlist auto`` gives a constrained turn.
AUTO_SHORTLIST = 3


def shortlist_size(value: str, constrain: str) -> int:
    """``--shortlist``'s value as a count of tools (0: no shortlist)."""
    text = value.strip().lower()
    if text == "auto":
        return AUTO_SHORTLIST if constrain in CONSTRAINED else 0
    if text in ("off", "0"):
        return 0
    if not text.isdigit():
        raise ValueError(f"--shortlist takes a number of tools, auto or off, not {value!r}")
    return int(text)


def _specs(args: argparse.Namespace) -> list[ServerSpec]:
    specs = load_config(args.config) if args.config else []
    specs += [inline_server(line) for line in args.server]
    if not specs:
        raise ValueError("no servers: give --config FILE or --server CMD")
    return unique_names(specs)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.mode == "eval":
        from .evaluate import main as evaluate

        return evaluate(args)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    try:
        for flag, value, least in (
            ("--max-repairs", args.max_repairs, 0),
            ("--max-rounds", args.max_rounds, 1),
            ("--retries", args.retries, 0),
        ):
            if value < least:
                raise ValueError(f"{flag} must be at least {least}, not {value}")
        specs = _specs(args)
        settings = ModelSettings(
            api=args.api,
            model=args.model,
            base_url=args.base_url,
            api_key=args.api_key,
            options=_options(args.option),
            stream=not args.no_stream,
            turn_timeout=args.turn_timeout,
            retry=RetryPolicy(attempts=max(1, args.retries + 1)),
            constrain=resolve_constrain(args.constrain, args.api, args.base_url),
        )
        template = load_template(args.system_prompt) if args.system_prompt else None
        options = BridgeOptions(
            max_repairs=args.max_repairs,
            max_rounds=args.max_rounds,
            yes=args.yes,
            allow=frozenset(args.allow),
            prompt_template=template,
            require_tool=args.require_tool,
            shortlist=shortlist_size(args.shortlist, settings.constrain),
        )
        log = open(args.log, "a", encoding="utf-8") if args.log else None  # closed below
    except (OSError, ValueError) as error:
        print(f"plainmcp-bridge: {error}", file=sys.stderr)
        return 2
    try:
        return anyio.run(_run, args, specs, settings, options, log)
    except KeyboardInterrupt:
        return 130
    finally:
        if log is not None:
            log.close()


async def _run(
    args: argparse.Namespace,
    specs: list[ServerSpec],
    settings: ModelSettings,
    options: BridgeOptions,
    log: TextIO | None,
) -> int:
    try:
        async with open_toolbox(specs, stderr="log") as toolbox, ChatModel(settings) as model:
            if args.mode == "chat":
                hooks: Hooks = TerminalHooks(sys.stdout, _read_line(sys.stdout))
            else:
                hooks = _AskHooks(sys.stdin.isatty())
            bridge = Bridge(toolbox, model, options, hooks)
            transcript: list[dict[str, Any]] = []
            bridge.sinks.append(transcript.append)
            if log is not None:

                def write_log(event: dict[str, Any]) -> None:
                    log.write(transcript_line(event) + "\n")
                    log.flush()

                bridge.sinks.append(write_log)
                bridge.log_sinks.append(write_log)
            try:
                if args.mode == "chat":
                    await chat(bridge, hooks, _read_line(sys.stdout))  # type: ignore[arg-type]  # chat made TerminalHooks
                    return 0
                return await _ask(bridge, args, transcript)
            finally:
                bridge.record("counts", **bridge.counters)
    except ServerUnavailable as error:
        print(f"plainmcp-bridge: cannot use {error}", file=sys.stderr)
        return 1
    except (MCPError, OSError) as error:
        print(f"plainmcp-bridge: a server failed: {error}", file=sys.stderr)
        return 1


async def _ask(bridge: Bridge, args: argparse.Namespace, transcript: list[dict[str, Any]]) -> int:
    outcome = await bridge.ask(args.question)
    code = EXIT[outcome.status]
    if args.json:
        document = {
            "status": outcome.status,
            "answer": outcome.answer,
            "rounds": outcome.rounds,
            "tool_results": outcome.tool_results,
            "counts": bridge.counters,
            "transcript": transcript,
        }
        print(json.dumps(document, ensure_ascii=False, indent=2, default=str))
    elif code == 0:
        print(outcome.answer)
    else:
        print(f"plainmcp-bridge: {outcome.answer}", file=sys.stderr)
    print(counts_line(bridge.counters), file=sys.stderr)
    return code


class _AskHooks(Hooks):
    """``ask``: nothing on stdout but the answer; confirmation asked on stderr when there is a terminal."""

    def __init__(self, interactive: bool) -> None:
        self.interactive = interactive

    def event(self, event: dict[str, Any]) -> None:
        if event["type"] == "declined" and not self.interactive:
            print(
                f"plainmcp-bridge: {event['name']} was not run: it may change things (allow it with --yes or --allow)",
                file=sys.stderr,
            )

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        if not self.interactive:
            print(
                f"plainmcp-bridge: {server} asked the user ({printable(message)}); declined: there is no terminal",
                file=sys.stderr,
            )
            return {"action": "decline"}
        return await ask_form(
            _read_line(sys.stderr), lambda line: print(line, file=sys.stderr), server, message, schema
        )

    async def confirm(self, call: Any, tool: dict[str, Any], route: tuple[str, str] = ("", "")) -> bool:
        if not self.interactive:
            return False
        print(confirmation(call, route), file=sys.stderr)
        answer = await _read_line(sys.stderr)("Run it? [y/N] ")
        return (answer or "").strip().lower() in ("y", "yes")


def _read_line(out: TextIO) -> Any:
    async def read(prompt: str) -> str | None:
        out.write(prompt)
        out.flush()
        line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        return line.rstrip("\n") if line else None

    return read


if __name__ == "__main__":
    sys.exit(main())
