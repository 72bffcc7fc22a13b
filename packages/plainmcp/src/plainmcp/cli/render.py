"""Terminal output: what a person reads. Plain text, no colour codes, wrapped to the terminal.

Every function returns a string (or lines) and writes nothing, so the commands decide where it goes
(stdout for results, stderr for progress and notes) and the tests can read it.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import Any

INDENT = "    "


def width() -> int:
    return max(60, min(120, shutil.get_terminal_size((100, 24)).columns))


def dumps(value: Any) -> str:
    """Pretty JSON, non-ASCII kept (for ``--json`` and structured content)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def short(value: Any, limit: int = 100) -> str:
    """One line of at most ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _wrapped(text: str, indent: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.strip().splitlines() or [""]:
        lines.extend(
            textwrap.wrap(paragraph, width() - len(indent), initial_indent=indent, subsequent_indent=indent)
            or [indent.rstrip()]
        )
    return lines


# ------------------------------------------------------------------------------------- inspect


def schema_type(schema: Any) -> str:
    """A short type for a JSON Schema: ``string``, ``integer | null``, ``array of string``, ``"a" | "b"``."""
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {schema_type(schema.get('items'))}" if "items" in schema else "array"
    for combinator in ("anyOf", "oneOf"):
        if isinstance(schema.get(combinator), list):
            return " | ".join(schema_type(option) for option in schema[combinator])
    return str(kind) if kind else "any"


def parameters(schema: Any) -> list[str]:
    """One line per property of an object schema: ``name: type (required) - description``."""
    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    lines = []
    for name, prop in properties.items():
        line = f"{name}: {schema_type(prop)}"
        if name in required:
            line += " (required)"
        if isinstance(prop, dict) and "default" in prop:
            line += f" = {json.dumps(prop['default'], ensure_ascii=False)}"
        if isinstance(prop, dict) and prop.get("description"):
            line += f" - {short(prop['description'], 90)}"
        lines.append(line)
    return lines


HINTS = (
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open-world"),
)


def tool_lines(tool: dict[str, Any]) -> list[str]:
    head = tool.get("name", "?")
    title = tool.get("title") or (tool.get("annotations") or {}).get("title")
    if title:
        head += f"  ({title})"
    hints = [label for key, label in HINTS if (tool.get("annotations") or {}).get(key) is True]
    if hints:
        head += "  [" + ", ".join(hints) + "]"
    lines = [f"  {head}"]
    if tool.get("description"):
        lines.extend(_wrapped(tool["description"], INDENT))
    params = parameters(tool.get("inputSchema"))
    lines.extend(f"{INDENT}- {line}" for line in params)
    if not params:
        lines.append(f"{INDENT}(no arguments)")
    if "outputSchema" in tool:
        lines.append(
            f"{INDENT}returns: "
            + short(", ".join(parameters(tool["outputSchema"])) or schema_type(tool["outputSchema"]), width() - 13)
        )
    return lines


def report(info: dict[str, Any]) -> str:
    """The ``inspect`` report as text, from the dict ``--json`` prints."""
    server = info.get("serverInfo") or {}
    lines = [f"{server.get('name', '?')} {server.get('version', '')}".rstrip()]
    if server.get("title"):
        lines[0] += f"  ({server['title']})"
    if server.get("description"):
        lines.extend(_wrapped(server["description"], "  "))
    lines.append(f"  protocol {info.get('protocolVersion')} ({info.get('era')} era) over {info.get('transport')}")
    if info.get("supportedVersions"):
        lines.append("  supports " + ", ".join(info["supportedVersions"]))
    capabilities = info.get("capabilities") or {}
    lines.append("  capabilities: " + (", ".join(_capability(k, v) for k, v in capabilities.items()) or "none"))
    if info.get("instructions"):
        lines.append("  instructions:")
        lines.extend(_wrapped(info["instructions"], INDENT))
    sections = (
        ("tools", "Tools", tool_lines),
        ("resources", "Resources", _resource_lines),
        ("resourceTemplates", "Resource templates", _template_lines),
        ("prompts", "Prompts", _prompt_lines),
    )
    for key, title, render in sections:
        if key not in info:
            continue
        items = info[key]
        lines.append("")
        lines.append(f"{title} ({len(items)})")
        for item in items:
            lines.extend(render(item))
        if not items:
            lines.append("  (none)")
    for key, message in (info.get("errors") or {}).items():
        lines.append("")
        lines.append(f"{key}: error {message}")
    return "\n".join(lines)


def _capability(name: str, value: Any) -> str:
    flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
    return f"{name} ({', '.join(flags)})" if flags else name


def _resource_lines(resource: dict[str, Any]) -> list[str]:
    line = f"  {resource.get('uri')}  {resource.get('name', '')}"
    if resource.get("mimeType"):
        line += f"  [{resource['mimeType']}]"
    lines = [line.rstrip()]
    if resource.get("description"):
        lines.extend(_wrapped(resource["description"], INDENT))
    return lines


def _template_lines(template: dict[str, Any]) -> list[str]:
    return _resource_lines({**template, "uri": template.get("uriTemplate")})


def _prompt_lines(prompt: dict[str, Any]) -> list[str]:
    lines = [f"  {prompt.get('name')}" + (f"  ({prompt['title']})" if prompt.get("title") else "")]
    if prompt.get("description"):
        lines.extend(_wrapped(prompt["description"], INDENT))
    for argument in prompt.get("arguments") or []:
        line = f"{INDENT}- {argument.get('name')}"
        if argument.get("required"):
            line += " (required)"
        if argument.get("description"):
            line += f" - {short(argument['description'], 90)}"
        lines.append(line)
    return lines


# ------------------------------------------------------------------------------------- results


def block(item: dict[str, Any]) -> str:
    """One content block: text as it is, anything else as a one-line description."""
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text", ""))
    if kind in ("image", "audio"):
        return f"<{kind} {item.get('mimeType', '?')}, {decoded_size(item.get('data', ''))} bytes>"
    if kind == "resource_link":
        return f"<link {item.get('uri')} {item.get('name', '')}>".replace(" >", ">")
    if kind == "resource":
        return contents(item.get("resource") or {})
    return f"<{kind}> {short(item)}"


def decoded_size(data: Any) -> int:
    """How many bytes a base64 text decodes to, without decoding it."""
    if not isinstance(data, str):
        return 0
    data = "".join(data.split())
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))


def contents(item: dict[str, Any]) -> str:
    """One entry of ``resources/read`` contents (or an embedded resource)."""
    if "text" in item:
        return str(item["text"])
    if "blob" in item:
        return f"<blob {item.get('uri', '')} {item.get('mimeType', '?')}, {decoded_size(item['blob'])} bytes>"
    return short(item)


def tool_result(result: dict[str, Any]) -> str:
    """A ``tools/call`` result: its content blocks, then the structured content when the blocks
    do not already say it."""
    parts = [block(item) for item in result.get("content") or []]
    structured = result.get("structuredContent")
    if structured is not None:
        text = dumps(structured)
        if not any(part.strip() == text.strip() or _same_json(part, structured) for part in parts):
            parts.append(text)
    return "\n".join(parts)


def _same_json(text: str, value: Any) -> bool:
    try:
        return json.loads(text) == value
    except ValueError:
        return False


def resource_result(result: dict[str, Any]) -> str:
    return "\n".join(contents(item) for item in result.get("contents") or [])


def prompt_result(result: dict[str, Any]) -> str:
    lines = []
    if result.get("description"):
        lines.append(f"# {result['description']}")
    for message in result.get("messages") or []:
        body = message.get("content") or {}
        text = block(body) if isinstance(body, dict) else "\n".join(block(b) for b in body)
        lines.append(f"[{message.get('role', '?')}] {text}")
    return "\n".join(lines)


def progress(done: float, total: float | None, message: str | None) -> str:
    """A progress line: ``[=====>    ] 3/5 step 3`` with a total, ``3 step 3`` without one."""
    label = f" {message}" if message else ""
    if total:
        filled = int(20 * max(0.0, min(1.0, done / total)))
        bar = "=" * filled + (">" if filled < 20 else "") + " " * (19 - filled)
        return f"[{bar}] {_number(done)}/{_number(total)}{label}"
    return f"{_number(done)}{label}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
