"""What an llm reviewer sees: removed lines where they stood, and the enclosing function or class
around each hunk, read from the new content by its blob id with the real tree-sitter grammars."""

from __future__ import annotations

import itertools
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from review_gate.change import blobs, git
from review_gate.change.blobs import blob_ids
from review_gate.change.diff_parser import parse_diff
from review_gate.llm import chunking, context, prompt
from review_gate.llm.context import Around
from review_gate.models import FileChange, Line
from tests.conftest import GitRepo
from tests.llm.conftest import KEY, agent_result, llm_agent, write_config
from tests.llm.server import LlmServer


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    context.forget()
    yield
    context.forget()


def diff_of(repo: GitRepo, *args: str) -> list[FileChange]:
    return parse_diff(repo.git("diff", *git.DIFF_OPTIONS, *args).encode())


def still() -> float:
    """A clock that never moves: widening's budgets never run out, however busy the machine."""
    return 0.0


def shown(files: list[FileChange], root: Path | None, budget: int = 20_000) -> str:
    plan = chunking.split(files, budget, context.widen(files, str(root) if root else None, still))
    assert plan.unreviewed == []
    return "\n".join(s for c in plan.chunks for s in c.sections)


def widened(files: list[FileChange], root: Path, clock: context.Clock = still) -> dict[tuple[str, int], Around]:
    return context.widen(files, str(root), clock)


PY = '''\
import logging

log = logging.getLogger(__name__)


class Users:
    """The user store."""

    def __init__(self, db):
        self.db = db

    @login_required
    def delete_user(self, request, user,
                    reason=None):
        """Delete a user; admins only."""
        actor = request.user
        log.info("%s deletes %s", actor, user)
        if not actor.is_admin:
            raise PermissionError("admins only")
        self.db.delete(user)
        log.info("deleted %s", user)
        return True

    def count(self):
        return len(self.db)
'''
PY_NO_CHECK = PY.replace('        if not actor.is_admin:\n            raise PermissionError("admins only")\n', "")

JS = '''\
class Cart {
  constructor(items) {
    this.items = items;
  }

  total(discount) {
    let sum = 0;
    for (const item of this.items) {
      sum += item.price * item.count;
    }
    const rate = 0.2;
    const shipping = 5;
    return sum * (1 - discount) + shipping;
  }
}

module.exports = { Cart };
'''

GO = '''\
package server

import "net/http"

type Server struct {
\ttoken string
}

func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
\tif r.Method != http.MethodPost {
\t\tw.WriteHeader(http.StatusMethodNotAllowed)
\t\treturn
\t}
\tname := r.FormValue("name")
\tw.Write([]byte("hello " + name))
}
'''


# --------------------------------------------------------------------------------------------
# Widening to the enclosing function or class
# --------------------------------------------------------------------------------------------


def test_a_python_hunk_in_the_working_tree_is_widened_to_its_method_and_class(repo: GitRepo) -> None:
    repo.write("app.py", PY)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK)  # not committed: its blob is not in the object store
    files = diff_of(repo)
    text = shown(files, repo.root)
    assert "     6   class Users:" in text  # the outer class's first line
    assert "    12       @login_required" in text  # the decorator and the two-line signature
    assert "    13       def delete_user(self, request, user," in text
    assert "    14                       reason=None):" in text
    assert "old 18 -         if not actor.is_admin:" in text
    assert 'old 19 -             raise PermissionError("admins only")' in text
    assert text.index("    17           log.info") < text.index("old 18 -") < text.index("    18           self.db")
    assert "def count" not in text  # another method, not the enclosing one
    assert re.search(r"^ +\.\.\.$", text, flags=re.MULTILINE)  # the lines left out between


def test_a_committed_javascript_hunk_is_widened_to_its_method(repo: GitRepo) -> None:
    repo.write("cart.js", JS)
    base = repo.commit("cart")
    repo.write("cart.js", JS.replace("const rate = 0.2;", "const rate = 0.25;"))
    head = repo.commit("new rate")
    text = shown(diff_of(repo, base, head), repo.root)
    assert "     1   class Cart {" in text
    assert "     6     total(discount) {" in text
    assert "     7       let sum = 0;" in text  # the method is short: all of it
    assert "    11 +     const rate = 0.25;" in text
    assert "constructor" not in text


