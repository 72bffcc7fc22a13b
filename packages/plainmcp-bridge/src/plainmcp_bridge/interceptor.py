"""The interceptor: every tool call a model proposes is checked before anything is sent to a server.

Rules, in order, for each proposed call:

1. Calls the model wrote as text (``<tool_call>`` tags, a fenced JSON block, a bare JSON object) are
   recovered (:mod:`plainmcp_bridge.recover`); arguments sent as a JSON string are parsed. Both are reported.
2. The tool name must exist exactly (case-sensitive). Otherwise the model is told which tools exist and
   the closest match; the name is never corrected silently.
3. The arguments must be a JSON object valid under the tool's ``inputSchema`` (``jsonschema``, compiled
   once per tool). Each problem names the field's path, what the schema expects and what was sent.
4. Normalisations that cannot change meaning are applied and reported: whitespace around a string that
   is then exactly an allowed ``enum``/``const`` value, and missing arguments for a tool that takes none
   of them required. Nothing else is guessed.
5. An invalid call is never sent. The model gets a repair message; after ``max_repairs`` rounds in one
   user turn the interceptor gives up, and the caller tells the user so.
6. A tool result with ``isError`` goes back to the model as the tool's answer with the instruction to
   explain the failure rather than invent a result (:func:`answer_for_model`).

No I/O: the caller feeds model output in and sends what comes out.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError

from .hostile import MAX_DEPTH, bounded_search, non_finite, too_deep
from .problems import Problem, field_path, kind_of, problems_of, quote, sent
from .recover import STRING_ARGUMENTS, ProposedCall, first_call, recover_calls

DEFAULT_MAX_REPAIRS = 2
#: At most this many problems are listed per call (a model fixes a few at a time best).
MAX_PROBLEMS = 10
#: A tool's answer to the model is cut at this many characters.
MAX_ANSWER = 20_000

#: Shown after a failed tool result, so the model reports the failure instead of making a result up.
ERROR_INSTRUCTION = (
    "The tool reported an error (above). Explain this failure to the user in plain words. "
    "Do not invent a result, and do not claim the action succeeded."
)


@dataclass(frozen=True)
class ValidCall:
    """A call that may be sent: ``arguments`` are valid under the tool's schema."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None
    #: Normalisations applied, one sentence each (empty when the call arrived valid as sent).
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class InvalidCall:
    """A call that must not be sent, with the problems found."""

    name: str
    id: str | None
    problems: tuple[Problem, ...]
    #: Set when the tool name is not one of ours (then ``problems`` is empty).
    unknown_tool: bool = False
    message: str = ""


@dataclass
class Counters:
    """What one session's interceptor saw. ``proposed`` counts every call checked; a call valid in
    the first round of a user turn is ``valid_first_try``, one valid after a repair message is
    ``repaired``; ``rejected`` counts invalid proposals; ``gave_up`` the turns abandoned;
    ``failed_at_server`` (filled by the caller) the valid calls whose result had ``isError``."""

    proposed: int = 0
    valid_first_try: int = 0
    repaired: int = 0
    rejected: int = 0
    gave_up: int = 0
    failed_at_server: int = 0
    normalised: int = 0
    recovered_from_text: int = 0
    #: Calls written as text after a turn's first one: cut, never run.
    cut_after_first: int = 0
    #: Turns that ended at the length limit (a cut call is also counted in ``rejected``).
    truncated: int = 0
    #: Valid calls identical to one already run in the same user turn: answered, not run again (caller).
    repeated: int = 0
    #: Valid calls sent to a server (caller), and those whose result was not an error.
    ran: int = 0
    succeeded: int = 0
    #: User turns answered in words without any tool result (caller).
    answered_without_tool: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass(frozen=True)
class Review:
    """The interceptor's verdict on one model turn."""

    valid: tuple[ValidCall, ...]
    invalid: tuple[InvalidCall, ...]
    #: The model's text with recovered calls taken out.
    text: str
    #: True when the model wrote its calls as text (there are no API call ids to answer).
    from_text: bool = False
    #: True when the repair budget of this user turn is spent: tell the user, ask the model no more.
    gave_up: bool = False
    #: Which repair round this review's repair message opens (1-based; 0 when nothing was invalid).
    repair_round: int = 0
    #: Calls written as text after the first one, cut with the text around them (never run).
    dropped: int = 0
    #: The model's text as the history keeps it: up to the end of its first call written as text.
    said: str | None = None

    @property
    def has_calls(self) -> bool:
        return bool(self.valid or self.invalid)


@dataclass
class _Tool:
    name: str
    schema: dict[str, Any]
    validator: Any
    required: tuple[str, ...] = field(default=())


