"""The judging step's invariants over generated changes (issue 29), with hypothesis.

A change is drawn from a small vocabulary: dangerous lines and harmless ones, comments and strings
that hold the dangerous words, re-indents and reformats, files modified, deleted, renamed, new,
and new files that copy a base file of their name, in the code and in a test directory. The
findings are what a pattern agent reports (each rule's regex on each added line); they go through
the real judging (``refine`` with an in-memory view of the files, then ``aggregate``). For every
rule, file and line text:

- counted >= the rule's occurrences on added lines - the occurrences the change removes from the
  file's own base path or the base file it copies (what may pay), and no removed occurrence pays
  for more than one finding, in whatever files;
- a baseline entry pays for one finding: of a line text's entries, those standing on lines the
  change leaves pay for those first;
- every finding is counted or listed as waived with a kind and a reason, and fingerprints stay
  distinct.

Derandomized, with a fixed number of examples and no deadline: the same cases on every run, on
any machine.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from review_gate.change.diff_parser import parse_diff
from review_gate.config import load_config
from review_gate.judging.fingerprint import anchor_key, fingerprint
from review_gate.judging.occurrences import renumbered
from review_gate.judging.refine import refine
from review_gate.models import AgentResult, FileChange, Finding, PRFacts, ReviewConfig, Waiver
from review_gate.pipeline.aggregate import aggregate
from review_gate.pipeline.classify import classify
from review_gate.text.regex import compile_pattern

CONFIG = load_config(None)
RULES = ("sec-py-eval-01", "sec-tls-verify-01", "sec-os-system-01")
AGENT = "security-patterns"
DANGEROUS = [
    "return eval(cmd)",
    "return  eval( cmd )",
    "r = requests.get(url, verify=False)",
    "r = requests.get(url,verify=False)",
    'os.system("rm -rf " + d + "/cache")',
    'os.system("rm -rf " + d + " /cache")',
    "return eval(size) // 2",
    'return eval(size) // 2 or eval(request.args["q"])',
]
HARMLESS = ["x = 1", "return cmd", "# return eval(cmd)", '"""r = requests.get(url, verify=False)"""', "pass",
            "def handle(cmd):"]
VOCABULARY = DANGEROUS + HARMLESS
PATHS = ["app/a.py", "app/b.py", "lib/c.py", "tests/test_a.py"]
COPY_DIRS = ["v2", "tests"]  # where a new file copying a base file of its name goes


@dataclass
class Change:
    base: dict[str, list[str]]
    head: dict[str, list[str]]
    renamed: dict[str, str] = field(default_factory=dict)  # new path -> old path
    copies: dict[str, str] = field(default_factory=dict)  # new file -> the base file of its name it copies
    entries: dict[str, Waiver] = field(default_factory=dict)  # a baseline of some base findings

    def own(self, path: str) -> str | None:
        """The base path a head file stood at, when it stood anywhere."""
        if path in self.renamed:
            return self.renamed[path]
        return path if path in self.base else None


def _line(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["", "    "])) + draw(st.sampled_from(VOCABULARY))


def _edited(draw: st.DrawFn, lines: list[str]) -> list[str]:
    """``lines`` with a few deleted, inserted, re-indented or replaced."""
    out = list(lines)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "indent", "replace"]))
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "insert" or not out:
            out.insert(at, _line(draw))
        elif kind == "delete" and len(out) > 1:
            del out[at]
        elif kind == "indent":
            out[at] = ("    " + out[at]) if not out[at].startswith(" ") else out[at].lstrip()
        else:
            out[at] = _line(draw)
    return out


@st.composite
def changes(draw: st.DrawFn) -> Change:
    base = {path: [_line(draw) for _ in range(draw(st.integers(1, 6)))]
            for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=3, unique=True))}
    head: dict[str, list[str]] = {}
    change = Change(base, head)
    for path, lines in base.items():
        fate = draw(st.sampled_from(["keep", "edit", "edit", "delete", "rename"]))
        if fate == "keep":
            head[path] = list(lines)
        elif fate == "edit":
            head[path] = _edited(draw, lines)
        elif fate == "rename":
            new = f"moved/{PurePosixPath(path).name}"
            if new not in head and new not in base:
                head[new] = _edited(draw, lines)
                change.renamed[new] = path
    for source in draw(st.lists(st.sampled_from(sorted(base)), max_size=2)):
        new = f"{draw(st.sampled_from(COPY_DIRS))}/{PurePosixPath(source).name}"
        if new not in head and new not in base:
            head[new] = _edited(draw, base[source])
            change.copies[new] = source
    for path in draw(st.lists(st.sampled_from(["app/new.py", "tests/test_new.py"]), max_size=2, unique=True)):
        if path not in base:
            head[path] = [_line(draw) for _ in range(draw(st.integers(1, 5)))]
    baselined = [f for f in _base_findings(base) if draw(st.booleans())]
    change.entries = {f.fingerprint: Waiver(kind="baseline", reason="baselined") for f in baselined}
    return change


def _fires(rule: str, text: str) -> bool:
    pattern = next(r.pattern for r in CONFIG.rules.rules if r.id == rule)
    return compile_pattern(pattern or "").search(text.encode()) is not None


def _found(path: str, numbered: list[tuple[int, str]]) -> list[Finding]:
    """What a pattern agent reports on these lines of ``path``: each rule whose regex is on a line."""
    out = []
    for rule in RULES:
        severity = next(r.severity for r in CONFIG.rules.rules if r.id == rule)
        out += [Finding(fingerprint=fingerprint(AGENT, rule, path, text, n), agent=AGENT, rule_id=rule,
                        severity=severity, category="security", file=path, line=n, end_line=n, message=rule)
                for n, text in numbered if _fires(rule, text)]
    return out


def _base_findings(base: dict[str, list[str]]) -> list[Finding]:
    """The base's findings, numbered over each whole file: what a baseline of the base holds."""
    out = []
    for path, lines in base.items():
        out += renumbered(_found(path, list(enumerate(lines, 1))), {path: "\n".join(lines) + "\n"})
    return out