def test_a_staged_go_hunk_is_widened_from_the_object_store_not_the_changed_file(repo: GitRepo) -> None:
    repo.write("server.go", GO)
    repo.commit("server")
    repo.write("server.go", GO.replace('"hello "', '"hi "'))
    repo.git("add", "server.go")
    repo.write("server.go", "package server\n")  # the working tree moved on; the index did not
    text = shown(diff_of(repo, "--cached"), repo.root)
    assert "     9   func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {" in text
    assert '    15 + \tw.Write([]byte("hi " + name))' in text


def test_a_long_function_shows_its_signature_and_the_nearest_lines_only(repo: GitRepo) -> None:
    body = "".join(f"    v{n} = {n}\n" for n in range(200))
    source = f"def big(a, b):\n{body}    return a\n"
    repo.write("big.py", source)
    repo.commit("big")
    repo.write("big.py", source.replace("    v100 = 100\n", "    v100 = 101\n"))
    [change] = diff_of(repo)
    [around] = widened([change], repo.root).values()
    assert around.before[0] == Line(1, "def big(a, b):", False)
    shown_lines = len(around.before) + len(around.after)
    assert 10 < shown_lines <= context.MAX_LINES
    assert around.before[-1].number == change.hunks[0].lines[0].number - 1  # the nearest, next to the hunk
    assert around.after[0].number == change.hunks[0].lines[-1].number + 1


def test_another_hunks_added_lines_are_never_shown_as_unchanged(repo: GitRepo) -> None:
    lines = [f"    step_{n}()\n" for n in range(20)]
    repo.write("jobs.py", "def run():\n" + "".join(lines))
    repo.commit("jobs")
    lines[2], lines[15] = "    first_change()\n", "    second_change()\n"
    repo.write("jobs.py", "def run():\n" + "".join(lines))
    files = diff_of(repo)
    assert len(files[0].hunks) == 2
    text = shown(files, repo.root)
    assert text.count("first_change()") == 1 and "     4 +     first_change()" in text
    assert text.count("second_change()") == 1 and "    17 +     second_change()" in text
    assert text.count("def run():") == 2  # each hunk shows the signature it sits in


# --------------------------------------------------------------------------------------------
# When not to widen
# --------------------------------------------------------------------------------------------


def test_no_widening_for_a_language_without_a_grammar(repo: GitRepo) -> None:
    source = "".join(f"line {n}\n" for n in range(30))
    repo.write("notes.rb", "def x\n" + source + "end\n")
    repo.commit("notes")
    repo.write("notes.rb", "def x\n" + source.replace("line 15", "line fifteen") + "end\n")
    files = diff_of(repo)
    assert widened(files, repo.root) == {}
    assert "def x" not in shown(files, repo.root)


def test_no_widening_without_a_repository_or_a_readable_blob(repo: GitRepo) -> None:
    repo.write("app.py", PY)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK)
    files = diff_of(repo)
    assert widened(files, repo.root)  # the control: this change can be widened
    context.forget()
    assert context.widen(files, None) == {}  # a bare diff
    (repo.root / "app.py").unlink()  # the blob was never written to the object store
    assert widened(files, repo.root) == {}


def test_git_is_asked_for_object_ids_only_never_a_revision(repo: GitRepo) -> None:
    repo.write("secret.py", "KEY = 1\n")
    repo.commit("secret")
    [real] = [i for i in blob_ids(b"KEY = 1\n") if len(i) == 40]
    assert list(blobs.read(repo.root, [real], 100)) == [(real, b"KEY = 1\n")]
    assert list(blobs.read(repo.root, ["HEAD:secret.py", "HEAD", "--batch", real[:7], real.upper()], 100)) == []
    assert list(blobs.read(repo.root, [real], 3)) == []  # larger than the limit


