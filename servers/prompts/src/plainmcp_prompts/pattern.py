"""Argument patterns: a small regular-expression language matched in linear time.

A pattern comes from a prompt file, which anyone who can write in a library directory controls, and
is matched against a value a client sends. Python's ``re`` backtracks: ``(a+)+$`` against thirty
``a`` and a ``b`` runs for minutes, holding the event loop. So patterns are compiled here into a
Thompson automaton and run by simulating every state at once (a Pike VM without captures): the cost
is at most (instructions) x (characters), whatever the pattern, and both are bounded.

The language (a value must match the whole pattern; a leading ``^`` and a trailing ``$`` are
accepted and mean nothing more): literal characters; ``.`` (any character but a newline); classes
``[abc]``, ``[a-z0-9_]``, ``[^...]``; ``\\d \\w \\s`` and ``\\D \\W \\S`` (ASCII, inside classes too);
``\\`` before any punctuation for the character itself; groups ``( )`` and ``(?: )``; alternation
``|``; ``* + ?`` and ``{n}``, ``{n,}``, ``{n,m}`` (n, m at most MAX_REPEAT). Everything else
(backreferences, lookaround, flags, lazy quantifiers) is refused with :class:`PatternError`, so a
file never means something this engine does not do.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Longest pattern text, and most instructions it may compile to (``{n,m}`` copies its operand).
MAX_PATTERN_CHARS = 200
MAX_INSTRUCTIONS = 400
MAX_REPEAT = 100
#: States held in the steps remembered while one value is matched (a few MB at most).
MAX_REMEMBERED_STATES = 50_000
#: States stepped by the matches of one request at most (:class:`Budget`): a value that would need
#: more is refused, not judged. Typical patterns step a few states a character.
MAX_MATCH_STEPS = 1_000_000

Test = Callable[[str], bool]


def _between(low: str, high: str) -> Test:
    """The test of a range ``[low-high]`` in a character class."""
    return lambda c: low <= c <= high


_DIGITS = frozenset(string.digits)
_WORD = frozenset(string.ascii_letters + string.digits + "_")
_SPACE = frozenset(" \t\n\r\f\v")
_SHORTHANDS: dict[str, Test] = {
    "d": _DIGITS.__contains__,
    "w": _WORD.__contains__,
    "s": _SPACE.__contains__,
    "D": lambda c: c not in _DIGITS,
    "W": lambda c: c not in _WORD,
    "S": lambda c: c not in _SPACE,
}


class PatternError(ValueError):
    """The pattern is not in the language this module matches (the message says what is wrong)."""


class TooComplex(Exception):
    """Matching needed more work than its :class:`Budget` allowed (the value was not judged)."""


class Stopped(Exception):
    """The caller stopped the matching (its request was cancelled)."""


class Budget:
    """The work the matches of one request may do together, in states stepped (each a test of one
    character and a set insertion), and a flag the caller sets from another thread to stop them.

    Matching runs off the event loop; the budget bounds its CPU (about a second at most), the flag
    lets a cancellation end it within a few hundred characters."""

    def __init__(self, steps: int | None = None) -> None:
        self.left = MAX_MATCH_STEPS if steps is None else steps
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True

    def spend(self, steps: int) -> None:
        """Raises Stopped once :meth:`stop` was called, TooComplex once the budget is spent."""
        if self.stopped:
            raise Stopped()
        self.left -= steps
        if self.left < 0:
            raise TooComplex()


def _class_test(members: frozenset[str], others: tuple[Test, ...]) -> Test:
    if not others:
        return members.__contains__
    return lambda c: c in members or any(test(c) for test in others)


# ----------------------------------------------------------------------------------------- parsing

# A parsed pattern: ("test", fn) | ("cat", [nodes]) | ("alt", [nodes]) | ("repeat", node, low, high|None)
Node = tuple[Any, ...]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str | None:
        return self.text[self.at] if self.at < len(self.text) else None

    def take(self) -> str:
        if self.at >= len(self.text):
            raise PatternError("the pattern ends too early")
        char = self.text[self.at]
        self.at += 1
        return char

    def alternation(self, depth: int) -> Node:
        if depth > 16:
            raise PatternError("groups are nested more than 16 deep")
        branches = [self.sequence(depth)]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence(depth))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self, depth: int) -> Node:
        items: list[Node] = []
        while self.peek() not in (None, "|", ")"):
            items.append(self.quantified(self.atom(depth)))
        return ("cat", items)

    def atom(self, depth: int) -> Node:
        char = self.take()
        if char == "(":
            if self.text.startswith("?:", self.at):
                self.at += 2
            elif self.peek() == "?":
                raise PatternError("only (?: ) groups are supported: no lookaround, flags or named groups")
            inner = self.alternation(depth + 1)
            if self.peek() != ")":
                raise PatternError("a '(' is never closed")
            self.at += 1
            return inner
        if char == "[":
            return ("test", self.char_class())
        if char == ".":
            return ("test", lambda c: c != "\n")
        if char == "\\":
            return ("test", self.escape())
        if char in "*+?{":
            raise PatternError(f"{char!r} has nothing to repeat")
        if char == ")":
            raise PatternError("a ')' has no '('")
        if char in "^$":
            raise PatternError(f"{char!r} is only allowed at the very start (^) or end ($): a value matches whole")
        return ("test", char.__eq__)

    def escape(self) -> Test:
        char = self.take()
        if char in _SHORTHANDS:
            return _SHORTHANDS[char]
        if char in "nt":
            return {"n": "\n", "t": "\t"}[char].__eq__
        if char in string.punctuation:
            return char.__eq__
        raise PatternError(f"'\\{char}' is not supported (escape only punctuation, or use \\d \\w \\s \\n \\t)")

    def char_class(self) -> Test:
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        # One set lookup for the class's characters, then its ranges and shorthands: a class of a
        # hundred members costs one test, not a hundred (it runs per live state and character).
        members: set[str] = set()
        others: list[Test] = []
        first = True
        while True:
            char = self.take()
            if char == "]" and not first:
                break
            first = False
            if char == "\\":
                escaped = self.take()
                self.at -= 1
                test = self.escape()
                if escaped in _SHORTHANDS:
                    others.append(test)
                else:
                    members.add({"n": "\n", "t": "\t"}.get(escaped, escaped))
                continue
            if self.peek() == "-" and self.at + 1 < len(self.text) and self.text[self.at + 1] != "]":
                self.at += 1
                high = self.take()
                if high == "\\":
                    raise PatternError("a range in [...] must end with a plain character")
                if high < char:
                    raise PatternError(f"the range {char}-{high} in [...] is backwards")
                others.append(_between(char, high))
            else:
                members.add(char)
        test = _class_test(frozenset(members), tuple(others))
        if negated:
            return lambda c: c != "\n" and not test(c)
        return test

    def quantified(self, node: Node) -> Node:
        while True:
            char = self.peek()
            if char == "*":
                low, high = 0, None
            elif char == "+":
                low, high = 1, None
            elif char == "?":
                low, high = 0, 1
            elif char == "{":
                low, high = self.braces()
                node = ("repeat", node, low, high)
                continue
            else:
                return node
            self.at += 1
            if self.peek() in ("?", "+"):
                raise PatternError("lazy and possessive quantifiers (*?, ++...) are not supported")
            node = ("repeat", node, low, high)

    def braces(self) -> tuple[int, int | None]:
        end = self.text.find("}", self.at)
        body = self.text[self.at + 1 : end] if end != -1 else ""
        low_text, comma, high_text = body.partition(",")
        if end == -1 or not low_text.isdigit() or (high_text and not high_text.isdigit()):
            raise PatternError("a '{' must be {n}, {n,} or {n,m} (write \\{ for the character)")
        self.at = end + 1
        low = int(low_text[:4])
        high = low if not comma else (int(high_text[:4]) if high_text else None)
        if low > MAX_REPEAT or (high is not None and high > MAX_REPEAT):
            raise PatternError(f"a repeat count is above {MAX_REPEAT}")
        if high is not None and high < low:
            raise PatternError(f"{{{low},{high}}} is backwards")
        return low, high


# --------------------------------------------------------------------------------------- compiling

# Instructions: ("test", fn) (on to the next instruction) | ("split", a, b) | ("jump", to) | ("match",)


class _Compiler:
    def __init__(self) -> None:
        self.program: list[list[Any]] = []

    def emit(self, *instruction: object) -> int:
        if len(self.program) >= MAX_INSTRUCTIONS:
            raise PatternError(f"the pattern is too complex (more than {MAX_INSTRUCTIONS} steps once compiled)")
        self.program.append(list(instruction))
        return len(self.program) - 1

    def node(self, node: Node) -> None:
        kind = node[0]
        if kind == "test":
            self.emit("test", node[1])
        elif kind == "cat":
            for item in node[1]:
                self.node(item)
        elif kind == "alt":
            jumps = []
            for branch in node[1][:-1]:
                split = self.emit("split", None, None)
                self.program[split][1] = split + 1
                self.node(branch)
                jumps.append(self.emit("jump", None))
                self.program[split][2] = len(self.program)
            self.node(node[1][-1])
            for jump in jumps:
                self.program[jump][1] = len(self.program)
        else:
            _, inner, low, high = node
            for _ in range(low):
                self.node(inner)
            if high is None:  # inner*
                split = self.emit("split", None, None)
                self.program[split][1] = split + 1
                self.node(inner)
                self.emit("jump", split)
                self.program[split][2] = len(self.program)
            else:  # (inner)? repeated high - low times
                for _ in range(high - low):
                    split = self.emit("split", None, None)
                    self.program[split][1] = split + 1
                    self.node(inner)
                    self.program[split][2] = len(self.program)


@dataclass(frozen=True)
class Pattern:
    """A compiled pattern: :meth:`matches` is true when the whole value matches."""

    text: str
    program: tuple[tuple[Any, ...], ...]

    def matches(self, value: str, budget: Budget | None = None) -> bool:
        """Whether the whole ``value`` matches; its work is taken from ``budget`` (a fresh one when
        None). Raises TooComplex when the budget runs out, Stopped when it is stopped."""
        budget = Budget() if budget is None else budget
        program = self.program
        current = frozenset(self._closure({0}))
        # Each step's result is remembered by (states, character) for this value: a long value over
        # few distinct characters then costs a dictionary lookup per character. What is remembered
        # is bounded in states held, not in steps: 4096 steps of 300 states each would be ~70 MB.
        steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        held = 0
        for char in value:
            if not current:
                return False
            known = steps.get((current, char))
            if known is None:
                budget.spend(2 * len(current))  # the tests, then the closure (at most as many states)
                following = {pc + 1 for pc in current if program[pc][0] == "test" and program[pc][1](char)}
                known = frozenset(self._closure(following))
                if held + len(current) + len(known) <= MAX_REMEMBERED_STATES:
                    steps[(current, char)] = known
                    held += len(current) + len(known)
            current = known
        return any(program[pc][0] == "match" for pc in current)

    def _closure(self, starts: set[int]) -> set[int]:
        """The states reachable from ``starts`` without reading a character (each visited once)."""
        program = self.program
        seen: set[int] = set()
        stack = list(starts)
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            instruction = program[pc]
            if instruction[0] == "split":
                stack += (instruction[1], instruction[2])
            elif instruction[0] == "jump":
                stack.append(instruction[1])
        return seen


@functools.lru_cache(maxsize=256)
def compile_pattern(text: str) -> Pattern:
    """``text`` compiled. Raises PatternError saying what is not supported or wrong."""
    if len(text) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
    body = text[1:] if text.startswith("^") else text
    if body.endswith("$") and not body.endswith("\\$"):
        body = body[:-1]
    parser = _Parser(body)
    tree = parser.alternation(0)
    if parser.at != len(body):
        raise PatternError("a ')' has no '('")
    compiler = _Compiler()
    compiler.node(tree)
    compiler.emit("match")
    program = [tuple(instruction) for instruction in compiler.program]
    return Pattern(text, tuple(program))