class ToolCatalog:
    """The tools a model may call, each with its compiled input validator.

    ``tools`` are MCP tool listings (``{"name", "inputSchema", ...}``). A listing whose schema is not
    a valid JSON Schema is kept with a validator that only demands an object, and named in
    ``broken_schemas``: the server is at fault, and its own validation still runs.
    """

    def __init__(self, tools: Iterable[Mapping[str, Any]]) -> None:
        self._tools: dict[str, _Tool] = {}
        self.broken_schemas: list[str] = []
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str):
                continue
            schema = tool.get("inputSchema")
            if not isinstance(schema, dict):
                schema = {"type": "object"}
            self._tools[name] = _Tool(
                name,
                schema,
                self._compile(name, schema),
                tuple(r for r in schema.get("required") or () if isinstance(r, str)),
            )

    def _compile(self, name: str, schema: dict[str, Any]) -> Any:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            if too_deep(schema):
                raise SchemaError(f"nested more than {MAX_DEPTH} levels")
            cls.check_schema(schema)
        except (SchemaError, RecursionError):
            self.broken_schemas.append(name)
            return jsonschema.Draft202012Validator({"type": "object"})
        return _bounded(cls)(schema)

    @property
    def names(self) -> list[str]:
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def check(self, call: ProposedCall) -> ValidCall | InvalidCall:
        """Check one proposed call against rules 1-4 (see the module's docstring)."""
        notes: list[str] = []
        if call.from_text:
            notes.append(f"the call was written as text ({call.source}) and recovered")
        name = call.name if isinstance(call.name, str) else quote(call.name)
        tool = self._tools.get(name) if isinstance(call.name, str) else None
        if tool is None:
            return InvalidCall(name, call.id, (), unknown_tool=True, message=self.unknown_tool_message(name))
        arguments, problem = _arguments_object(call.arguments, tool, notes)
        if problem is not None:
            return self._invalid(tool.name, call.id, [problem])
        problems = self._validate(tool, arguments, notes)
        if problems:
            return self._invalid(tool.name, call.id, problems)
        return ValidCall(tool.name, arguments, call.id, tuple(notes))

    def _validate(self, tool: _Tool, arguments: dict[str, Any], notes: list[str]) -> list[Problem]:
        if too_deep(arguments):
            return [Problem("(arguments)", f"at most {MAX_DEPTH} levels of nesting", "more")]
        if non_finite(arguments):
            return [Problem("(arguments)", "JSON numbers", "NaN or an infinity, which JSON has not")]
        try:
            errors = list(tool.validator.iter_errors(arguments))
            if errors and _trim_enum_values(errors, arguments, notes):
                errors = list(tool.validator.iter_errors(arguments))
        except RecursionError:  # a schema referring to itself without end: the server's to judge
            notes.append("the tool's schema could not be checked here (it refers to itself without end)")
            return []
        if not errors:
            return []
        problems: list[Problem] = []
        for error in sorted(errors, key=lambda e: [str(part) for part in e.absolute_path]):
            for problem in problems_of(error):
                if problem not in problems:
                    problems.append(problem)
        return problems[:MAX_PROBLEMS]

    def _invalid(self, name: str, call_id: str | None, problems: list[Problem]) -> InvalidCall:
        count = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        lines = [f"Your call to {name} was not run: {count} with its arguments."]
        lines += [f"- {problem}" for problem in problems]
        lines.append(
            f"Call {name} again with corrected arguments. If you do not know a required value, "
            "ask the user for it instead of guessing."
        )
        return InvalidCall(name, call_id, tuple(problems), message="\n".join(lines))

    def unknown_tool_message(self, name: str) -> str:
        """What the model is told when it names a tool that does not exist."""
        if not self._tools:
            return f"There is no tool named {quote(name)}, and no tools are available. Answer without tools."
        close = self.closest(name)
        hint = f" The closest is {quote(close)}." if close else ""
        return (
            f"There is no tool named {quote(name)}.{hint} The tools are: {', '.join(self.names)}. "
            "Use one of these names exactly, or answer without a tool."
        )

    def closest(self, name: str) -> str | None:
        """The existing tool name nearest to ``name`` (a case-insensitive match first), or None."""
        for existing in self._tools:
            if existing.lower() == name.lower():
                return existing
        folded = {existing.lower().replace("-", "_"): existing for existing in self._tools}
        match = difflib.get_close_matches(name.lower().replace("-", "_"), list(folded), n=1, cutoff=0.5)
        if match:
            return folded[match[0]]
        # Invented names often contain the real one's words ("weather_forecast" for "get_forecast").
        words = set(name.lower().replace("-", "_").split("_"))
        sharing = [existing for existing in self._tools if words & set(existing.lower().split("_")) - {"get", "list"}]
        return sharing[0] if len(sharing) == 1 else None