def test_blobs_are_read_in_groups_of_bounded_size(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    contents = [f"value_{n} = {'x' * 50 * n}\n".encode() for n in range(1, 6)]
    for n, data in enumerate(contents):
        repo.write(f"f{n}.py", data)
    repo.commit("five files")
    ids = [next(i for i in blob_ids(data) if len(i) == 40) for data in contents]
    monkeypatch.setattr(blobs, "BLOB_GROUP", 120)  # a group or two of these small blobs at a time
    assert dict(blobs.read(repo.root, [*ids, "0" * 40], 1000)) == dict(zip(ids, contents, strict=True))


def test_no_widening_through_a_symlink_out_of_the_repository(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", PY)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK)
    files = diff_of(repo)
    assert widened(files, repo.root)  # the control: the same bytes as a regular file are used
    context.forget()
    outside = tmp_path / "outside.py"
    outside.write_text(PY_NO_CHECK, encoding="utf-8")  # the very content the diff names
    (repo.root / "app.py").unlink()
    (repo.root / "app.py").symlink_to(outside)
    assert widened(files, repo.root) == {}


def test_no_widening_when_the_file_is_not_the_content_the_diff_names(repo: GitRepo) -> None:
    repo.write("app.py", PY)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK)
    files = diff_of(repo)
    assert widened(files, repo.root)
    context.forget()
    # the hunk's own lines still read the same; the signature outside it does not
    repo.write("app.py", PY_NO_CHECK.replace("def delete_user(", "def remove_user("))
    assert widened(files, repo.root) == {}
    assert "remove_user" not in shown(files, repo.root)


def test_no_widening_when_the_hunk_does_not_read_the_same_in_the_content(repo: GitRepo) -> None:
    repo.write("app.py", PY)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK)
    diff = repo.git("diff", *git.DIFF_OPTIONS)
    moved = diff.replace("@@ -15,8 +15,6 @@", "@@ -16,8 +16,6 @@")  # numbers that lie about the content
    assert moved != diff
    files = parse_diff(moved.encode())
    assert widened(files, repo.root) == {}


def test_no_widening_of_a_file_over_the_size_cap(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    filler = "".join(f"X{n:08d} = '{'x' * 100}'\n" for n in range(10_000))  # over 1 MB
    source = PY + filler
    assert len(source) > context.MAX_BYTES
    repo.write("big.py", source)
    base = repo.commit("big")
    repo.write("big.py", source.replace("log.info(\"deleted %s\", user)", "log.info(\"gone %s\", user)"))
    head = repo.commit("edit")
    for files in (diff_of(repo, base, head), diff_of(repo, base)):  # in the object store, in the tree
        assert widened(files, repo.root) == {}
    monkeypatch.setattr(context, "MAX_BYTES", 2_000_000)  # the control: the size is what stopped it
    context.forget()
    assert widened(diff_of(repo, base, head), repo.root)


def test_a_file_the_parser_is_slow_on_is_given_up_not_waited_for(repo: GitRepo) -> None:
    # tree-sitter-python's scanner is quadratic on a run of comment lines: parsed to the end,
    # this file would hold the run for hours
    source = "def f(x):\n" + "    #\n" * 150_000 + "    return x\n"
    assert len(source) < context.MAX_BYTES
    repo.write("slow.py", source)
    repo.commit("slow")
    repo.write("slow.py", source.replace("return x\n", "return x + 1\n"))
    files = diff_of(repo)
    found: list[dict[tuple[str, int], Around]] = []
    # the production clock (this thread's CPU time): the parse would take hours of it
    worker = threading.Thread(target=lambda: found.append(context.widen(files, str(repo.root))), daemon=True)
    worker.start()
    worker.join(120)
    assert found == [{}], "widening did not give up on a slow parse"


def ticking(step: float) -> context.Clock:
    """A clock ``step`` seconds later at each reading: a machine as slow as a test needs."""
    readings = itertools.count()
    return lambda: next(readings) * step


def test_a_parse_stops_when_its_clock_passes_the_file_budget(repo: GitRepo) -> None:
    filler = "".join(f"X{n:05d} = {n}\n" for n in range(20_000))  # long enough to be asked how it goes
    repo.write("app.py", PY + filler)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK + filler)
    files = diff_of(repo)
    assert widened(files, repo.root, ticking(0.01)) == {}  # PARSE_SECONDS: 50 readings
    context.forget()
    assert widened(files, repo.root)  # the control: the clock is what stopped it


def test_no_file_is_parsed_once_the_clock_passes_the_call_budget(repo: GitRepo) -> None:
    repo.write("app.py", PY)
    repo.write("cart.js", JS)
    repo.commit("two")
    repo.write("app.py", PY_NO_CHECK)
    repo.write("cart.js", JS.replace("    const shipping = 5;\n", ""))
    files = diff_of(repo)
    assert widened(files, repo.root, ticking(context.WIDEN_SECONDS)) == {}
    context.forget()
    assert {path for path, _ in widened(files, repo.root)} == {"app.py", "cart.js"}


