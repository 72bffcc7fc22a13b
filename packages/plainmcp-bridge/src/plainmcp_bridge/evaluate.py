"""``plainmcp-bridge eval CASES``: replay recorded model outputs through the interceptor and measure it.

A corpus is a JSON document::

    {"toolsets": {"weather": [<MCP tool listings>], ...},
     "cases": [{"id": "...", "toolset": "weather", "kind": "wrong type",
                "attempts": [{"text": "...", "calls": [{"name": ..., "arguments": ...}]}, ...],
                "expect": {"name": "get_forecast", "arguments": {...}} | null}]}

``attempts[0]`` is what the model first answered; each later attempt is what it answered after the
repair message (recorded the same way). ``expect`` is the call the user meant (null when the right
outcome is no call, e.g. a model that should have asked for a missing value).

Three rates over the cases that expect a call:

- **pass-through**: the first answer is already a valid structured call, as a bridge that checks nothing
  would need it (name exact, arguments an object valid under the schema);
- **without repair**: the interceptor accepts the first answer (calls recovered from text, arguments
  parsed from a string, safe normalisations);
- **with repair**: it accepts an answer within ``1 + max_repairs`` attempts.

``eval --from-log FILE`` replays a session the bridge recorded with ``--log``: each question is a case
with the tool schemas the session had and the model's raw turns as its attempts, and ``expect`` is
``"any"`` (any valid call counts: a log does not say which call was meant).

An accepted call that differs from ``expect`` is counted as **wrong accepted**: the interceptor must never
turn a bad call into a different valid one (it does not guess), so this should stay 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .interceptor import Interceptor, ToolCatalog, ValidCall
from .recover import ProposedCall


@dataclass
class Report:
    cases: int = 0
    expecting_call: int = 0
    pass_through: int = 0
    without_repair: int = 0
    with_repair: int = 0
    wrong_accepted: int = 0
    no_call_expected_and_none_sent: int = 0
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)

    def rate(self, count: int) -> float:
        return round(100.0 * count / self.expecting_call, 1) if self.expecting_call else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "expecting_a_call": self.expecting_call,
            "pass_through_valid_percent": self.rate(self.pass_through),
            "valid_without_repair_percent": self.rate(self.without_repair),
            "valid_with_repair_percent": self.rate(self.with_repair),
            "wrong_accepted": self.wrong_accepted,
            "no_call_expected_and_none_sent": self.no_call_expected_and_none_sent,
            "by_kind": {kind: dict(counts) for kind, counts in sorted(self.by_kind.items())},
        }


def load_corpus(path: str | Path) -> dict[str, Any]:
    """Read a corpus. Raises OSError, or ValueError naming what is wrong with its shape."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    if (
        not isinstance(document, dict)
        or not isinstance(document.get("toolsets"), dict)
        or not isinstance(document.get("cases"), list)
    ):
        raise ValueError(f'{path}: expected {{"toolsets": {{...}}, "cases": [...]}}')
    for index, case in enumerate(document["cases"]):
        if (
            not isinstance(case, dict)
            or case.get("toolset") not in document["toolsets"]
            or not isinstance(case.get("attempts"), list)
            or not case["attempts"]
        ):
            raise ValueError(f"{path}: case {index} needs a known toolset and at least one attempt")
    return document


def corpus_from_log(path: str | Path) -> dict[str, Any]:
    """A corpus from a ``--log`` file: one case per question that reached the model (see the module's docstring)."""
    toolsets: dict[str, Any] = {}
    cases: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            raise ValueError(f"{path}:{number}: not a JSON line") from None
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "user":
            current = {"id": f"line {number}", "question": event.get("content"), "attempts": [], "expect": "any"}
            cases.append(current)
        elif kind == "tools" and current is not None:
            name = f"tools {len(toolsets) + 1}"
            toolsets[name] = event.get("tools") or []
            current["toolset"] = name
        elif kind == "model_turn" and current is not None:
            current["attempts"].append({"text": event.get("text") or "", "calls": event.get("calls") or []})
    cases = [case for case in cases if case["attempts"] and "toolset" in case]
    if not cases:
        raise ValueError(
            f"{path}: no question with the tool schemas and the model's turns (a log of this version's --log)"
        )
    return {"toolsets": toolsets, "cases": cases}