def _section(path: str, old: str | None, before: list[str], after: list[str], status: str) -> str:
    head = f"diff --git a/{old or path} b/{path}\n"
    if status == "added":
        head += "new file mode 100644\n"
    elif status == "deleted":
        head += "deleted file mode 100644\n"
    elif status == "renamed":
        head += f"similarity index 50%\nrename from {old}\nrename to {path}\n"
    body = list(difflib.unified_diff(before, after, lineterm="", n=3))
    if not body:
        return head if status == "renamed" else ""
    minus = "/dev/null" if status == "added" else f"a/{old or path}"
    plus = "/dev/null" if status == "deleted" else f"b/{path}"
    return head + f"--- {minus}\n+++ {plus}\n" + "\n".join(body[2:]) + "\n"


def diff(change: Change) -> bytes:
    sections = []
    renamed_from = set(change.renamed.values())
    for path, lines in sorted(change.head.items()):
        old = change.own(path)
        status = "renamed" if path in change.renamed else "modified" if old is not None else "added"
        sections.append(_section(path, old, change.base[old] if old is not None else [], lines, status))
    for path, lines in sorted(change.base.items()):
        if path not in change.head and path not in renamed_from:
            sections.append(_section(path, None, lines, [], "deleted"))
    return "".join(sections).encode()


class InMemory:
    """``refine.Surroundings`` over the generated texts (what ``GitSurroundings`` reads from git)."""

    def __init__(self, change: Change) -> None:
        self.change = change

    def gitattributes(self) -> str | None:
        return None

    def new_texts(self, changes: list[FileChange]) -> dict[str, str]:
        return {c.path: "\n".join(self.change.head[c.path]) + "\n" for c in changes if c.path in self.change.head}

    def base_texts(self, changes: list[FileChange]) -> dict[str, tuple[str, str]]:
        copies = self.change.copies
        return {c.path: (copies[c.path], "\n".join(self.change.base[copies[c.path]]) + "\n")
                for c in changes if c.path in copies}

    def owner(self) -> str | None:
        return None

    def base_directories(self, paths: list[str]) -> set[str]:
        return set()


def judged(change: Change, config: ReviewConfig = CONFIG) -> tuple[PRFacts, list[Finding], list[Finding],
                                                                   list[Finding]]:
    """(facts, the findings the agent reported, those counted, those waived) of ``change``."""
    facts = PRFacts(source="generated", files=parse_diff(diff(change)))
    reported = []
    for f in facts.files:
        added = [(line.number, line.text) for hunk in f.hunks for line in hunk.lines if line.added]
        reported += _found(f.path, added)
    result = AgentResult(id=AGENT, kind="pattern", status="completed", required=True, attempts=1, duration_s=0.0,
                         files=[f.path for f in facts.files], findings=reported)
    results, waivers = refine([result], facts, config, InMemory(change), entries=change.entries)
    report = aggregate(facts, classify(facts, config.domains.domains), [], [], results, config, run_id="r",
                       tool_version="0", waivers=waivers)
    return facts, reported, report.findings, report.waived