def test_no_widening_without_the_grammar(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("app.py", PY)
    repo.commit("users")
    repo.write("app.py", PY_NO_CHECK)
    files = diff_of(repo)
    monkeypatch.setitem(sys.modules, "tree_sitter_python", None)  # as if not installed
    context._parser.cache_clear()
    try:
        assert widened(files, repo.root) == {}
        assert "old 18 -" in shown(files, repo.root)  # the removed lines do not need a grammar
    finally:
        context._parser.cache_clear()


# --------------------------------------------------------------------------------------------
# Removed lines, and what gives way to the budget
# --------------------------------------------------------------------------------------------

REMOVED_DIFF = """\
diff --git a/auth.py b/auth.py
--- a/auth.py
+++ b/auth.py
@@ -10,7 +10,5 @@ def handler(request):
     user = request.user
     data = load(request)
-    if not user.is_admin:
-        raise PermissionError("only administrators may delete accounts, whatever the request says")
     delete(data)
+    audit(user)
     return ok()
-    # unreachable
"""


def test_removed_lines_are_shown_where_they_stood_with_their_old_numbers() -> None:
    [change] = parse_diff(REMOVED_DIFF.encode())
    text = shown([change], None)
    assert text.splitlines()[2:] == [
        "    10       user = request.user",
        "    11       data = load(request)",
        "old 12 -     if not user.is_admin:",
        'old 13 -         raise PermissionError("only administrators may delete accounts, whatever the request says")',
        "    12       delete(data)",
        "    13 +     audit(user)",
        "    14       return ok()",
        "old 16 -     # unreachable",
    ]
    assert "removed line" not in text


def test_under_a_small_budget_removed_lines_go_first_then_windows() -> None:
    [change] = parse_diff(REMOVED_DIFF.encode())
    [hunk] = change.hunks
    part = prompt.file_header(change) + " (part)\n"
    bare = len(part + prompt.render_hunk(hunk, removed=False)) + 2
    full = len(part + prompt.render_hunk(hunk)) + 2
    assert full > bare + 8
    text = shown([change], None, budget=bare // 4 + 1)  # room for the hunk, not for its removed lines
    assert "(window" not in text and "old " not in text
    assert "       - (3 removed lines not shown)" in text
    assert "    13 +     audit(user)" in text
    text = shown([change], None, budget=bare // 4 - 8)  # not even that: windows, every line still shown
    assert "(window 1 of" in text and "old " not in text
    for line in hunk.lines:
        assert prompt.render_line(line) in text


def test_the_lines_around_a_hunk_give_way_before_its_removed_lines() -> None:
    [change] = parse_diff(REMOVED_DIFF.encode())
    [hunk] = change.hunks
    signature = Line(1, "def handler(request):  # " + "a long signature comment " * 8, False)
    around = {("auth.py", 0): Around(before=(signature,), after=())}
    with_all = len(prompt.file_header(change) + "\n" + prompt.render_hunk(hunk, around=around["auth.py", 0])) + 2
    text = "\n".join(s for c in chunking.split([change], with_all // 4 + 1, around).chunks for s in c.sections)
    assert "     1   def handler(request):" in text and "old 12 -" in text
    text = "\n".join(s for c in chunking.split([change], with_all // 4 - 20, around).chunks for s in c.sections)
    assert "def handler(request):  #" not in text  # the widening went
    assert "old 12 -     if not user.is_admin:" in text  # the removed lines stayed


def test_the_answer_guide_says_findings_use_new_numbers() -> None:
    assert "old-file number" in prompt.ANSWER_GUIDE
    assert "a finding about a removed line goes on the nearest" in prompt.ANSWER_GUIDE.replace("\n", " ")


# --------------------------------------------------------------------------------------------
# End to end: what the model receives
# --------------------------------------------------------------------------------------------


def test_a_committed_range_reaches_the_model_widened(cli: Any, repo: GitRepo, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    repo.write("cart.js", JS)
    repo.commit("cart")
    repo.branch("feature")
    repo.write("cart.js", JS.replace("    const shipping = 5;\n", ""))
    repo.commit("free shipping")
    with LlmServer() as server:
        cfg = write_config(tmp_path, [llm_agent("llm", server, "anthropic")])
        result = cli("--config", str(cfg), "--base", "main", "--head", "feature", "--format", "json")
        assert agent_result(result.json(), "llm")["status"] == "completed", result.err
        [request] = server.requests
    assert "     6     total(discount) {" in request.prompt
    assert "old 12 -     const shipping = 5;" in request.prompt
