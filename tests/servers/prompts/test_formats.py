"""The three file formats: what each understands, and every malformed case with its line."""

from __future__ import annotations

import textwrap

import pytest
from plainmcp_prompts import messages
from plainmcp_prompts.formats import load_file_text
from plainmcp_prompts.frontmatter import FormatError
from plainmcp_prompts.model import ArgumentSpec
from plainmcp_prompts.template import render


def load(text: str, path: str = "p.md"):
    return load_file_text(textwrap.dedent(text).lstrip("\n"), root="/lib", path=path)


def rendered(spec, **values):
    from plainmcp_prompts.rendering import check_values

    return render(spec.messages, check_values(spec, values), lambda embed: None)


# --------------------------------------------------------------------------------------- plainmcp


def test_plainmcp_reads_every_front_matter_field():
    spec, warnings = load("""
        ---
        name: review-it
        title: Review it
        description: Reviews things
        tags: [code, review]
        arguments:
          - code
          - name: tone
            title: Tone
            description: How to say it
            values: [kind, blunt]
            default: kind
          - name: n
            required: true
        ---
        {{code}} {{tone}} {{n}}
        """)
    assert warnings == []
    assert (spec.name, spec.title, spec.description, spec.tags, spec.format) == (
        "review-it",
        "Review it",
        "Reviews things",
        ("code", "review"),
        "plainmcp",
    )
    assert spec.arguments == (
        ArgumentSpec("code"),
        ArgumentSpec("tone", "How to say it", "Tone", False, "kind", ("kind", "blunt")),
        ArgumentSpec("n", required=True),
    )


def test_plainmcp_defaults_name_to_the_file_and_description_to_the_first_line():
    spec, _ = load("# Make a plan\n\nThen do it.\n", path="sub/make plan!.md")
    assert spec.name == "make-plan"
    assert spec.description == "Make a plan"
    assert spec.arguments == ()


def test_plainmcp_without_arguments_key_infers_required_arguments_from_placeholders():
    spec, _ = load("Translate {{text}} into {{ language }}; keep {{text}} exact.")
    assert spec.arguments == (ArgumentSpec("text", required=True), ArgumentSpec("language", required=True))


def test_plainmcp_yaml_scalars_become_the_strings_a_client_sends():
    spec, _ = load("""
        ---
        arguments:
          - name: n
            values: [1, 2.5, true]
            default: 1
        ---
        {{n}}
        """)
    assert spec.arguments[0].values == ("1", "2.5", "true") and spec.arguments[0].default == "1"


def test_plainmcp_unknown_keys_are_warnings_with_their_line():
    _, warnings = load("""
        ---
        descripton: typo
        arguments:
          - name: a
            optional: yes
        ---
        {{a}}
        """)
    assert warnings == [
        (1 + 1, "unknown front matter key 'descripton' for a plainmcp file (ignored)"),
        (5, "unknown key 'optional' in argument 'a' (ignored)"),
    ]


@pytest.mark.parametrize(
    ("front_matter", "line", "message"),
    [
        ("name: 'has space'", 2, "name 'has space' must be"),
        ("name: [a]", 2, "must be 1-64 characters"),
        ("title: [a]", 2, "title must be a string"),
        ("tags: {a: 1}", 2, "tags must be a list of strings"),
        ("arguments: {a: 1}", 2, "arguments must be a list"),
        ("arguments:\n  - 3", 3, "each argument must be a name or a mapping"),
        ("arguments:\n  - name: 1bad", 3, "argument name '1bad' must start"),
        ("arguments:\n  - a\n  - a", 4, "argument 'a' is declared twice"),
        ("arguments:\n  - name: a\n    required: maybe", 4, "required of argument 'a' must be true or false"),
        ("arguments:\n  - name: a\n    required: true\n    default: x", 5, "is required and has a default"),
        ("arguments:\n  - name: a\n    values: []", 4, "values of argument 'a' must be a non-empty list"),
        ("arguments:\n  - name: a\n    values: [[1]]", 4, "must be single values"),
        ("arguments:\n  - name: a\n    default: [1]", 4, "default of argument 'a' must be a single value"),
        ("arguments:\n  - name: a\n    values: [x, y]\n    default: z", 5, "default 'z' of argument 'a' is not one of"),
        ("arguments:\n  - name: a\n    description: 3", 4, "description of argument 'a' must be a string"),
        ("arguments:\n  - other", 2, "the body uses {{a}} but arguments does not declare it"),
        ("format: word", 2, "format must be one of"),
    ],
)
def test_plainmcp_malformed_front_matter_is_an_error_at_its_line(front_matter, line, message):
    with pytest.raises(FormatError) as caught:
        load_file_text(f"---\n{front_matter}\n---\nUse {{{{a}}}}.\n", root="/lib", path="p.md")
    assert message in caught.value.message
    assert caught.value.line == line


def test_plainmcp_empty_body_is_an_error():
    with pytest.raises(FormatError, match="no text") as caught:
        load("---\nname: x\n---\n\n\n")
    assert caught.value.line == 4