@functools.lru_cache(maxsize=8)
def _bounded(cls: Any) -> Any:
    """``cls`` with the keywords that run a server's regular expressions bounded in time
    (:func:`~plainmcp_bridge.hostile.bounded_search`); a pattern that cannot be judged in time counts
    as matching: the bridge lets it through and the server decides."""
    return jsonschema.validators.extend(
        cls,
        {"pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional},
    )


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if (
        validator.is_type(instance, "string")
        and isinstance(pattern, str)
        and bounded_search(pattern, instance) is False
    ):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if bounded_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key for key in instance if key not in known and not any(bounded_search(p, key) is not False for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        listed = ", ".join(repr(extra) for extra in sorted(extras))
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _arguments_object(value: Any, tool: _Tool, notes: list[str]) -> tuple[dict[str, Any], Problem | None]:
    """Rule 1's arguments half: an object as is; a JSON string holding an object, parsed; nothing, an
    empty object when the tool requires no field. Anything else is a problem."""
    if isinstance(value, dict):
        return value, None
    if value is None or value == "":
        if tool.required:
            return {}, Problem(
                "(arguments)", "an object with the fields " + ", ".join(map(quote, tool.required)), "nothing"
            )
        notes.append("no arguments were sent; an empty object was used (the tool requires none)")
        return {}, None
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except RecursionError:
            return {}, Problem("(arguments)", f"a JSON object of at most {MAX_DEPTH} levels", "more levels")
        except json.JSONDecodeError as error:
            return {}, Problem(
                "(arguments)",
                "a JSON object",
                f"text that is not valid JSON ({error.msg} at character {error.pos}): {quote(value)}",
            )
        except ValueError:  # valid JSON, but a number past Python's digit limit (it has no .msg or .pos)
            return {}, Problem("(arguments)", "a JSON object", f"text with a number too long to read: {quote(value)}")
        if isinstance(parsed, dict):
            notes.append(_PARSED_STRING)
            return parsed, None
        return {}, Problem("(arguments)", "a JSON object", f"a string holding {kind_of(parsed)}: {quote(value)}")
    return {}, Problem("(arguments)", "a JSON object", sent(value))


def _trim_enum_values(errors: list[Any], arguments: dict[str, Any], notes: list[str]) -> bool:
    """Trim whitespace around string values that are then exactly an allowed ``enum``/``const``
    value (in place); True when something changed."""
    changed = False
    for error in errors:
        if error.validator not in ("enum", "const") or not isinstance(error.instance, str):
            continue
        allowed = error.validator_value if error.validator == "enum" else [error.validator_value]
        trimmed = error.instance.strip()
        if trimmed == error.instance or trimmed not in allowed or not isinstance(allowed, list):
            continue
        path = list(error.absolute_path)
        if not path or not _replace(arguments, path, trimmed):
            continue
        notes.append(f"{field_path(path)}: whitespace around {quote(trimmed)} was trimmed")
        changed = True
    return changed


def _replace(container: Any, path: list[Any], value: Any) -> bool:
    for part in path[:-1]:
        try:
            container = container[part]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        container[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return False
    return True


class Interceptor:
    """Checks each model turn's calls and keeps the repair budget of the current user turn.

    Call :meth:`start_turn` when the user speaks, then :meth:`review` with each model turn. The
    catalog can be swapped (``tools/list_changed``) at any time.
    """

    def __init__(self, catalog: ToolCatalog, *, max_repairs: int = DEFAULT_MAX_REPAIRS) -> None:
        if max_repairs < 0:
            raise ValueError("max_repairs must be >= 0")
        self.catalog = catalog
        self.max_repairs = max_repairs
        self.counters = Counters()
        self._repairs_used = 0

    def start_turn(self) -> None:
        """A new user turn: the repair budget is full again."""
        self._repairs_used = 0

    def review(self, text: str, calls: Iterable[ProposedCall] = ()) -> Review:
        """Check the calls of one model turn. Structured ``calls`` win; without any, calls written in
        ``text`` are recovered. The returned :class:`Review` says what to send, what to tell the model,
        and whether the turn is given up."""
        proposed = list(calls)
        rest = text
        from_text = False
        dropped = 0
        said: str | None = None
        if not proposed:
            # Only the first call written as text runs; what follows it is the model's imagined dialogue.
            first, said, dropped = first_call(text)
            proposed = [first] if first is not None else []
            from_text = bool(proposed)
            if first is not None:
                _, rest = recover_calls(said)
        valid: list[ValidCall] = []
        invalid: list[InvalidCall] = []
        for call in proposed:
            self.counters.proposed += 1
            verdict = self.catalog.check(_copied(call))
            if isinstance(verdict, ValidCall):
                valid.append(verdict)
                if self._repairs_used == 0:
                    self.counters.valid_first_try += 1
                else:
                    self.counters.repaired += 1
                if any(_is_normalisation(note, call) for note in verdict.notes):
                    self.counters.normalised += 1
            else:
                invalid.append(verdict)
                self.counters.rejected += 1
            if call.from_text:
                self.counters.recovered_from_text += 1
        self.counters.cut_after_first += dropped
        review = self._verdict(valid, invalid, rest, from_text, dropped)
        return replace(review, said=said) if from_text else review

    def _verdict(
        self, valid: list[ValidCall], invalid: list[InvalidCall], rest: str, from_text: bool, dropped: int = 0
    ) -> Review:
        if not invalid:
            return Review(tuple(valid), (), rest, from_text, dropped=dropped)
        if self._repairs_used >= self.max_repairs:
            self.counters.gave_up += 1
            return Review(tuple(valid), tuple(invalid), rest, from_text, gave_up=True, dropped=dropped)
        self._repairs_used += 1
        return Review(tuple(valid), tuple(invalid), rest, from_text, repair_round=self._repairs_used, dropped=dropped)

    def cut_off(self, text: str) -> Review:
        """A turn that stopped at the length limit inside a call: one invalid call, told to write it again
        shorter (it takes a repair round like any invalid call)."""
        self.counters.proposed += 1
        self.counters.rejected += 1
        self.counters.truncated += 1
        problem = Problem("(call)", "a whole call", "a call cut off at the answer's length limit")
        message = (
            "Your tool call was cut off (the answer reached its length limit) and was not run. "
            "Write the call again, complete and short, and nothing else."
        )
        invalid = InvalidCall("(cut off)", None, (problem,), message=message)
        return self._verdict([], [invalid], text, True)

    def repair_message(self, review: Review) -> str:
        """One message for all of a review's invalid calls, with the round count."""
        parts = [call.message for call in review.invalid]
        parts.append(f"(Repair round {review.repair_round} of {self.max_repairs}.)")
        return "\n\n".join(parts)


def gave_up_message(review: Review) -> str:
    """What the user is told when the model could not produce a valid call."""
    names = ", ".join(sorted({call.name for call in review.invalid}))
    first = review.invalid[0]
    reason = "an unknown tool" if first.unknown_tool else (str(first.problems[0]) if first.problems else "invalid")
    return (
        f"The model did not produce a valid call to {names} after the allowed repair rounds "
        f"(last problem: {reason}). Nothing was sent to the server."
    )


def answer_for_model(result: Mapping[str, Any]) -> str:
    """A ``tools/call`` result as the text the model reads. Text content is joined; structured
    content stands in when there is no text; other content is named. With ``isError`` the
    failure is stated and :data:`ERROR_INSTRUCTION` follows."""
    pieces: list[str] = []
    for item in result.get("content") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            pieces.append(item["text"])
        elif kind == "resource" and isinstance(item.get("resource"), dict):
            resource = item["resource"]
            pieces.append(
                resource.get("text") if isinstance(resource.get("text"), str) else f"[resource {resource.get('uri')}]"
            )
        elif kind == "resource_link":
            pieces.append(f"[resource link {item.get('uri')}]")
        elif kind in ("image", "audio"):
            pieces.append(f"[{kind} {item.get('mimeType', '')}]".replace(" ]", "]"))
    if not pieces and "structuredContent" in result:
        pieces.append(json.dumps(result["structuredContent"], ensure_ascii=False))
    text = "\n".join(pieces) or "(the tool returned nothing)"
    if len(text) > MAX_ANSWER:
        text = text[:MAX_ANSWER] + f"\n[cut: the answer was {len(text)} characters]"
    if result.get("isError") is True:
        return f"Error: {text}\n\n{ERROR_INSTRUCTION}"
    return text


#: The note for arguments sent as a JSON string: the OpenAI API's own form (not a normalisation there).
_PARSED_STRING = "the arguments arrived as a JSON string and were parsed"


def _is_normalisation(note: str, call: ProposedCall) -> bool:
    """Whether ``note`` records a change the model's call needed: not the recovery of a text call, and
    not the parsing of a string that the API sends as a string by design."""
    if note.startswith("the call was written"):
        return False
    return not (note == _PARSED_STRING and call.source == STRING_ARGUMENTS)


def _copied(call: ProposedCall) -> ProposedCall:
    # Normalisation edits arguments in place: never the caller's objects. Arguments nested too deep
    # to copy are refused by the check that follows (it looks at their depth first).
    if isinstance(call.arguments, dict | list) and not too_deep(call.arguments):
        return ProposedCall(call.name, copy.deepcopy(call.arguments), call.id, call.from_text, call.source)
    return call