def _removed(change: Change, facts: PRFacts) -> dict[str, list[str]]:
    """Each base path -> the lines the change removes there (a copied file's base stays)."""
    out: dict[str, list[str]] = {}
    for f in facts.files:
        if f.status in ("modified", "renamed", "deleted"):
            out[f.old_path or f.path] = [t for hunk in f.hunks for t in hunk.removed_lines.texts()]
    return out


def _by(findings: list[Finding], lines: dict[str, list[str]]) -> Counter[tuple[str, str, str]]:
    return Counter((f.rule_id or "", f.file or "", lines[f.file or ""][(f.line or 1) - 1].strip()) for f in findings)


def _check(change: Change) -> None:
    facts, reported, counted, waived = judged(change)
    # nothing dropped: each finding reported is counted or listed, with a kind and a reason
    assert sorted((f.file, f.line, f.rule_id) for f in reported) == sorted(
        (f.file, f.line, f.rule_id) for f in [*counted, *waived])
    assert all(w.waived_kind is not None and w.waived for w in waived)
    assert len({f.fingerprint for f in [*counted, *waived]}) == len(reported)
    heads = change.head
    removed = _removed(change, facts)
    # what may pay: the lines removed from where the file stood, or from the base file it copies
    sources = {path: [s for s in (change.own(path), change.copies.get(path)) if s is not None] for path in heads}
    added = _by(reported, heads)
    left = _by(counted + [w for w in waived if w.waived_kind not in ("preexisting", "moved", "baseline")], heads)
    old = _by([w for w in waived if w.waived_kind in ("preexisting", "moved")], heads)
    for (rule, path, text), n in added.items():
        pay = sum(1 for s in sources[path] for t in removed.get(s, []) if t.strip() == text and _fires(rule, t))
        baselined = sum(1 for w in waived if w.waived_kind == "baseline" and (w.rule_id, w.file) == (rule, path)
                        and heads[path][(w.line or 1) - 1].strip() == text)
        assert left[(rule, path, text)] + baselined >= n - pay, (rule, path, text)
    # no removed line pays twice, over all files
    for rule in RULES:
        for text in {t for (r, _, t) in old if r == rule}:
            paid = sum(n for (r, _, t), n in old.items() if (r, t) == (rule, text))
            gone = sum(1 for lines in removed.values() for t in lines if t.strip() == text and _fires(rule, t))
            assert paid <= gone, (rule, text)
    # a baseline entry pays for one finding: the entries of a text first pay for its lines that stand
    added_lines = {f.path: {line.number for hunk in f.hunks for line in hunk.lines if line.added}
                   for f in facts.files}
    for w in waived:
        if w.waived_kind != "baseline":
            continue
        path, key = w.file or "", anchor_key(heads[w.file or ""][(w.line or 1) - 1])
        numbers = [n for n, line in enumerate(heads[path], 1) if anchor_key(line) == key]
        held = sum(1 for k in range(len(numbers))
                   if fingerprint(AGENT, w.rule_id or "", path, key, k) in change.entries)
        standing = sum(1 for n in numbers if n not in added_lines.get(path, set()))
        used = sum(1 for v in waived if v.waived_kind == "baseline" and (v.rule_id, v.file) == (w.rule_id, path)
                   and anchor_key(heads[path][(v.line or 1) - 1]) == key)
        assert used <= held - standing, (w.rule_id, path, key)


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(changes())
def test_what_is_not_counted_is_paid_for_one_for_one(change: Change) -> None:
    _check(change)


def _examples() -> Iterator[Change]:
    """The issue's own cases, checked by the same oracle."""
    yield Change({"app/admin.py": ["return eval(cmd)"]},
                 {"app/admin.py": ["return  eval( cmd )"],
                  **{f"app/view_{n}.py": ["return eval(cmd)"] for n in "abcd"}})
    yield Change({"app/a.py": ["x = 1", "return eval(cmd)"]},
                 {"v2/a.py": ["x = 1", "return eval(cmd)"], "v3/a.py": ["x = 1", "return eval(cmd)"]},
                 copies={"v2/a.py": "app/a.py", "v3/a.py": "app/a.py"})


def test_the_issues_cases_keep_the_invariant() -> None:
    for change in _examples():
        _check(change)
        _, _, counted, _ = judged(change)
        assert counted, change