# ------------------------------------------------------------------------------------ claude code


def test_claude_command_with_arguments_placeholder_has_one_optional_argument():
    spec, warnings = load(
        """
        ---
        description: Fix an issue
        argument-hint: issue number and notes
        allowed-tools: Bash(git:*)
        model: claude-sonnet
        ---
        Fix issue $ARGUMENTS following our conventions.
        """,
        path="fix-issue.md",
    )
    assert warnings == []
    assert spec.format == "claude-code" and spec.name == "fix-issue" and spec.description == "Fix an issue"
    assert spec.arguments == (ArgumentSpec("arguments", description="issue number and notes"),)
    assert (
        rendered(spec, arguments="123 urgent")[0]["content"]["text"]
        == "Fix issue 123 urgent following our conventions."
    )
    assert rendered(spec)[0]["content"]["text"] == "Fix issue  following our conventions."


def test_claude_positional_arguments_are_named_after_the_hint():
    spec, _ = load("""
        ---
        argument-hint: [pr-number] [priority] [assignee]
        description: Review a PR
        ---
        Review PR #$1 with priority $2 and assign to $3. All: $ARGUMENTS
        """)
    assert [a.name for a in spec.arguments] == ["pr-number", "priority", "assignee"]
    assert not any(a.required for a in spec.arguments)
    text = rendered(spec, **{"pr-number": "456", "priority": "high"})[0]["content"]["text"]
    assert text == "Review PR #456 with priority high and assign to . All: 456 high"


def test_claude_positional_arguments_without_a_usable_hint_are_arg_n():
    spec, _ = load("---\nargument-hint: add or remove\n---\nDo $2 then $1\n")
    assert [(a.name, a.description) for a in spec.arguments] == [("arg1", "add or remove"), ("arg2", "add or remove")]


def test_claude_file_without_front_matter_is_detected_by_arguments_placeholder():
    spec, _ = load("Explain $ARGUMENTS simply.\n", path="explain.md")
    assert spec.format == "claude-code" and spec.description == "Explain $ARGUMENTS simply."


def test_claude_bang_commands_and_file_references_stay_text():
    spec, _ = load("---\nallowed-tools: Bash\n---\n!`git status`\nSee @src/app.py and {{not_a_placeholder}}\n")
    assert rendered(spec)[0]["content"]["text"] == "!`git status`\nSee @src/app.py and {{not_a_placeholder}}"


def test_claude_body_is_one_user_message_even_with_role_headings():
    spec, _ = load("---\nmodel: x\n---\n## User\nhi\n## Assistant\nyo\n")
    assert [m.role for m in spec.messages] == ["user"]


# ---------------------------------------------------------------------------------------- vscode


def test_vscode_prompt_file_inputs_are_required_arguments():
    spec, warnings = load(
        """
        ---
        mode: agent
        model: GPT-4o
        tools: ['codebase']
        description: Generate a form
        ---
        Create a form named ${input:formName:MyForm} with ${input:fields}. Use ${input:formName} twice.
        Selected: ${selection}
        """,
        path=".github/prompts/create-form.prompt.md",
    )
    assert warnings == []
    assert spec.format == "vscode" and spec.name == "create-form" and spec.description == "Generate a form"
    assert spec.arguments == (ArgumentSpec("formName", "MyForm", required=True), ArgumentSpec("fields", required=True))
    text = rendered(spec, formName="Signup", fields="email")[0]["content"]["text"]
    assert text == "Create a form named Signup with email. Use Signup twice.\nSelected: ${selection}"


def test_vscode_name_key_overrides_the_file_name():
    spec, _ = load("---\nname: other\n---\nHi\n", path="x.prompt.md")
    assert spec.name == "other"


def test_format_key_overrides_detection():
    spec, _ = load("---\nformat: plainmcp\n---\nPrice: $ARGUMENTS stays, {{x}} is an argument\n")
    assert spec.format == "plainmcp" and [a.name for a in spec.arguments] == ["x"]


def test_role_headings_are_found_from_block_structure_alone():
    # Inline rules (links, emphasis, brackets) can be made to cost far more than the text is long;
    # turns depend on blocks only, so they are never run.
    assert "inline" not in messages._MARKDOWN.get_active_rules()["core"]
    spec, _ = load(
        "Intro [" + "[" * 5_000 + "\n\n## User\n**Hi** [x](y)\n\n```\n## Assistant\n```\n\n# Assistant:\nOk\n"
    )
    assert [(m.role, m.segments[0].text.split()[0][:6]) for m in spec.messages] == [
        ("user", "Intro"),
        ("user", "**Hi**"),
        ("assistant", "Ok"),
    ]


def test_a_body_without_a_possible_role_heading_is_one_turn_without_parsing(monkeypatch):
    monkeypatch.setattr(messages._MARKDOWN, "parse", lambda *_: pytest.fail("parsed"))
    spec, _ = load("Just text, ## User in the middle of a line, and `User` alone is not\n")
    assert [m.role for m in spec.messages] == ["user"]
