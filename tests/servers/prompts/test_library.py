"""The library: several directories, override by name, last valid versions, bounds, embeds."""

from __future__ import annotations

import logging
import os

import pytest
from plainmcp_prompts import library as library_module
from plainmcp_prompts import template as template_module
from plainmcp_prompts.frontmatter import FormatError
from plainmcp_prompts.library import MAX_WARNINGS, Library, digest
from plainmcp_prompts.model import Embed
from plainmcp_prompts.template import MAX_EMBED_BYTES, MAX_EMBEDS

from .support import GREETING, write


@pytest.fixture
def lib_dirs(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    return first, second


def test_scan_reads_md_files_recursively_in_name_order(lib_dirs):
    first, _ = lib_dirs
    write(first, "b.md", "B")
    write(first, "sub/a.md", "A")
    write(first, "notes.txt", "not a prompt")
    write(first, ".hidden.md", "hidden")
    write(first, ".git/x.md", "hidden folder")
    library = Library([first])
    assert library.scan() is True
    assert list(library.prompts) == ["a", "b"]
    assert library.prompts["a"].path == "sub/a.md"


def test_scan_later_directories_override_earlier_ones_by_name(lib_dirs):
    first, second = lib_dirs
    write(first, "greet.md", "first greet")
    write(first, "only-first.md", "x")
    write(second, "other-file-name.md", "---\nname: greet\n---\nsecond greet")
    library = Library([first, second])
    library.scan()
    assert set(library.prompts) == {"greet", "only-first"}
    assert library.prompts["greet"].root == str(second)


def test_scan_duplicate_name_in_one_directory_keeps_the_first_and_warns(lib_dirs, caplog):
    first, _ = lib_dirs
    write(first, "a.md", "---\nname: same\n---\nA")
    write(first, "b.md", "---\nname: same\n---\nB")
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert library.prompts["same"].path == "a.md"
    assert f"{first / 'b.md'}: prompt name 'same' is already used by {first / 'a.md'}" in caplog.text


def test_scan_malformed_file_is_skipped_with_a_warning_naming_file_and_line(lib_dirs, caplog):
    first, _ = lib_dirs
    write(first, "good.md", "Fine")
    write(first, "bad.md", "---\narguments:\n  - name: a\n    values: []\n---\n{{a}}")
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert list(library.prompts) == ["good"]
    assert f"{first / 'bad.md'}:4: values of argument 'a' must be a non-empty list; the file is skipped" in caplog.text


def test_scan_serves_the_last_valid_version_of_a_file_that_stops_parsing(lib_dirs, caplog):
    first, _ = lib_dirs
    path = write(first, "greet.md", GREETING)
    library = Library([first])
    library.scan()
    valid = library.prompts["greet"]
    path.write_text("---\nname: [unclosed\n---\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert library.scan() is False  # nothing served changed
    assert library.prompts["greet"] is valid
    assert "serving its last valid version" in caplog.text
    path.write_text("Now fixed, {{who}}", encoding="utf-8")
    assert library.scan() is True
    assert library.prompts["greet"].source == "Now fixed, {{who}}"


def test_scan_forgets_the_last_valid_version_of_a_deleted_file(lib_dirs):
    first, _ = lib_dirs
    path = write(first, "greet.md", "Hi")
    library = Library([first])
    library.scan()
    path.unlink()
    assert library.scan() is True and library.prompts == {}
    write(first, "greet.md", "---\nname: [bad\n---\n")
    library.scan()
    assert library.prompts == {}  # a new broken file has no last valid version


def test_scan_reports_changes_only_when_something_served_changed(lib_dirs):
    first, _ = lib_dirs
    path = write(first, "greet.md", "Hi")
    library = Library([first])
    assert library.scan() is True
    assert library.scan() is False
    os.utime(path, ns=(1, 1))  # touched, same text
    assert library.scan() is False
    write(first, "notes.txt", "not a prompt")
    assert library.scan() is False
    path.write_text("Hi!", encoding="utf-8")
    assert library.scan() is True


def test_scan_logs_each_problem_once(lib_dirs, caplog):
    first, _ = lib_dirs
    write(first, "bad.md", "{{#x}}")
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
        library.scan()
    assert caplog.text.count("is not a placeholder") == 1


def test_scan_missing_directory_is_a_warning_not_a_failure(tmp_path, caplog):
    write(tmp_path / "ok", "a.md", "A")
    library = Library([tmp_path / "missing", tmp_path / "ok"])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert list(library.prompts) == ["a"]
    assert "does not exist" in caplog.text


def test_scan_bounds_files_and_sizes(lib_dirs, caplog):
    first, _ = lib_dirs
    for name in "abc":
        write(first, f"{name}.md", name)
    write(first, "big.md", "x" * 2000)
    library = Library([first], max_files=3, max_file_bytes=1000)
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert list(library.prompts) == ["a", "b"]  # "big" is the 3rd in path order, and too big
    assert f"{first / 'big.md'}: the file is larger than the limit of 1000 bytes" in caplog.text
    assert "more than 3 prompt files" in caplog.text


def test_scan_rejects_non_utf8_with_its_line(lib_dirs, caplog):
    first, _ = lib_dirs
    (first / "latin.md").write_bytes(b"ok\nstill ok\ncaf\xe9\n")
    with caplog.at_level(logging.WARNING):
        Library([first]).scan()
    assert f"{first / 'latin.md'}:3: the file is not UTF-8 text" in caplog.text


def test_scan_skips_symlinks_out_of_the_directory_and_fifos(lib_dirs, tmp_path, caplog):
    first, _ = lib_dirs
    outside = write(tmp_path, "outside/secret.md", "secret")
    os.symlink(outside, first / "link.md")
    os.mkfifo(first / "pipe.md")
    write(first, "inside.md", "inside")
    os.symlink(first / "inside.md", first / "alias.md")
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    # A symlink to a file inside the directory is followed (its name is the link's).
    assert set(library.prompts) == {"inside", "alias"}
    assert "symlink leading out of the directory" in caplog.text
    assert f"{first / 'pipe.md'}: the file cannot be read" in caplog.text


# ------------------------------------------------------------------------------------ embedding


def test_embed_is_read_relative_to_the_embedding_file(lib_dirs):
    first, _ = lib_dirs
    write(first, "snippets/style.txt", "Be brief.")
    write(first, "team/review.md", "Review.\n\n{{> ../snippets/style.txt}}\n")
    library = Library([first])
    library.scan()
    spec = library.prompts["review"]
    embedded = library.read_embed(spec, Embed("../snippets/style.txt", 3))
    assert (embedded.uri, embedded.text, embedded.mime_type) == (
        "prompts://file/snippets/style.txt",
        "Be brief.",
        "text/plain",
    )
    assert library.embedded == {(str(first), "snippets/style.txt"): digest("Be brief.")}


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("../outside.txt", "is outside the library directory"),
        ("../first/../outside.txt", "is outside the library directory"),
        ("missing.txt", "does not exist"),
        (".env", "is hidden"),
        ("sub/.secret/key.txt", "is hidden"),
        ("link-out.txt", "is outside the library directory"),
        ("sub", "does not exist or is not a readable regular file"),
        ("big.txt", "is larger than"),
        ("latin.txt", "is not UTF-8"),
        ("pipe.txt", "does not exist or is not a readable regular file"),
    ],
)
def test_embed_outside_or_unreadable_makes_the_file_fail_at_its_line(lib_dirs, tmp_path, caplog, target, message):
    first, _ = lib_dirs
    write(tmp_path, "outside.txt", "outside")
    write(first, ".env", "TOKEN=1")
    write(first, "sub/.secret/key.txt", "key")
    (first / "big.txt").write_text("x" * (MAX_EMBED_BYTES + 1))
    (first / "latin.txt").write_bytes(b"caf\xe9")
    os.symlink(tmp_path / "outside.txt", first / "link-out.txt")
    os.mkfifo(first / "pipe.txt")
    write(first, "p.md", f"Intro\n\n{{{{> {target}}}}}\n")
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert library.prompts == {}
    assert f"{first / 'p.md'}:3: embedded file {target!r} {message}" in caplog.text
    assert str(tmp_path) not in message


