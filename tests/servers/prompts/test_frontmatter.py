"""Front matter: splitting, YAML, and the line numbers of every problem."""

from __future__ import annotations

import pytest
from plainmcp_prompts.frontmatter import FormatError, parse


def test_parse_without_front_matter_is_all_body():
    doc = parse("Hello\nworld\n")
    assert doc.meta == {} and doc.body == "Hello\nworld\n" and doc.body_line == 1


def test_parse_splits_front_matter_and_body_with_the_body_line():
    doc = parse("---\nname: x\ntags: [a]\n---\nBody\n")
    assert doc.meta == {"name": "x", "tags": ["a"]}
    assert doc.body == "Body\n"
    assert doc.body_line == 5


def test_parse_accepts_crlf_a_bom_and_a_dots_closing_line():
    doc = parse("\ufeff---\r\nname: x\r\n...\r\nBody")
    assert doc.meta == {"name": "x"} and doc.body == "Body"


def test_parse_empty_front_matter_is_an_empty_mapping():
    assert parse("---\n---\nBody").meta == {}


def test_parse_unclosed_front_matter_is_an_error_on_line_1():
    with pytest.raises(FormatError) as caught:
        parse("---\nname: x\nBody\n")
    assert caught.value.line == 1 and "never closed" in caught.value.message


def test_parse_invalid_yaml_reports_the_file_line():
    with pytest.raises(FormatError) as caught:
        parse("---\nname: x\ndescription: [unclosed\ntags: y\n---\nBody")
    assert "not valid YAML" in caught.value.message
    assert caught.value.line in (3, 4, 5)  # PyYAML marks where it noticed: the line after the bracket


def test_parse_bad_indentation_points_at_its_line():
    with pytest.raises(FormatError) as caught:
        parse("---\nname: x\n  title: y\n---\n")
    assert caught.value.line == 3


def test_parse_front_matter_that_is_not_a_mapping_is_an_error():
    with pytest.raises(FormatError, match="mapping .* not a list"):
        parse("---\n- a\n- b\n---\nBody")


def test_parse_non_string_keys_are_an_error():
    with pytest.raises(FormatError, match="key 1 must be a string"):
        parse("---\n1: a\n---\nBody")


def test_parse_refuses_python_object_tags():
    with pytest.raises(FormatError):
        parse("---\nname: !!python/object/apply:os.system ['true']\n---\nBody")


def test_document_line_finds_nested_keys_and_list_items():
    doc = parse("---\nname: x\narguments:\n  - name: a\n  - name: b\n    default: 3\n---\nBody")
    assert doc.line("name") == 2
    assert doc.line("arguments") == 3
    assert doc.line("arguments", 1) == 5
    assert doc.line("arguments", 1, "default") == 6
    assert doc.line("arguments", 1, "nothing") == 5  # the closest ancestor


def test_document_line_survives_alias_bombs():
    bomb = (
        "---\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c]\n---\n"
    )
    doc = parse(bomb)
    assert doc.line("d") == 5  # found without walking the 8**4 paths the aliases describe
