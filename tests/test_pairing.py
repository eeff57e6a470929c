"""What is not counted is paid for one for one (issue 29, items 1-3), through the real CLI on real
git repositories: a removed line pays for one added line of its own file, or of the file renamed or
copied from it; text is compared as written; a baseline or acceptance entry pays for one finding."""

from __future__ import annotations

from typing import Any

from review_gate.judging.occurrences import Occurrences, payable
from review_gate.models import Waiver
from tests.conftest import GitRepo
from tests.test_refine import change, found, review


def test_one_removed_line_does_not_pay_for_a_copy_in_every_other_file(cli: Any, repo: GitRepo) -> None:
    """Issue 29, item 1: the base's `return eval(cmd)` reformatted, and added in four new files."""
    change(repo, {"app/admin.py": "def run(cmd):\n    return eval(cmd)\n"})
    views = {f"app/view_{name}.py": "def handle(cmd):\n    return eval(cmd)\n" for name in "abcd"}
    change(repo, {"app/admin.py": "def run(cmd):\n    return  eval( cmd )\n", **views}, "four new views")
    report = review(cli)
    assert found(report, "sec-py-eval-01") == [("app/admin.py", 2, "major"),
                                               *[(f"app/view_{name}.py", 2, "major") for name in "abcd"]]
    assert report["decision"] == "needs_fixes" and report["waived"] == []


def test_a_line_moved_out_of_a_file_pays_for_no_line_of_another(cli: Any, repo: GitRepo) -> None:
    """Without the reformat: the removed line pays for nothing elsewhere, not for one of the four."""
    change(repo, {"app/admin.py": "def run(cmd):\n    return eval(cmd)\n\n\ndef other():\n    return 1\n"})
    views = {f"app/view_{name}.py": "def handle(cmd):\n    return eval(cmd)\n" for name in "ab"}
    change(repo, {"app/admin.py": "def other():\n    return 1\n", **views}, "moved into two views")
    report = review(cli)
    assert found(report, "sec-py-eval-01") == [("app/view_a.py", 2, "major"), ("app/view_b.py", 2, "major")]
    assert report["waived"] == []


def test_a_removed_docstring_example_does_not_pay_for_code(cli: Any, repo: GitRepo) -> None:
    change(repo, {"app/help.py": 'def calc(expr):\n    """Evaluate.\n\n    result = eval(expr)\n    """\n'
                                 "    return 0\n"})
    change(repo, {"app/help.py": 'def calc(expr):\n    """Evaluate."""\n    return 0\n',
                  "app/calc.py": "def calc(expr):\n    result = eval(expr)\n    return result\n"}, "calc")
    report = review(cli)
    assert found(report, "sec-py-eval-01") == [("app/calc.py", 2, "major")] and report["waived"] == []


def test_a_copy_is_not_paid_twice(cli: Any, repo: GitRepo) -> None:
    """Two copies of a file that goes: git pairs one as the rename (its line is not new); the
    removed file's line pays for nothing more, so the other copy's line is judged."""
    body = "".join(f"def f{n}():\n    return {n}\n\n" for n in range(10)) + "def run(cmd):\n    return eval(cmd)\n"
    change(repo, {"v1/handler.py": body})
    (repo.root / "v1" / "handler.py").unlink()
    change(repo, {"v2/handler.py": body, "v3/handler.py": body}, "v1 becomes v2 and v3")
    report = review(cli)
    assert len(found(report, "sec-py-eval-01")) == 1, report["findings"]
    assert report["decision"] == "needs_fixes"


def test_a_new_file_takes_a_line_the_change_removes_from_the_file_it_copies(cli: Any, repo: GitRepo) -> None:
    """The file a new one copies (of its name, too little alike for git's rename) pays with the
    lines the change removes from it: once, and only for the same text."""
    lines = "".join(f"RUN other step {n}\n" for n in range(30))
    change(repo, {"v1/Dockerfile": f'FROM debian\n{lines}RUN chmod 777 "$PGDATA"\n'})
    (repo.root / "v1" / "Dockerfile").unlink()
    kept = "".join(f"RUN other step {n}\n" for n in range(8))
    change(repo, {"v2/Dockerfile": f'FROM debian\n{kept}RUN chmod 777 "$PGDATA"\nRUN chmod 777 "$PGDATA"\n'},
           "v2 replaces v1")
    report = review(cli)
    assert found(report, "sec-chmod-777-01") == [("v2/Dockerfile", 11, "major")]
    [waived] = [w for w in report["waived"] if w["rule_id"] == "sec-chmod-777-01"]
    assert (waived["file"], waived["line"], waived["waived_kind"]) == ("v2/Dockerfile", 10, "moved")
    assert "v1/Dockerfile" in waived["waived"]