def test_embed_checked_again_at_render_time(lib_dirs, tmp_path):
    first, _ = lib_dirs
    write(tmp_path, "outside.txt", "outside secret")
    snippet = write(first, "s.txt", "fine")
    write(first, "p.md", "{{> s.txt}}")
    library = Library([first])
    library.scan()
    spec = library.prompts["p"]
    snippet.unlink()
    os.symlink(tmp_path / "outside.txt", snippet)  # swapped for a link out after the scan
    with pytest.raises(FormatError) as caught:
        library.read_embed(spec, spec.messages[0].segments[0])
    assert "outside the library directory" in caught.value.message
    assert str(tmp_path) not in caught.value.message


def test_embedded_file_change_counts_as_a_change(lib_dirs):
    first, _ = lib_dirs
    snippet = write(first, "s.txt", "v1")
    write(first, "p.md", "{{> s.txt}}")
    library = Library([first])
    library.scan()
    assert library.scan() is False
    snippet.write_text("v2")
    assert library.scan() is True


def test_embedding_file_recovers_when_the_missing_embed_appears(lib_dirs):
    first, _ = lib_dirs
    write(first, "p.md", "{{> later.txt}}")
    library = Library([first])
    library.scan()
    assert library.prompts == {}
    write(first, "later.txt", "here now")
    assert library.scan() is True and list(library.prompts) == ["p"]


