"""Scripts are classified by their ``#!`` line when their name says nothing (stage 2 is pure:
the interpreter is a fact of the change, ``FileChange.interpreter``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.change.diff_parser import parse_diff
from review_gate.change.shebang import annotate, interpreter, of_file
from review_gate.config import load_config
from review_gate.models import Domain, FileChange, PRFacts
from review_gate.models.config import script_names
from review_gate.pipeline.classify import classify
from tests.conftest import GitRepo, make_diff

BUILTIN = load_config(None).domains.domains


def script(path: str, program: str | None) -> FileChange:
    return FileChange(path=path, old_path=path, status="added", added=1, removed=0, interpreter=program)


@pytest.mark.parametrize(("line", "expected"), [
    ("#!/usr/bin/env python3", "python3"),
    ("#!/usr/bin/python3.11 -u", "python3.11"),
    ("#! /bin/sh", "sh"),
    ("#!/bin/bash\r", "bash"),
    ("\ufeff#!/usr/bin/env node", "node"),
    ("#!/usr/bin/env -S python3 -u", "python3"),
    ("#!/usr/bin/env -Spython3 -u", "python3"),
    ("#!/usr/bin/env -u HOME -i PATH=/bin ruby", "ruby"),
    ("#!/usr/bin/env --split-string=perl -w", "perl"),
    ("#!/usr/bin/env $(evil)", None),  # not a program name: unclassified, never a guess
    ("#!/usr/local/bin/PHP", "php"),
    ("#!/usr/bin/env", None),
    ("#!", None),
    ("# a comment", None),
    ("print('#!/bin/sh')", None),
])
def test_the_interpreter_of_a_shebang_line(line: str, expected: str | None) -> None:
    assert interpreter(line) == expected


@pytest.mark.parametrize(("program", "domain"), [
    ("python3", "python"), ("python3.12", "python"), ("pypy3", "python"), ("python", "python"),
    ("bash", "shell"), ("sh", "shell"), ("zsh", "shell"), ("dash", "shell"),
    ("node", "javascript"), ("deno", "javascript"), ("kotlin", "kotlin"), ("scala", "java"), ("ruby", "ruby"),
    ("php", "php"), ("swift", "swift"),
])
def test_the_built_in_domains_claim_common_interpreters(program: str, domain: str) -> None:
    result = classify(PRFacts(source="t", files=[script("bin/tool", program)]), BUILTIN)
    assert domain in result.files[0].domains
    assert result.unclassified == []


def test_a_listed_interpreter_matches_with_or_without_its_version() -> None:
    python3 = Domain(id="py3", description="py", paths=["*.py"], shebangs=["python3"], risk_weight=3)
    assert python3.claims("python3") and python3.claims("python3.12")
    assert not python3.claims("python") and not python3.claims("python2.7") and not python3.claims(None)


def test_an_unknown_interpreter_leaves_the_script_unclassified() -> None:
    result = classify(PRFacts(source="t", files=[script("bin/tool", "awk"), script("bin/other", None),
                                                 script("bin/game", "lua")]), BUILTIN)
    assert result.unclassified == ["bin/tool", "bin/other", "bin/game"]


@pytest.mark.parametrize("path", ["gui/app.pyw", "stubs/mod.pyi", "ext/fast.pyx", "ext/fast.pxd", "app.wsgi",
                                  "web/a.mjs", "web/b.cts", "scripts/run.bash", "scripts/run.zsh",
                                  "scripts/run.ksh", "tests/x.bats"])
def test_common_extensions_are_classified(path: str) -> None:
    result = classify(PRFacts(source="t", files=[script(path, None)]), BUILTIN)
    assert result.unclassified == [], path


def test_a_script_is_matched_as_if_it_had_its_domain_s_extensions() -> None:
    """Every glob of a domain that selects by extension also selects the script: another
    domain's ``*.py`` glob, and (through the same names) a rule's ``paths``."""
    python = Domain(id="python", description="py", paths=["*.py", "*.pyi"], shebangs=["python"], risk_weight=3)
    tools = Domain(id="py-tools", description="py tools", paths=["bin/*.py"], risk_weight=1)
    assert script_names("bin/deploy", "python3", [python, tools]) == ["bin/deploy.py", "bin/deploy.pyi"]
    assert script_names("bin/deploy", None, [python]) == []
    assert script_names("deploy.py", "python3", [python]) == []  # its name says it already
    result = classify(PRFacts(source="t", files=[script("bin/deploy", "python3")]), [python, tools])
    assert result.files[0].domains == ["python", "py-tools"]


def test_the_first_line_comes_from_the_change_when_it_shows_it(tmp_path: Path) -> None:
    diff = make_diff("bin/deploy", ["#!/usr/bin/env python3", "x = eval(input())"])
    diff += make_diff("bin/later", ["x = 1"], start=40, new_file=False)  # line 1 not shown, no repository
    facts = PRFacts(source="t", files=parse_diff(diff.encode()))
    annotated = annotate(facts, None, BUILTIN)
    assert [f.interpreter for f in annotated.files] == ["python3", None]


def test_explain_reads_the_working_tree_file_through_no_link(tmp_path: Path) -> None:
    (tmp_path / "deploy").write_text("#!/bin/bash\necho hi\n")
    (tmp_path / "link").symlink_to(tmp_path / "deploy")
    assert of_file(tmp_path, "deploy") == "bash"
    assert of_file(tmp_path, "link") is None
    assert of_file(tmp_path, "../outside") is None
    assert of_file(tmp_path, "missing") is None


def test_a_policy_s_paths_select_a_script_as_they_select_its_domain_s_files() -> None:
    from review_gate.models import Policy
    from review_gate.pipeline.compose import compose

    python = Domain(id="python", description="py", paths=["*.py"], shebangs=["python3"], risk_weight=3)
    policy = Policy.model_validate({"id": "py-tools", "description": "python tools", "priority": 50,
                                    "trigger": {"type": "paths", "paths": ["bin/*.py"]}, "dispatch": ["reviewer"]})
    result = classify(PRFacts(source="t", files=[script("bin/deploy", "python3"), script("bin/setup", "bash")]),
                      [python])
    assert [e.files for e in compose(result, [policy]).entries] == [["bin/deploy"]]


def test_every_command_that_plans_puts_a_script_in_its_domain(cli: Any, repo: GitRepo) -> None:
    """``plan``, ``explain``, a shard and a sweep see the script as the run does."""
    repo.write("bin/deploy", "#!/usr/bin/env python3\n" + "".join(f"step_{n} = {n}\n" for n in range(9)))
    repo.commit("a script")
    with (repo.root / "bin" / "deploy").open("a") as handle:
        handle.write("x = eval(input())\n")  # line 1 is not in the diff: read by blob id
    plan = json.loads(cli("plan", "--format", "json").out)
    assert plan["classification"]["files"] == [{"path": "bin/deploy", "domains": ["python"]}]
    assert plan["facts"]["files"][0]["interpreter"] == "python3"
    explained = cli("explain", "bin/deploy")
    assert explained.code == 0 and "domains: python" in explained.out, explained.out
    shard = json.loads(cli("--offline", "--shard", "1/1", "--format", "json").out)
    assert ("bin/deploy", "sec-py-eval-01") in {(f["file"], f["rule_id"]) for f in shard["findings"]}
    swept = json.loads(cli("sweep", "bin", "--offline", "--format", "json").out)
    assert ("bin/deploy", "sec-py-eval-01") in {(f["file"], f["rule_id"]) for f in swept["findings"]}
