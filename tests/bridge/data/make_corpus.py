"""Write corpus.json: recorded-style model outputs for ``plainmcp-bridge eval`` (run: python make_corpus.py).

The cases are written by hand from the failure modes small local models show with tools (the seed
article's list, and what Ollama users report): wrong argument types, missing required fields, extra or
synonym fields, invented tool names, stringified (and truncated) arguments, calls written as text, enum
drift, and models that never get it right. Each case is what the model first answered, then what it
answered after each repair message. They are not recordings of one particular model; the rates they give
say what the interceptor does with these shapes, not how a given model behaves.

The tool listings (toolsets.json) are those of this repository's weather, sqlite and filesystem servers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CITIES = ["Paris", "Shanghai", "Lima", "Oslo", "Nairobi", "Portland, OR", "Sydney", "Toronto"]
TABLES = ["books", "authors", "customers", "orders", "order_items"]

cases: list[dict[str, Any]] = []


def structured(name: Any, arguments: Any, text: str = "") -> dict[str, Any]:
    return {"text": text, "calls": [{"name": name, "arguments": arguments}]}


def words(text: str) -> dict[str, Any]:
    return {"text": text, "calls": []}


def case(kind: str, toolset: str, attempts: list[dict[str, Any]], expect: tuple[str, dict[str, Any]] | None) -> None:
    cases.append(
        {
            "id": f"{kind.replace(' ', '-')}-{sum(c['kind'] == kind for c in cases) + 1}",
            "kind": kind,
            "toolset": toolset,
            "attempts": attempts,
            "expect": None if expect is None else {"name": expect[0], "arguments": expect[1]},
        }
    )


# Valid at once.
for city in CITIES[:6]:
    case(
        "valid",
        "weather",
        [structured("get_forecast", {"location": city, "days": 3})],
        ("get_forecast", {"location": city, "days": 3}),
    )
for city in CITIES[:4]:
    case(
        "valid",
        "weather",
        [structured("get_current_weather", {"location": city, "units": "metric"})],
        ("get_current_weather", {"location": city, "units": "metric"}),
    )
for table in TABLES:
    case("valid", "sqlite", [structured("describe_table", {"table": table})], ("describe_table", {"table": table}))
for sql in ["SELECT count(*) FROM books", "SELECT name FROM authors WHERE country = ?"]:
    arguments: dict[str, Any] = {"sql": sql} if "?" not in sql else {"sql": sql, "params": ["NZ"]}
    case("valid", "sqlite", [structured("query", arguments)], ("query", arguments))
case("valid", "filesystem", [structured("list_directory", {"path": "."})], ("list_directory", {"path": "."}))
case(
    "valid",
    "filesystem",
    [structured("read_text_file", {"path": "notes.txt", "head": 20})],
    ("read_text_file", {"path": "notes.txt", "head": 20}),
)

# Wrong types: numbers and booleans as strings; most fixed after one repair, some after two.
for index, city in enumerate(CITIES):
    good = {"location": city, "days": 5}
    attempts = [structured("get_forecast", {"location": city, "days": "5"})]
    if index % 3 == 2:
        attempts.append(structured("get_forecast", {"location": city, "days": "five"}))
    attempts.append(structured("get_forecast", good))
    case("wrong type", "weather", attempts, ("get_forecast", good))
for name, bad, good_args, toolset in [
    (
        "query",
        {"sql": "SELECT * FROM books", "max_rows": "10"},
        {"sql": "SELECT * FROM books", "max_rows": 10},
        "sqlite",
    ),
    ("search_locations", {"name": "Springfield", "count": "5"}, {"name": "Springfield", "count": 5}, "weather"),
    ("get_forecast", {"location": "Oslo", "hourly": "true"}, {"location": "Oslo", "hourly": True}, "weather"),
    ("read_text_file", {"path": "a.txt", "head": "20"}, {"path": "a.txt", "head": 20}, "filesystem"),
    ("directory_tree", {"path": ".", "maxDepth": "2"}, {"path": ".", "maxDepth": 2}, "filesystem"),
    (
        "get_current_weather",
        {"latitude": "48.85", "longitude": "2.35"},
        {"latitude": 48.85, "longitude": 2.35},
        "weather",
    ),
    ("read_multiple_files", {"paths": "a.txt"}, {"paths": ["a.txt"]}, "filesystem"),
]:
    case("wrong type", toolset, [structured(name, bad), structured(name, good_args)], (name, good_args))

# Missing required fields: the value is in the conversation (fixed), or it is not (the model asks).
for table in TABLES:
    case(
        "missing required",
        "sqlite",
        [structured("describe_table", {}), structured("describe_table", {"table": table})],
        ("describe_table", {"table": table}),
    )
for name, toolset, question in [
    ("describe_table", "sqlite", "Which table should I describe?"),
    ("search_files", "filesystem", "What file name pattern should I search for?"),
    ("search_locations", "weather", "Which place do you mean?"),
    ("query", "sqlite", "What would you like to know from the database?"),
    ("read_text_file", "filesystem", "Which file should I open?"),
]:
    case("missing required", toolset, [structured(name, {}), words(question)], None)

# Extra fields and synonyms of the real names.
for name, bad, good_args, toolset in [
    ("get_forecast", {"city": "Paris"}, {"location": "Paris"}, "weather"),
    ("get_forecast", {"location": "Lima", "num_days": 2}, {"location": "Lima", "days": 2}, "weather"),
    ("get_forecast", {"location": "Oslo", "unit": "metric"}, {"location": "Oslo", "units": "metric"}, "weather"),
    ("get_current_weather", {"place": "Toronto"}, {"location": "Toronto"}, "weather"),
    ("get_alerts", {"us_state": "CA"}, {"state": "CA"}, "weather"),
    ("search_locations", {"query": "Portland"}, {"name": "Portland"}, "weather"),
    ("describe_table", {"table_name": "books"}, {"table": "books"}, "sqlite"),
    ("describe_table", {"name": "orders"}, {"table": "orders"}, "sqlite"),
    ("query", {"query": "SELECT 1"}, {"sql": "SELECT 1"}, "sqlite"),
    ("query", {"sql": "SELECT * FROM books", "limit": 5}, {"sql": "SELECT * FROM books", "max_rows": 5}, "sqlite"),
    ("list_directory", {"directory": "."}, {"path": "."}, "filesystem"),
    ("read_text_file", {"file": "notes.txt"}, {"path": "notes.txt"}, "filesystem"),
    ("read_text_file", {"path": "notes.txt", "lines": 10}, {"path": "notes.txt", "head": 10}, "filesystem"),
    ("search_files", {"path": ".", "glob": "*.md"}, {"path": ".", "pattern": "*.md"}, "filesystem"),
    ("search_content", {"path": ".", "text": "TODO"}, {"path": ".", "query": "TODO"}, "filesystem"),
]:
    case("synonym field", toolset, [structured(name, bad), structured(name, good_args)], (name, good_args))

# Invented tool names (synonyms of the real ones).
for bad, good, good_args, toolset in [
    ("get_weather", "get_current_weather", {"location": "Paris"}, "weather"),
    ("weather_forecast", "get_forecast", {"location": "Oslo"}, "weather"),
    ("forecast", "get_forecast", {"location": "Lima", "days": 2}, "weather"),
    ("Get_Forecast", "get_forecast", {"location": "Sydney"}, "weather"),
    ("get-alerts", "get_alerts", {"state": "TX"}, "weather"),
    ("find_location", "search_locations", {"name": "Springfield"}, "weather"),
    ("run_sql", "query", {"sql": "SELECT 1"}, "sqlite"),
    ("sql_query", "query", {"sql": "SELECT count(*) FROM orders"}, "sqlite"),
    ("get_tables", "list_tables", {}, "sqlite"),
    ("show_schema", "describe_table", {"table": "books"}, "sqlite"),
    ("list_files", "list_directory", {"path": "."}, "filesystem"),
    ("read_file", "read_text_file", {"path": "notes.txt"}, "filesystem"),
    ("ls", "list_directory", {"path": "docs"}, "filesystem"),
    ("grep", "search_content", {"path": ".", "query": "TODO"}, "filesystem"),
    ("file_info", "get_file_info", {"path": "notes.txt"}, "filesystem"),
]:
    case("invented tool", toolset, [structured(bad, good_args), structured(good, good_args)], (good, good_args))

# Arguments as a JSON string (what OpenAI-compatible servers pass on), whole or cut short.
for index, city in enumerate(CITIES[:6]):
    good = {"location": city, "days": index + 1}
    case("stringified arguments", "weather", [structured("get_forecast", json.dumps(good))], ("get_forecast", good))
for table in TABLES[:4]:
    case(
        "stringified arguments",
        "sqlite",
        [structured("describe_table", json.dumps({"table": table}))],
        ("describe_table", {"table": table}),
    )
for city in CITIES[:5]:
    good = {"location": city, "days": 2}
    cut = json.dumps(good)[:-1]  # the closing brace lost, as small models end it
    case(
        "truncated arguments",
        "weather",
        [structured("get_forecast", cut), structured("get_forecast", good)],
        ("get_forecast", good),
    )

# Calls written as text.
for city in CITIES[:5]:
    good = {"location": city}
    payload = json.dumps({"name": "get_current_weather", "arguments": good})
    case("call as text", "weather", [words(f"<tool_call>\n{payload}\n</tool_call>")], ("get_current_weather", good))
for table in TABLES:
    payload = json.dumps({"name": "describe_table", "parameters": {"table": table}}, indent=2)
    case(
        "call as text",
        "sqlite",
        [words(f"I'll check the schema.\n```json\n{payload}\n```")],
        ("describe_table", {"table": table}),
    )
for path in ["notes.txt", "README.md", "docs/index.md", "src/app.py", "data.csv"]:
    payload = json.dumps({"name": "get_file_info", "arguments": {"path": path}})
    case("call as text", "filesystem", [words(f"Sure! {payload}")], ("get_file_info", {"path": path}))

# Enum drift: whitespace (normalised), case and synonyms (repaired).
for value in [" metric", "metric ", "imperial\n"]:
    case(
        "enum drift",
        "weather",
        [structured("get_current_weather", {"location": "Oslo", "units": value})],
        ("get_current_weather", {"location": "Oslo", "units": value.strip()}),
    )
for bad, good in [
    ("Metric", "metric"),
    ("celsius", "metric"),
    ("fahrenheit", "imperial"),
    ("km/h", "kmh"),
    ("MPH", "mph"),
]:
    key = "wind_speed_unit" if good in ("kmh", "mph") else "units"
    case(
        "enum drift",
        "weather",
        [
            structured("get_current_weather", {"location": "Paris", key: bad}),
            structured("get_current_weather", {"location": "Paris", key: good}),
        ],
        ("get_current_weather", {"location": "Paris", key: good}),
    )
case(
    "enum drift",
    "filesystem",
    [
        structured("list_directory", {"path": ".", "sortBy": "date"}),
        structured("list_directory", {"path": ".", "sortBy": "modified"}),
    ],
    ("list_directory", {"path": ".", "sortBy": "modified"}),
)

# Models that never get it right: the bridge gives up and sends nothing.
for attempts in [
    [structured("get_weather", {"city": "Paris"})] * 3,
    [
        structured("get_forecast", {"location": "Paris", "days": "3"}),
        structured("get_forecast", {"days": 3}),
        structured("get_forecast", {"location": "Paris", "days": 30}),
    ],
    [structured("describe_table", {"table": 5})] * 3,
    [structured("query", '{"sql": "SELECT')] * 3,
    [
        words('{"tool": "read_file", "file": "notes.txt"}'),
        structured("read", {"file": "notes.txt"}),
        structured("read_file", {"path": "notes.txt"}),
    ],
]:
    toolset = {"get_weather": "weather", "get_forecast": "weather", "describe_table": "sqlite", "query": "sqlite"}.get(
        attempts[-1]["calls"][0]["name"], "filesystem"
    )
    expect = {
        "weather": ("get_current_weather", {"location": "Paris"}),
        "sqlite": ("describe_table", {"table": "books"}),
        "filesystem": ("read_text_file", {"path": "notes.txt"}),
    }[toolset]
    if attempts[0]["calls"] and attempts[0]["calls"][0]["name"] == "get_forecast":
        expect = ("get_forecast", {"location": "Paris", "days": 3})
    if attempts[0]["calls"] and attempts[0]["calls"][0]["name"] == "query":
        expect = ("query", {"sql": "SELECT 1"})
    case("never right", toolset, attempts, expect)


def main() -> None:
    toolsets = json.loads((HERE / "toolsets.json").read_text(encoding="utf-8"))
    document = {"about": __doc__.split("\n\n")[1].replace("\n", " "), "toolsets": toolsets, "cases": cases}
    (HERE / "corpus.json").write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
