"""One operation against a server: ``call`` a tool, ``read`` a resource, get a ``prompt``.

Arguments come as ``--arg name=value`` (repeatable) and/or ``--args '{"json": "object"}'``
(``--arg`` wins on a clash). For ``call``, a ``name=value`` is converted by the tool's input
schema: a property typed ``string`` gets the text as it is, any other type gets the text parsed as
JSON (``count=3`` is the number 3, ``tags=["a"]`` a list), so ``zip=01234`` stays a string when
the tool says it is one. ``name:=json`` always parses JSON. Over HTTP, a call with arguments lists
the tools first as well, so the transport knows which of them to mirror in ``Mcp-Param-*`` headers.
"""

from __future__ import annotations

import argparse
import base64
import difflib
import json
import sys
from typing import Any

from ..errors import ErrorCode, MCPError
from . import render
from .run import EXIT_CODES, OK, TOOL_ERROR, run
from .targets import UsageError, add_target_options, target_from

OPERATIONS = {
    "call": ("TOOL", "call a tool and print its result", "Call one tool and print its result."),
    "read": ("URI", "read a resource and print its contents", "Read one resource and print its contents."),
    "prompt": ("NAME", "get a prompt and print its messages", "Get one prompt and print its messages."),
}


def add_parsers(commands: Any) -> None:
    for command, (operand, summary, description) in OPERATIONS.items():
        parser = commands.add_parser(
            command,
            help=summary,
            description=description + ("\n\n" + __doc__.split("\n\n", 1)[1].strip() if command == "call" else ""),
            usage=f"plainmcp {command} [options] (TARGET {operand} | {operand} -- COMMAND [ARG ...])",
            epilog="TARGET is a URL (http:// or https://) or a server command, quoted when it has spaces.\n\n"
            + EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.add_argument(
            "operands",
            nargs="+",
            metavar=f"TARGET {operand}",
            help=f"the server (omit it when the command follows --) and the {operand.lower()}",
        )
        if command != "read":
            parser.add_argument(
                "--arg",
                action="append",
                default=[],
                metavar="NAME=VALUE",
                dest="arg",
                help="an argument (repeatable)" + ("; NAME:=JSON for a JSON value" if command == "call" else ""),
            )
            parser.add_argument("--args", metavar="JSON", help="the arguments as one JSON object")
        else:
            parser.add_argument(
                "-o",
                "--output",
                metavar="FILE",
                help="write the first content's bytes (text or decoded blob) to FILE instead of printing",
            )
        parser.add_argument("--json", action="store_true", help="print the raw JSON result")
        add_target_options(parser)
        parser.set_defaults(run=main, operation=command)


def main(args: argparse.Namespace) -> int:
    def target() -> Any:
        written, args.name = _operands(args)
        if args.operation != "read":  # malformed arguments are refused before anything starts
            parse_arguments(args.arg, args.args, None, typed=args.operation == "call")
        chosen = target_from(args, written, args.command_tail)
        args.over_http = chosen.url is not None
        return chosen

    body = {"call": _call, "read": _read, "prompt": _prompt}[args.operation]
    return run(target, lambda client: body(client, args), verbose=args.verbose)


def _operands(args: argparse.Namespace) -> tuple[str | None, str]:
    operands = args.operands
    if args.command_tail is not None:
        if len(operands) != 1:
            raise UsageError(f"with the command after --, give only the {args.operation} operand before it")
        return None, operands[0]
    if len(operands) != 2:
        raise UsageError(
            f"expected TARGET and one operand, got {len(operands)} word(s): quote a server command with spaces"
        )
    return operands[0], operands[1]


# ---------------------------------------------------------------------------------- arguments


def parse_arguments(
    pairs: list[str], json_text: str | None, schema: dict[str, Any] | None, *, typed: bool = True
) -> dict[str, Any]:
    """``--args`` and ``--arg`` items as one dict. With ``typed``, values are converted by
    ``schema`` (see the module docstring); without it, they stay strings. Raises :class:`UsageError`."""
    arguments: dict[str, Any] = {}
    if json_text is not None:
        try:
            arguments = json.loads(json_text)
        except ValueError as error:
            raise UsageError(f"--args is not JSON: {error}") from None
        if not isinstance(arguments, dict):
            raise UsageError("--args must be a JSON object")
    properties = (schema or {}).get("properties") or {}
    for pair in pairs:
        name, found, value = pair.partition("=")
        if not found or not name:
            raise UsageError(f"--arg {pair!r}: expected NAME=VALUE")
        if typed and name.endswith(":"):
            name = name[:-1]
            try:
                arguments[name] = json.loads(value)
            except ValueError as error:
                raise UsageError(f"--arg {name}:=...: not JSON: {error}") from None
        elif typed:
            arguments[name] = convert(value, properties.get(name))
        else:
            arguments[name] = value
    return arguments


def convert(value: str, schema: Any) -> Any:
    """The text of one ``--arg``, as the property's schema wants it (see the module docstring)."""
    if not isinstance(schema, dict) or _accepts_string_only(schema):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # the server's validation will say what it wanted


def _accepts_string_only(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "string":
        return True
    if "enum" in schema:
        return all(isinstance(v, str) for v in schema["enum"])
    return kind is None and not any(k in schema for k in ("anyOf", "oneOf", "const"))


# --------------------------------------------------------------------------------- operations


async def _call(client: Any, args: argparse.Namespace) -> int:
    schema = None
    if _needs_listing(args):
        # One listing serves both needs: the schema converts the --arg texts, and over HTTP the
        # transport learns from it which arguments a 2026-07-28 call mirrors as Mcp-Param-*
        # headers (SEP-2243; it only mirrors for tools it has seen listed, else -32020).
        tools = await client.list_all_tools()
        schema = next((t.get("inputSchema") for t in tools if t.get("name") == args.name), None)
    arguments = parse_arguments(args.arg, args.args, schema)
    progress = _Progress()
    try:
        result = await client.call_tool(args.name, arguments, on_progress=progress)
    except MCPError as error:
        raise await _with_suggestion(client, args.name, error) from None
    finally:
        progress.done()
    print(render.dumps(result) if args.json else render.tool_result(result))
    return TOOL_ERROR if result.get("isError") else OK


async def _with_suggestion(client: Any, name: str, error: MCPError) -> MCPError:
    """``error``, with "did you mean ...?" when the server has no tool ``name`` but one close to it."""
    if error.code not in (ErrorCode.INVALID_PARAMS, ErrorCode.METHOD_NOT_FOUND):
        return error
    try:
        names = [str(tool.get("name")) for tool in await client.list_all_tools()]
    except Exception:  # the suggestion is a courtesy: the server's own error is what matters
        return error
    if name in names:
        return error
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        hint = f"did you mean {' or '.join(close)}?"
    elif len(names) <= 10:
        hint = f"the server's tools: {', '.join(sorted(names)) or 'none'}"
    else:
        hint = f"the server has {len(names)} tools: plainmcp inspect lists them"
    return MCPError(error.code, f"{error.message} ({hint})", error.data)


def _needs_listing(args: argparse.Namespace) -> bool:
    """Whether ``call`` lists the tools first: an ``--arg`` to convert by the schema, or any
    argument at all over HTTP (it may have to be mirrored in a header). A call without arguments,
    or over stdio with only JSON arguments, goes straight out."""
    if any(not pair.partition("=")[0].endswith(":") for pair in args.arg):
        return True
    return bool(getattr(args, "over_http", False)) and bool(args.arg or args.args)


async def _read(client: Any, args: argparse.Namespace) -> int:
    result = await client.read_resource(args.name)
    if args.output is not None:
        entries = result.get("contents") or []
        if not entries:
            raise UsageError(f"{args.name} has no contents to write")
        first = entries[0]
        data = base64.b64decode(first["blob"]) if "blob" in first else str(first.get("text", "")).encode("utf-8")
        with open(args.output, "wb") as file:
            file.write(data)
        print(f"wrote {len(data)} bytes to {args.output}", file=sys.stderr)
        return OK
    print(render.dumps(result) if args.json else render.resource_result(result))
    return OK


async def _prompt(client: Any, args: argparse.Namespace) -> int:
    arguments = parse_arguments(args.arg, args.args, None, typed=False)
    if any(not isinstance(value, str) for value in arguments.values()):
        raise UsageError("prompt arguments are strings")
    result = await client.get_prompt(args.name, arguments or None)
    print(render.dumps(result) if args.json else render.prompt_result(result))
    return OK


class _Progress:
    """Progress notifications on stderr: one line rewritten in a terminal, a line each otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.shown = False

    def __call__(self, done: float, total: float | None, message: str | None) -> None:
        line = render.progress(done, total, message)
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(f"progress {line}\n")
        sys.stderr.flush()
        self.shown = True

    def done(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
