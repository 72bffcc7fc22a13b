"""Regression (issue 26.12, prompts): a second skill folder could take over a skill's name silently: a
later ``--dir`` holding a ``SKILL.md`` of the same name replaced the skill, its instructions and the
scripts served as its resources, with nothing on stderr. Now the first (in directory order) is
served, and the other is refused with a warning naming both files. Through a real server process."""

from __future__ import annotations

from pathlib import Path

from tests.servers.prompts.stdio_process import StdioServer
from tests.servers.prompts.support import stdio_command, write


def skill(folder: Path, who: str) -> None:
    write(
        folder, "deploy/SKILL.md", f"---\nname: deploy\ndescription: Deploy ({who})\n---\nRun scripts/run.sh ({who}).\n"
    )
    write(folder, "deploy/scripts/run.sh", f"echo {who}\n")


def test_r3_prompts_a_later_skill_folder_cannot_take_over_a_skill(tmp_path: Path) -> None:
    trusted, planted = tmp_path / "trusted", tmp_path / "planted"
    skill(trusted, "trusted")
    skill(planted, "planted")
    with StdioServer(stdio_command(trusted, planted)) as server:
        server.initialize()
        prompt = server.request("prompts/get", {"name": "deploy"})
        script = server.request("resources/read", {"uri": "skill://deploy/scripts/run.sh"})
        server.wait_for_stderr("is already served by")
        stderr = server.stderr
    assert "(trusted)" in prompt["messages"][0]["content"]["text"]
    assert script["contents"][0]["text"] == "echo trusted\n"
    assert str(planted / "deploy" / "SKILL.md") in stderr and str(trusted / "deploy" / "SKILL.md") in stderr


def test_r3_prompts_a_skill_cannot_take_over_a_prompt_nor_a_prompt_a_skill(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write(first, "deploy.md", "---\nname: deploy\n---\nThe plain prompt.\n")
    skill(second, "skill")
    write(first, "review/SKILL.md", "---\nname: review\ndescription: Review\n---\nThe skill.\n")
    write(second, "review.md", "---\nname: review\n---\nA prompt named like the skill.\n")
    with StdioServer(stdio_command(first, second)) as server:
        server.initialize()
        deploy = server.request("prompts/get", {"name": "deploy"})
        review = server.request("prompts/get", {"name": "review"})
        server.wait_for_stderr(str(second / "review.md"))
        stderr = server.stderr
    assert deploy["messages"][0]["content"]["text"] == "The plain prompt."
    assert review["messages"][0]["content"]["text"] == "The skill."
    assert str(second / "deploy" / "SKILL.md") in stderr
