"""The start-up records (tools, resources, prompts, input requests, task records) are plain classes
written by hand, not dataclasses (cheaper at import): they keep the dataclasses' behaviour."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from plainmcp.inputs import InputRequest
from plainmcp.prompts import Prompt, PromptArgument
from plainmcp.resources import Resource, ResourceTemplate
from plainmcp.state import task_records
from plainmcp.state.task_records import TaskRecord
from plainmcp.tools import EMPTY_INPUT_SCHEMA, Tool, ToolAnnotations, ToolResult


async def handler(ctx: Any, arguments: Any) -> None:
    return None


async def reader(ctx: Any, uri: str, variables: Any = None) -> str:
    return ""


# ------------------------------------------------------------------------------- constructors


def test_default_containers_are_fresh_per_instance() -> None:
    first, second = Tool("a", handler), Tool("b", handler)
    assert first.input_schema == EMPTY_INPUT_SCHEMA and first.input_schema is not EMPTY_INPUT_SCHEMA
    first.input_schema["properties"] = {}
    assert "properties" not in second.input_schema and "properties" not in EMPTY_INPUT_SCHEMA

    one, other = ToolResult(), ToolResult()
    one.content.append({"type": "text", "text": "x"})
    assert other.content == []

    record, twin = TaskRecord("1", None, "q", 1000, 10), TaskRecord("2", None, "q", 1000, 10)
    record.pending["k"] = {"method": "m", "params": {}}
    record.answers["k"] = {"action": "accept"}
    assert twin.pending == {} and twin.answers == {}


def test_a_task_records_creation_time_is_read_when_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 200.0])
    monkeypatch.setattr(task_records, "time", SimpleNamespace(time=lambda: next(clock)))
    first, second = TaskRecord("1", None, "q", 1000, 10), TaskRecord("2", None, "q", 1000, 10)
    assert (first.created, first.updated) == (100.0, 100.0)  # updated defaults to created
    assert (second.created, second.updated) == (200.0, 200.0)
    assert TaskRecord("3", None, "q", 1000, 10, created=5.0, updated=7.0).updated == 7.0


def test_constructors_take_their_fields_positionally_in_order_and_by_name() -> None:
    hints = ToolAnnotations("T", True, False, True, None)
    assert (hints.title, hints.read_only, hints.destructive, hints.idempotent, hints.open_world) == (
        "T",
        True,
        False,
        True,
        None,
    )
    result = ToolResult([{"type": "text", "text": "x"}], {"a": 1}, True, {"m": 1})
    assert (result.content, result.structured, result.is_error, result.meta) == (
        [{"type": "text", "text": "x"}],
        {"a": 1},
        True,
        {"m": 1},
    )
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    tool = Tool("t", handler, "D", "T", schema, None, hints, [{"src": "i"}], {"k": 1}, "optional")
    assert (tool.description, tool.title, tool.input_schema, tool.annotations, tool.icons, tool.meta) == (
        "D",
        "T",
        schema,
        hints,
        [{"src": "i"}],
        {"k": 1},
    )
    assert tool.task_support == "optional" and tool.output_validator is None and tool.header_bindings == ()
    resource = Resource("mem://x", "x", reader, "T", "D", "text/plain", 3, None, {"a": 1}, {"m": 1}, "v/ext")
    assert (resource.mime_type, resource.size, resource.annotations, resource.meta, resource.extension) == (
        "text/plain",
        3,
        {"a": 1},
        {"m": 1},
        "v/ext",
    )
    argument = PromptArgument("n", "D", True, "T", ["a"])
    assert (argument.description, argument.required, argument.title, argument.complete) == ("D", True, "T", ["a"])
    prompt = Prompt("p", handler, "D", "T", [argument], None)
    assert (prompt.description, prompt.title, list(prompt.arguments)) == ("D", "T", [argument])
    assert Prompt("p", handler).arguments == ()
    request = InputRequest(method="m", params={"x": 1}, capability="c")
    assert (request.method, request.params, request.capability) == ("m", {"x": 1}, "c")
    record = TaskRecord("i", "o", "q", 1000, 10, 1.0, 2.0, "completed", {"r": 1}, None, {}, {}, False)
    assert (record.created, record.updated, record.status, record.result, record.leased) == (
        1.0,
        2.0,
        "completed",
        {"r": 1},
        False,
    )
    with pytest.raises(TypeError):
        Tool("t")  # type: ignore[call-arg]


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "bad name!"}, "tool name 'bad name!': use 1-128 characters from A-Z a-z 0-9 _ . -"),
        ({"name": "t", "input_schema": {"type": "string"}}, 'tool \'t\': inputSchema must have "type": "object"'),
        ({"name": "t", "task_support": "maybe"}, "tool 't': task_support must be one of forbidden, optional, required"),
    ],
)
def test_a_tool_is_checked_when_it_is_made(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        Tool(handler=handler, **arguments)
    assert str(raised.value) == message


def test_a_template_is_parsed_and_its_completers_checked_when_it_is_made() -> None:
    template = ResourceTemplate("mem://{id}", "item", reader, completers={"id": ["1"]})
    assert template.parsed is not None and template.match("mem://7") == {"id": "7"}
    with pytest.raises(ValueError) as raised:
        ResourceTemplate("mem://{id}", "item", reader, completers={"other": ["1"]})
    assert str(raised.value) == "template 'mem://{id}' has no variable ['other']"


# ------------------------------------------------------------------------------- equality


def test_records_are_equal_by_their_fields_and_only_to_their_own_class() -> None:
    assert ToolAnnotations(title="T") == ToolAnnotations(title="T") != ToolAnnotations(title="U")
    assert ToolResult([], {"a": 1}) == ToolResult([], {"a": 1}) != ToolResult([], {"a": 2})
    assert Resource("mem://x", "x", reader) == Resource("mem://x", "x", reader) != Resource("mem://y", "x", reader)
    assert PromptArgument("a") == PromptArgument("a") != PromptArgument("a", required=True)
    assert Prompt("p", handler, arguments=[PromptArgument("a")]) == Prompt(
        "p", handler, arguments=[PromptArgument("a")]
    )
    assert Prompt("p", handler) != Prompt("q", handler)
    assert InputRequest("m", {"x": 1}, "c") == InputRequest("m", {"x": 1}, "c") != InputRequest("m", {"x": 2}, "c")
    for value in (
        ToolAnnotations(),
        ToolResult(),
        Tool("t", handler),
        Resource("mem://x", "x", reader),
        ResourceTemplate("mem://{id}", "x", reader),
        PromptArgument("a"),
        Prompt("p", handler),
        InputRequest("m", {}, "c"),
    ):
        assert value == value
        assert type(value).__eq__(value, SimpleNamespace(**{name: None for name in type(value).__slots__})) is (
            NotImplemented
        )
        assert value != "something else"


def test_a_tool_compares_its_validators_too() -> None:
    """Like the dataclass, every field counts, those made in ``__init__`` included (so two tools made
    apart differ: each has its own validator)."""
    tool = Tool("t", handler, output_schema={"type": "object"})
    twin = copy.copy(tool)
    assert twin == tool and twin.input_validator is tool.input_validator
    twin.output_validator = None
    assert twin != tool
    template = ResourceTemplate("mem://{id}", "x", reader)
    assert copy.copy(template) == template != ResourceTemplate("mem://{id}", "x", reader)


def test_mutable_records_are_unhashable_and_frozen_ones_hash_by_value() -> None:
    for value in (
        ToolResult(),
        Tool("t", handler),
        Resource("mem://x", "x", reader),
        ResourceTemplate("mem://{id}", "x", reader),
        PromptArgument("a"),
        Prompt("p", handler),
    ):
        with pytest.raises(TypeError):
            hash(value)
    assert hash(ToolAnnotations("T", True)) == hash(ToolAnnotations("T", True))
    assert len({ToolAnnotations("T"), ToolAnnotations("T"), ToolAnnotations("U")}) == 2
    with pytest.raises(TypeError):  # hashed by value, and its params are a dict
        hash(InputRequest("m", {}, "c"))


def test_task_records_are_equal_only_to_themselves() -> None:
    record = TaskRecord("1", None, "q", 1000, 10, created=1.0)
    twin = TaskRecord("1", None, "q", 1000, 10, created=1.0)
    assert record == record and record != twin and record != record.copy()
    assert len({record, twin}) == 2


# ------------------------------------------------------------------------------- frozen, slots, copies


@pytest.mark.parametrize("value", [ToolAnnotations(title="T"), InputRequest("m", {}, "c")])
def test_frozen_records_refuse_assignment_and_deletion(value: Any) -> None:
    field = type(value).__slots__[0]
    before = getattr(value, field)
    with pytest.raises(AttributeError, match=f"cannot assign to field '{field}'"):
        setattr(value, field, "changed")
    with pytest.raises(AttributeError):
        delattr(value, field)
    with pytest.raises(AttributeError):
        value.unknown = 1
    assert getattr(value, field) == before


@pytest.mark.parametrize("value", [ToolAnnotations("T", True), InputRequest("m", {"x": [1]}, "c")])
def test_frozen_records_copy_and_pickle(value: Any) -> None:
    for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert twin == value and type(twin) is type(value)


def test_slotted_records_take_no_other_attribute() -> None:
    for value in (
        ToolResult(),
        Tool("t", handler),
        Resource("mem://x", "x", reader),
        ResourceTemplate("mem://{id}", "x", reader),
        PromptArgument("a"),
        Prompt("p", handler),
    ):
        assert not hasattr(value, "__dict__")
        with pytest.raises(AttributeError):
            value.unknown = 1  # type: ignore[union-attr]
    assert "header_bindings" in Tool.__slots__ and "input_validator" in Tool.__slots__


def test_a_task_record_is_a_plain_object_whose_dict_holds_its_fields_in_order() -> None:
    record = TaskRecord("1", "o", "q", 1000, 10, created=1.0)
    assert list(vars(record)) == [
        "id",
        "owner",
        "quota",
        "ttl_ms",
        "poll_interval_ms",
        "created",
        "updated",
        "status",
        "result",
        "error",
        "pending",
        "answers",
        "leased",
    ]
    record.extra = "allowed"  # type: ignore[attr-defined]  # not slotted, as before
    stored = TaskRecord("1", "o", "q", 1000, 10, created=1.0, pending={"k": {"method": "m"}}).to_dict()
    assert "leased" not in stored and stored["pending"] == {"k": {"method": "m"}} and stored["updated"] == 1.0
    back = TaskRecord.from_dict(stored)
    assert {name: getattr(back, name) for name in stored} == stored and back.leased is True
    snapshot = back.copy()
    snapshot.pending["j"] = {}
    assert "j" not in back.pending


# ------------------------------------------------------------------------------- repr


def test_repr_names_the_fields() -> None:
    assert repr(ToolAnnotations(title="T", read_only=True)) == (
        "ToolAnnotations(title='T', read_only=True, destructive=None, idempotent=None, open_world=None)"
    )
    assert (
        repr(ToolResult(structured={"a": 1}))
        == "ToolResult(content=[], structured={'a': 1}, is_error=False, meta=None)"
    )
    assert (
        repr(PromptArgument("a", "b"))
        == "PromptArgument(name='a', description='b', required=False, title=None, complete=None)"
    )
    assert repr(InputRequest("m", {}, "c")) == "InputRequest(method='m', params={}, capability='c')"
    assert repr(Prompt("p", handler)).startswith("Prompt(name='p', handler=<function handler")
    assert repr(Prompt("p", handler)).endswith(" description=None, title=None, arguments=(), icons=None)")
    tool = repr(Tool("t", handler))
    assert tool.startswith("Tool(name='t', handler=<function handler")
    assert "input_schema={'type': 'object', 'additionalProperties': False}" in tool
    assert "task_support='forbidden', input_validator=<" in tool and tool.endswith("header_bindings=())")
    assert repr(Resource("mem://x", "x", reader)).endswith(", meta=None, extension=None)")
    assert repr(ResourceTemplate("mem://{id}", "x", reader)).endswith(
        "completers=None, parsed=UriTemplate('mem://{id}'))"
    )
    assert repr(TaskRecord("1", "o", "q", 1000, 10, created=1.0)) == (
        "TaskRecord(id='1', owner='o', quota='q', ttl_ms=1000, poll_interval_ms=10, created=1.0, updated=1.0, "
        "status='working', result=None, error=None, pending={}, answers={}, leased=True)"
    )


# ------------------------------------------------------------------------------- not dataclasses

NOT_DATACLASSES = """
import plainmcp.inputs, plainmcp.prompts, plainmcp.resources, plainmcp.state.task_records, plainmcp.tools
classes = [
    plainmcp.tools.ToolAnnotations, plainmcp.tools.ToolResult, plainmcp.tools.Tool,
    plainmcp.resources.Resource, plainmcp.resources.ResourceTemplate,
    plainmcp.prompts.PromptArgument, plainmcp.prompts.Prompt,
    plainmcp.inputs.InputRequest, plainmcp.state.task_records.TaskRecord,
]
print(len(classes), [c.__name__ for c in classes if hasattr(c, "__dataclass_fields__")])
"""


def test_the_start_up_records_are_not_dataclasses() -> None:
    """Each dataclass costs a generated-and-compiled set of methods at import, in every server's cold
    start (other modules may still import :mod:`dataclasses`: only these classes are checked)."""
    done = subprocess.run([sys.executable, "-c", NOT_DATACLASSES], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "9 []"