def evaluate(corpus: dict[str, Any], max_repairs: int = 2) -> Report:
    report = Report()
    catalogs = {name: ToolCatalog(tools) for name, tools in corpus["toolsets"].items()}
    for case in corpus["cases"]:
        report.cases += 1
        catalog = catalogs[case["toolset"]]
        expect = case.get("expect")
        kind = report.by_kind.setdefault(case.get("kind", "unlabelled"), Counter())
        kind["cases"] += 1
        accepted, attempts_used = _replay(catalog, case["attempts"], max_repairs)
        if expect is None:
            if accepted is None:
                report.no_call_expected_and_none_sent += 1
                kind["no call, as expected"] += 1
            else:
                report.wrong_accepted += 1
                kind["wrong accepted"] += 1
            continue
        report.expecting_call += 1
        if _pass_through(catalog, case["attempts"][0], expect):
            report.pass_through += 1
            kind["pass-through"] += 1
        if accepted is None:
            kind["not valid"] += 1
            continue
        if expect != "any" and (accepted.name, accepted.arguments) != (expect["name"], expect["arguments"]):
            report.wrong_accepted += 1
            kind["wrong accepted"] += 1
            continue
        report.with_repair += 1
        kind["with repair"] += 1
        if attempts_used == 1:
            report.without_repair += 1
            kind["without repair"] += 1
    return report


def _proposed(attempt: dict[str, Any]) -> tuple[str, list[ProposedCall]]:
    calls = [
        ProposedCall(call.get("name"), call.get("arguments"), id=f"call_{i}")
        for i, call in enumerate(attempt.get("calls") or [])
    ]
    return attempt.get("text") or "", calls


def _replay(catalog: ToolCatalog, attempts: list[dict[str, Any]], max_repairs: int) -> tuple[ValidCall | None, int]:
    """The first call accepted, and how many attempts it took; (None, n) when none was."""
    interceptor = Interceptor(catalog, max_repairs=max_repairs)
    interceptor.start_turn()
    for number, attempt in enumerate(attempts[: 1 + max_repairs], start=1):
        review = interceptor.review(*_proposed(attempt))
        if review.valid and not review.invalid:
            return review.valid[0], number
        if not review.has_calls or review.gave_up:
            return None, number
    return None, min(len(attempts), 1 + max_repairs)


def _pass_through(catalog: ToolCatalog, attempt: dict[str, Any], expect: Any) -> bool:
    calls = attempt.get("calls") or []
    if len(calls) != 1 or not isinstance(calls[0].get("arguments"), dict):
        return False
    verdict = catalog.check(ProposedCall(calls[0].get("name"), calls[0]["arguments"]))
    return (
        isinstance(verdict, ValidCall)
        and not verdict.notes
        and (expect == "any" or (verdict.name, verdict.arguments) == (expect["name"], expect["arguments"]))
    )


def render(report: Report) -> str:
    data = report.as_dict()
    lines = [
        f"cases: {data['cases']} ({data['expecting_a_call']} expect a call)",
        f"valid calls, pass-through (no interceptor): {data['pass_through_valid_percent']}%",
        f"valid calls, interceptor without repair:    {data['valid_without_repair_percent']}%",
        f"valid calls, interceptor with repair:       {data['valid_with_repair_percent']}%",
        f"wrong calls accepted: {data['wrong_accepted']}",
        f"no call expected and none sent: {data['no_call_expected_and_none_sent']}",
    ]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    try:
        if args.from_log:
            corpus = corpus_from_log(args.from_log)
        elif args.cases:
            corpus = load_corpus(args.cases)
        else:
            raise ValueError("give a corpus file or --from-log FILE")
    except (OSError, ValueError) as error:
        print(f"plainmcp-bridge: {error}", file=sys.stderr)
        return 2
    report = evaluate(corpus, args.max_repairs)
    print(json.dumps(report.as_dict(), indent=2) if args.json else render(report))
    return 0