# ------------------------------------------------------------------------------ hostile files


def test_scan_caps_the_warnings_of_one_file(lib_dirs, caplog):
    first, _ = lib_dirs
    keys = "".join(f"unknown{i}: 1\n" for i in range(30))
    write(first, "noisy.md", f"---\n{keys}---\nBody")
    with caplog.at_level(logging.WARNING):
        Library([first]).scan()
    assert caplog.text.count("unknown front matter key") == MAX_WARNINGS
    assert f"noisy.md: {30 - MAX_WARNINGS} more warnings" in caplog.text


def test_scan_skips_a_file_whose_loading_fails_unexpectedly_and_serves_the_rest(lib_dirs, caplog, monkeypatch):
    first, _ = lib_dirs
    write(first, "good.md", "Good")
    write(first, "bad.md", "Bad")
    real = library_module.load_file_text

    def failing(text, **where):
        if where["path"] == "bad.md":
            raise RecursionError("deep inside a parser")
        return real(text, **where)

    monkeypatch.setattr(library_module, "load_file_text", failing)
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert list(library.prompts) == ["good"]
    assert "bad.md: the file could not be loaded: unexpected RecursionError" in caplog.text
    assert "deep inside a parser" not in caplog.text  # details only at debug level


def test_scan_keeps_serving_the_last_valid_version_when_a_file_turns_hostile(lib_dirs, caplog):
    first, _ = lib_dirs
    path = write(first, "greet.md", GREETING)
    library = Library([first])
    library.scan()
    path.write_text("---\nname: " + "[" * 10_000 + "]" * 10_000 + "\n---\nBody", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert list(library.prompts) == ["greet"]
    assert "nested deeper than" in caplog.text and "serving its last valid version" in caplog.text
    path.write_text("Fixed {{who}}", encoding="utf-8")
    assert library.scan() is True
    assert library.prompts["greet"].source == "Fixed {{who}}"


def test_scan_does_not_list_a_folder_link_leading_out(lib_dirs, tmp_path):
    first, _ = lib_dirs
    write(tmp_path, "outside/secret.md", "secret")
    os.symlink(tmp_path / "outside", first / "linked")
    library = Library([first])
    library.scan()
    assert library.prompts == {}


def test_embed_through_a_folder_link_inside_the_library_is_followed(lib_dirs):
    first, _ = lib_dirs
    write(first, "shared/snippets/style.txt", "Be brief.")
    os.symlink("shared/snippets", first / "snippets")
    write(first, "p.md", "{{> snippets/style.txt}}")
    library = Library([first])
    library.scan()
    embedded = library.read_embed(library.prompts["p"], Embed("snippets/style.txt", 1))
    # Named by where it really is: the same file has one URI however it is reached.
    assert (embedded.uri, embedded.text) == ("prompts://file/shared/snippets/style.txt", "Be brief.")


def test_an_embedded_file_is_read_once_per_version_however_many_links_reach_it(lib_dirs, monkeypatch):
    first, _ = lib_dirs
    write(first, "big.txt", "shared text")
    for index in range(20):
        os.symlink("big.txt", first / f"link{index}.txt")
    write(first, "p.md", "".join(f"{{{{> link{index}.txt}}}}\n" for index in range(20)))
    reads: list[str] = []
    real = template_module.read_embedded_text
    monkeypatch.setattr(template_module, "read_embedded_text", lambda fd, path: reads.append(path) or real(fd, path))
    library = Library([first])
    library.scan()
    assert list(library.prompts) == ["p"] and len(reads) == 1
    library.scan()
    assert len(reads) == 1  # unchanged: not read again
    (first / "big.txt").write_text("changed text")
    assert library.scan() is True and len(reads) == 2


def test_more_embeds_than_the_limit_is_a_format_error(lib_dirs, caplog):
    first, _ = lib_dirs
    write(first, "s.txt", "s")
    write(first, "p.md", "{{> s.txt}}\n" * (MAX_EMBEDS + 1))
    library = Library([first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert library.prompts == {}
    assert f"p.md:{MAX_EMBEDS + 1}: more than {MAX_EMBEDS} embedded files" in caplog.text


def test_a_missing_directory_or_a_file_given_as_one_is_reported_and_the_others_served(lib_dirs, tmp_path, caplog):
    first, _ = lib_dirs
    write(first, "a.md", "A")
    not_a_dir = write(tmp_path, "file.md", "F")
    library = Library([tmp_path / "missing", not_a_dir, first])
    with caplog.at_level(logging.WARNING):
        library.scan()
    assert list(library.prompts) == ["a"]
    assert f"{tmp_path / 'missing'}: the directory does not exist" in caplog.text
    assert f"{not_a_dir}: not a directory" in caplog.text
