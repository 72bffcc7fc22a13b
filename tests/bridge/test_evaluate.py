"""``plainmcp-bridge eval``: the rates it reports mean what they say, on small corpora and on the committed one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from plainmcp_bridge.evaluate import evaluate, load_corpus

from .tools import FORECAST, NOW

DATA = Path(__file__).with_name("data")
CORPUS = DATA / "corpus.json"
README = Path(__file__).resolve().parents[2] / "packages" / "plainmcp-bridge" / "docs" / "interceptor.md"


def corpus(*cases: dict[str, Any]) -> dict[str, Any]:
    return {"toolsets": {"t": [FORECAST, NOW]}, "cases": [{"toolset": "t", **case} for case in cases]}


def attempt(name: Any, arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


GOOD = {"name": "get_forecast", "arguments": {"city": "Paris", "days": 2}}


def test_each_rate_counts_what_it_says() -> None:
    report = evaluate(
        corpus(
            {"kind": "a", "attempts": [attempt("get_forecast", {"city": "Paris", "days": 2})], "expect": GOOD},
            {"kind": "b", "attempts": [attempt("get_forecast", '{"city": "Paris", "days": 2}')], "expect": GOOD},
            {
                "kind": "c",
                "attempts": [
                    attempt("get_forecast", {"city": "Paris", "days": "2"}),
                    attempt("get_forecast", {"city": "Paris", "days": 2}),
                ],
                "expect": GOOD,
            },
            {"kind": "d", "attempts": [attempt("forecast", {})] * 3, "expect": GOOD},
        )
    )
    assert report.as_dict() | {"by_kind": None} == {
        "cases": 4,
        "expecting_a_call": 4,
        "pass_through_valid_percent": 25.0,
        "valid_without_repair_percent": 50.0,
        "valid_with_repair_percent": 75.0,
        "wrong_accepted": 0,
        "no_call_expected_and_none_sent": 0,
        "by_kind": None,
    }


def test_repairs_beyond_the_budget_do_not_count() -> None:
    late = {
        "attempts": [attempt("x", {}), attempt("y", {}), attempt("z", {}), attempt("get_forecast", GOOD["arguments"])],
        "expect": GOOD,
    }
    assert evaluate(corpus(late), max_repairs=2).with_repair == 0
    assert evaluate(corpus(late), max_repairs=3).with_repair == 1


def test_a_valid_call_that_is_not_the_intended_one_is_counted_as_wrong() -> None:
    report = evaluate(
        corpus(
            {"attempts": [attempt("get_forecast", {"city": "Lyon"})], "expect": GOOD},
            {"attempts": [attempt("get_time", {})], "expect": None},
            {"attempts": [{"text": "Which city?"}], "expect": None},
        )
    )
    assert (report.wrong_accepted, report.with_repair, report.no_call_expected_and_none_sent) == (2, 0, 1)


def test_a_bad_corpus_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"toolsets": {}, "cases": [{"toolset": "nope", "attempts": []}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="case 0 needs a known toolset"):
        load_corpus(path)
    done = subprocess.run([sys.executable, "-m", "plainmcp_bridge", "eval", str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and "case 0" in done.stderr


def test_the_committed_corpus_is_large_varied_and_up_to_date() -> None:
    document = load_corpus(CORPUS)
    kinds = {case["kind"] for case in document["cases"]}
    assert len(document["cases"]) >= 100
    assert {
        "wrong type",
        "missing required",
        "synonym field",
        "invented tool",
        "stringified arguments",
        "call as text",
        "enum drift",
        "never right",
    } <= kinds
    # corpus.json is what make_corpus.py writes (regenerate it after editing the script).
    done = subprocess.run(
        [sys.executable, "-c", "import make_corpus, json; print(json.dumps(make_corpus.cases))"],
        cwd=DATA,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == document["cases"]


def test_the_readme_reports_the_corpus_numbers() -> None:
    rates = evaluate(load_corpus(CORPUS)).as_dict()
    done = subprocess.run(
        [sys.executable, "-m", "plainmcp_bridge", "eval", str(CORPUS)], capture_output=True, text=True, check=True
    )
    readme = README.read_text(encoding="utf-8")
    # The README quotes the command's output as it is.
    assert done.stdout.strip() in readme
    assert f"{rates['valid_with_repair_percent']}%" in done.stdout
    assert re.search(rf"{rates['cases']} recorded-style\s+cases", readme)
