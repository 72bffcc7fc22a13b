"""RFC 6570 URI templates: expansion, and matching a URI back to its variables.

Matching is what a server needs (which template does ``resources/read`` name?), and it is only
well defined for templates whose expressions are separated by literals; that covers the templates
servers publish. Supported operators: none, ``+``, ``#``, ``.``, ``/``, ``;``, ``?`` and ``&``;
prefix modifiers (``:3``) and explode (``*``) are accepted in templates and matched as plain values.
"""

from __future__ import annotations

import re

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^}]+)\}")
_VARNAME = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_RESERVED_SAFE = ":/?#[]@!$&'()*+,;="

# operator -> (first, separator, named, allow reserved characters)
_OPERATORS: dict[str, tuple[str, str, bool, bool]] = {
    "": ("", ",", False, False),
    "+": ("", ",", False, True),
    "#": ("#", ",", False, True),
    ".": (".", ".", False, False),
    "/": ("/", "/", False, False),
    ";": (";", ";", True, False),
    "?": ("?", "&", True, False),
    "&": ("&", "&", True, False),
}


class TemplateError(ValueError):
    """The template is not a valid RFC 6570 template."""


class _Expression:
    """One ``{...}`` of a template: its operator and variable names (a plain class: a dataclass costs
    every process's start-up ~0.4 ms)."""

    __slots__ = ("operator", "names")

    def __init__(self, operator: str, names: tuple[str, ...]) -> None:
        self.operator = operator
        self.names = names


class UriTemplate:
    """A parsed template. ``match`` returns the variables of a URI, or None."""

    __slots__ = ("template", "variables", "_parts", "_regex")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts: list[str | _Expression] = []
        pattern: list[str] = []
        position = 0
        for found in _EXPRESSION.finditer(template):
            literal = template[position : found.start()]
            if "{" in literal or "}" in literal:
                raise TemplateError(f"unbalanced brace in {template!r}")
            self._parts.append(literal)
            pattern.append(re.escape(literal))
            expression = _parse_expression(found.group(1), found.group(2), template)
            self._parts.append(expression)
            pattern.append(_expression_pattern(expression))
            position = found.end()
        tail = template[position:]
        if "{" in tail or "}" in tail:
            raise TemplateError(f"unbalanced brace in {template!r}")
        self._parts.append(tail)
        pattern.append(re.escape(tail))
        self._regex = re.compile("".join(pattern) + r"\Z", re.DOTALL)
        self.variables = tuple(name for part in self._parts if isinstance(part, _Expression) for name in part.names)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it matches, percent-decoded; None if it does not.
        Raises UnicodeDecodeError when a variable's percent-escapes are not UTF-8."""
        found = self._regex.match(uri)
        if found is None:
            return None
        from urllib.parse import unquote  # here, not at the top: it costs ~2 ms of every server's start-up

        values: dict[str, str] = {}
        for name, value in found.groupdict().items():
            if value is not None:
                # Strict: %FF and %FE must not both become U+FFFD and name the same thing.
                values[_group_to_name(name, self.variables)] = unquote(value, errors="strict")
        return values

    def expand(self, values: dict[str, str]) -> str:
        from urllib.parse import quote  # see match()

        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            first, separator, named, reserved = _OPERATORS[part.operator]
            pieces = []
            for name in part.names:
                if name not in values or values[name] is None:
                    continue
                encoded = quote(str(values[name]), safe=_RESERVED_SAFE if reserved else "")
                if named:
                    pieces.append(f"{name}={encoded}" if encoded or part.operator != ";" else name)
                else:
                    pieces.append(encoded)
            if pieces:
                out.append(first + separator.join(pieces))
        return "".join(out)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"


def _parse_expression(operator: str, body: str, template: str) -> _Expression:
    names = []
    for spec in body.split(","):
        name = re.sub(r"(\*|:[1-9][0-9]{0,3})$", "", spec)
        if not _VARNAME.match(name):
            raise TemplateError(f"invalid variable {spec!r} in {template!r}")
        names.append(name)
    return _Expression(operator, tuple(names))


def _group(name: str) -> str:
    # Regex group names must be identifiers; variable names may contain '.' and '%XX'.
    return "v_" + "".join(c if c.isalnum() else f"_{ord(c):x}_" for c in name)


def _group_to_name(group: str, names: tuple[str, ...]) -> str:
    return next(name for name in names if _group(name) == group)


def _expression_pattern(expression: _Expression) -> str:
    operator, names = expression.operator, expression.names
    first, separator, named, reserved = _OPERATORS[operator]
    value = r"[^/?#&;,.]*" if operator == "." else (r".*?" if reserved else r"[^/?#&;,]*")
    if operator in ("", "+") and len(names) == 1:
        return f"(?P<{_group(names[0])}>{value if reserved else r'[^/?#]+?'})"
    pieces = []
    for index, name in enumerate(names):
        lead = re.escape(first if index == 0 else separator)
        key = re.escape(name) + "=" if named else ""
        if operator == "":
            lead = "" if index == 0 else re.escape(",")
        pieces.append(f"(?:{lead}{key}(?P<{_group(name)}>{value}))?")
    return "".join(pieces)