def test_whitespace_inside_a_string_is_an_edit(cli: Any, repo: GitRepo) -> None:
    """Issue 29, item 2: a blank inside a string literal makes the command delete `/cache` too."""
    change(repo, {"app/clean.py": 'def clean(d):\n    os.system("rm -rf " + d + "/cache")\n'})
    change(repo, {"app/clean.py": 'def clean(d):\n    os.system("rm -rf " + d + " /cache")\n'}, "edit")
    report = review(cli)
    assert found(report, "sec-os-system-01") == [("app/clean.py", 2, "major")] and report["waived"] == []


def test_floor_division_is_not_a_comment(cli: Any, repo: GitRepo) -> None:
    """Issue 29, item 2: Python's `//` read as a comment hid a second eval on the line."""
    change(repo, {"app/size.py": "def half(size):\n    return eval(size) // 2\n"})
    change(repo, {"app/size.py": 'def half(size):\n    return eval(size) // 2 or eval(request.args["q"])\n'}, "edit")
    report = review(cli)
    assert found(report, "sec-py-eval-01") == [("app/size.py", 2, "major")] and report["waived"] == []


NET = "import requests\n\n\ndef fetch(url):\n    return requests.get(url, verify=False, timeout=5)\n"
COPY = "\n\ndef fetch_again(url):\n    return requests.get(url, verify=False, timeout=5)\n"


def _on_main_with_entry(repo: GitRepo, cli: Any, shared: bool) -> None:
    """main holds app/net.py and an entry for its one finding: the baseline's, or the team's acceptance."""
    repo.write("app/net.py", NET)
    if shared:
        result = cli("--offline", "--format", "json")
        [finding] = result.json()["findings"]
        assert cli("accept", finding["fingerprint"][:10], "--reason", "test server", "--shared").code == 0
    else:
        repo.commit("net")
        assert cli("baseline", "--offline", "--base", "HEAD~1").code == 0
    repo.commit("the entry")
    repo.branch("feature")


def _verify_findings(report: dict[str, Any]) -> list[int]:
    return [f["line"] for f in report["findings"] if f["rule_id"] == "sec-tls-verify-01"]


def test_a_baseline_entry_pays_for_one_line_not_every_copy(cli: Any, repo: GitRepo) -> None:
    """Issue 29, item 3: a new copy of a baselined line below it, then above it, counts."""
    _on_main_with_entry(repo, cli, shared=False)
    change(repo, {"app/net.py": NET + COPY}, "a copy below")
    below = cli("--offline", "--no-state", "--base", "main", "--format", "json")
    assert below.code == 1 and _verify_findings(below.json()) == [9], below.out
    change(repo, {"app/net.py": "import requests\n" + COPY + "\n" + NET.removeprefix("import requests\n")},
           "and above")
    above = cli("--offline", "--no-state", "--base", "main", "--format", "json")
    assert above.code == 1 and _verify_findings(above.json()) == [5], above.out
    # the baselined line itself, moved in the file, is still paid for by its entry
    change(repo, {"app/net.py": "import requests\n" + NET.removeprefix("import requests\n").replace(
        "    return", "    if url:\n        return")}, "the old line alone, indented")
    alone = cli("--offline", "--no-state", "--base", "main", "--format", "json")
    assert alone.code == 0 and _verify_findings(alone.json()) == [], alone.out
    assert [w["waived_kind"] for w in alone.json()["waived"]] == ["baseline"]


def test_a_shared_acceptance_pays_for_one_line_not_every_copy(cli: Any, repo: GitRepo) -> None:
    _on_main_with_entry(repo, cli, shared=True)
    change(repo, {"app/net.py": NET + COPY}, "a copy below")
    result = cli("--offline", "--no-state", "--base", "main", "--format", "json")
    assert result.code == 1 and _verify_findings(result.json()) == [9], result.out
    assert result.json()["waived"] == []


def test_an_entry_for_a_finding_the_judging_does_not_see_pays_as_its_fingerprint_says() -> None:
    """The gate's own findings about its files (aggregate's ``gate_findings``) never pass through
    refine: their baseline or acceptance entries still waive them."""
    entries = {"f" * 32: Waiver(kind="baseline", reason="baselined")}
    assert payable([], Occurrences({}, []), {}, entries) == entries
