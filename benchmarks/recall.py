#!/usr/bin/env python3
"""Recall of the gate on real security fixes, each reviewed reversed.

    python benchmarks/recall.py --mirrors DIR [--list FILE] [--config DIR] [--only TEXT] [--json OUT]

Each fix of ``recall_fixes.json`` (repository, fix commit, language, class, our one-line
description, whether a line pattern could catch it and the rule that would) is reviewed the way a
pull request that puts the vulnerable code back would be: in a scratch repository that borrows the
objects of the local copy of its repository (``DIR/owner+name/repo``, ``DIR/owner+name/.git`` or
``DIR/owner+name``), a commit whose tree is the fix's parent's is made on top of the fix
(``git commit-tree``, no checkout, no hook) and reviewed in-process as
``review-gate --base FIX --head REVERSE --offline --no-state`` would. The peers that are installed
(zizmor, Bandit, Semgrep with a local copy of rules: ``--semgrep-rules DIR``) read the files the
reversed change touches, written into a temporary directory, and count only what they say of its
added lines. The llm reviewers run only when a provider key is set (``--llm``). Nothing of the
repositories is run: the gate and the peers only read them.

A fix whose commit is missing, whose parent is missing (a shallow copy), that is a root commit or
a merge is reported and skipped. Prints, per reviewer: fixes reviewed, fixes flagged (a finding on
an added line), recall over all and over those a pattern could catch, then each miss of the
pattern agents and the rule that would have caught it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXES = HERE / "recall_fixes.json"
IDENTITY = {"GIT_AUTHOR_NAME": "recall", "GIT_AUTHOR_EMAIL": "recall@invalid", "GIT_COMMITTER_NAME": "recall",
            "GIT_COMMITTER_EMAIL": "recall@invalid", "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
PEERS = ("zizmor", "bandit", "semgrep")


@dataclass
class Fix:
    repo: str
    fix: str
    language: str
    kind: str
    description: str
    pattern: str  # yes | partly | no
    rule: str | None


@dataclass
class Outcome:
    fix: Fix
    skipped: str | None = None
    caught: dict[str, list[str]] = field(default_factory=dict)  # reviewer -> what it said on added lines
    error: str | None = None


def which(name: str) -> str | None:
    """The program beside this interpreter (its virtual environment's), else on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def read_fixes(path: Path) -> list[Fix]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Fix(f["repo"], f["fix"], f["language"], f["class"], f["description"], f["pattern"], f.get("rule"))
            for f in data["fixes"]]


def git(cwd: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check,
                          env={**os.environ, **IDENTITY})


def objects_of(mirrors: Path, repo: str) -> Path | None:
    name = repo.replace("/", "+")
    for candidate in (mirrors / name / "repo", mirrors / name / ".git", mirrors / name):
        if (candidate / "objects").is_dir():
            return candidate / "objects"
    return None


def scratch(objects: Path, repo: str, into: Path) -> Path:
    """An empty repository that reads ``objects`` through alternates: nothing is copied or checked out."""
    root = into / repo.replace("/", "+")
    root.mkdir(parents=True)
    git(root, "init", "-q", check=True)
    (root / ".git" / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
    git(root, "remote", "add", "origin", f"https://github.com/{repo}")  # the same-owner context reads it
    return root


def reverse(root: Path, fix: str) -> tuple[str | None, str | None]:
    """(the reverse commit, None) or (None, why the fix is skipped)."""
    if git(root, "cat-file", "-e", f"{fix}^{{commit}}").returncode != 0:
        return None, "the fix commit is not in the local copy"
    # the commit object's own parent lines: rev-list would walk into a parent a shallow copy lacks
    header = git(root, "cat-file", "commit", fix).stdout.split("\n\n", 1)[0]
    parents = [line.split()[1] for line in header.split("\n") if line.startswith("parent ")]
    if not parents:
        return None, "a root commit has no parent to go back to"
    if len(parents) > 1:
        return None, f"a merge ({len(parents)} parents): which side is the fix is not one answer"
    if git(root, "cat-file", "-e", f"{parents[0]}^{{commit}}").returncode != 0:
        return None, "the parent is missing (a shallow copy)"
    made = git(root, "commit-tree", f"{parents[0]}^{{tree}}", "-p", fix, "-m", f"reverse of {fix[:12]}")
    return (made.stdout.strip(), None) if made.returncode == 0 else (None, made.stderr.strip()[:200])


def added_lines(root: Path, fix: str, rev: str) -> dict[str, set[int]]:
    """Path -> the new-file line numbers the reversed change adds."""
    out: dict[str, set[int]] = {}
    path = None
    for line in git(root, "diff", "--no-ext-diff", "--no-textconv", "-U0", "--no-renames", fix, rev).stdout.split("\n"):
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and path is not None:
            new = line.split(" ")[2].lstrip("+").split(",")
            start, count = int(new[0]), int(new[1]) if len(new) > 1 else 1
            out.setdefault(path, set()).update(range(start, start + count))
    return {p: lines for p, lines in out.items() if lines}


def gate(root: Path, fix: str, rev: str, config: str | None, offline: bool) -> dict[str, list[str]]:
    """Reviewer kind -> findings on added lines (waived ones left out: they do not reach a person)."""
    import anyio

    from review_gate import api
    from review_gate.config.load import load_config

    kinds = {a.id: a.kind for a in load_config(Path(config) if config else None).agents.agents}

    async def run() -> Any:
        return await api.review_async(cwd=root, base=fix, head=rev, offline=offline, state=False, config=config)

    report = anyio.run(run)
    said: dict[str, list[str]] = {}
    for f in report.findings:
        if f.severity == "info":
            continue
        kind = {"pattern": "pattern agents", "llm": "llm reviewers"}.get(kinds.get(f.agent, ""), f"agent {f.agent}")
        said.setdefault(kind, []).append(f"{f.file}:{f.line} {f.severity} {f.rule_id or f.agent}")
    return said


def materialise(root: Path, rev: str, paths: Sequence[str], into: Path) -> None:
    for path in paths:
        blob = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, capture_output=True, check=False)
        if blob.returncode == 0:
            target = into / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob.stdout)


def sarif_hits(text: str, added: dict[str, set[int]], base: Path) -> list[str]:
    hits = []
    for run in json.loads(text or "{}").get("runs", []):
        for result in run.get("results", []):
            for location in result.get("locations", []):
                physical = location.get("physicalLocation", {})
                uri = physical.get("artifactLocation", {}).get("uri", "")
                path = uri.removeprefix("file://").removeprefix(f"{base}/")
                line = physical.get("region", {}).get("startLine", 0)
                if line in added.get(path, ()):
                    hits.append(f"{path}:{line} {result.get('ruleId')}")
    return hits


def peer(name: str, files: Path, added: dict[str, set[int]], semgrep_rules: str | None) -> list[str] | None:
    """What one installed peer says of the added lines; None when it has nothing to read here."""
    if name == "zizmor":
        targets = [p for p in added if p.endswith((".yml", ".yaml")) and
                   (p.startswith(".github/workflows/") or p.rsplit("/", 1)[-1] in ("action.yml", "action.yaml"))]
        if not targets:
            return None
        done = subprocess.run([which("zizmor") or "zizmor", "--offline", "--format", "sarif", "--no-progress",
                               *targets], cwd=files, capture_output=True, text=True, check=False)
        return sarif_hits(done.stdout, added, files)
    if name == "bandit":
        targets = [p for p in added if p.endswith(".py")]
        if not targets:
            return None
        done = subprocess.run([which("bandit") or "bandit", "-q", "-f", "json", *targets], cwd=files,
                              capture_output=True, text=True, check=False)
        results = json.loads(done.stdout or "{}").get("results", [])
        return [f"{r['filename']}:{r['line_number']} {r['test_id']}" for r in results
                if r["line_number"] in added.get(r["filename"].removeprefix("./"), ())]
    if semgrep_rules is None:
        return None
    done = subprocess.run([which("semgrep") or "semgrep", "scan", "--metrics=off", "--disable-version-check",
                           "--config", semgrep_rules, "--sarif", *added], cwd=files, capture_output=True, text=True,
                          check=False)
    return sarif_hits(done.stdout, added, files)


def review(fix: Fix, mirrors: Path, work: Path, config: str | None, llm: bool, peers: Sequence[str],
           semgrep_rules: str | None) -> Outcome:
    objects = objects_of(mirrors, fix.repo)
    if objects is None:
        return Outcome(fix, skipped=f"no local copy of {fix.repo} under {mirrors}")
    root = scratch(objects, fix.repo, work / fix.fix[:12])
    rev, why = reverse(root, fix.fix)
    if rev is None:
        return Outcome(fix, skipped=why)
    outcome = Outcome(fix)
    try:
        outcome.caught.update(gate(root, fix.fix, rev, config, offline=not llm))
    except Exception as exc:  # the benchmark goes on and says which fix broke
        outcome.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        traceback.print_exc(limit=2, file=sys.stderr)
    added = added_lines(root, fix.fix, rev)
    files = work / fix.fix[:12] / "files"
    materialise(root, rev, list(added), files)
    for name in peers:
        said = peer(name, files, added, semgrep_rules)
        if said is not None:
            outcome.caught[name] = said
            outcome.caught.setdefault(f"{name} (read)", [])
    return outcome


def table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def ratio(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.0f} %)" if total else "-"


def report(outcomes: Sequence[Outcome], reviewers: Sequence[str], missing: Sequence[str]) -> str:
    reviewed = [o for o in outcomes if o.skipped is None and o.error is None]
    detectable = [o for o in reviewed if o.fix.pattern == "yes"]
    partly = [o for o in reviewed if o.fix.pattern == "partly"]
    rows = [["reviewer", "fixes it read", "flagged: all", "pattern-detectable", "partly detectable"]]
    for name in reviewers:
        read = [o for o in reviewed if name in ("pattern agents", "llm reviewers") or f"{name} (read)" in o.caught]
        rows.append([name, str(len(read)), ratio(sum(bool(o.caught.get(name)) for o in reviewed), len(reviewed)),
                     ratio(sum(bool(o.caught.get(name)) for o in detectable), len(detectable)),
                     ratio(sum(bool(o.caught.get(name)) for o in partly), len(partly))])
    out = [f"fixes listed: {len(outcomes)}, reviewed: {len(reviewed)}, pattern-detectable: {len(detectable)}, "
           f"partly: {len(partly)}", "", table(rows)]
    if missing:
        out += ["", "not run: " + "; ".join(missing)]
    skipped = [o for o in outcomes if o.skipped or o.error]
    if skipped:
        out += ["", "skipped:"] + [f"  {o.fix.repo} {o.fix.fix[:12]}: {o.skipped or o.error}" for o in skipped]
    misses = [o for o in reviewed if not o.caught.get("pattern agents")]
    out += ["", f"missed by the pattern agents ({len(misses)}):"]
    out += [f"  [{o.fix.pattern:6}] {o.fix.repo} {o.fix.fix[:12]} {o.fix.kind}: {o.fix.description}"
            f"{f' -> {o.fix.rule}' if o.fix.rule else ''}" for o in misses]
    hits = [o for o in reviewed if o.caught.get("pattern agents")]
    out += ["", f"caught by the pattern agents ({len(hits)}):"]
    out += [f"  {o.fix.repo} {o.fix.fix[:12]}: {', '.join(o.caught['pattern agents'][:3])}" for o in hits]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of local copies, owner+name each")
    parser.add_argument("--list", type=Path, default=FIXES, help="the fixes (default: recall_fixes.json)")
    parser.add_argument("--config", help="a configuration directory (default: the built-in one)")
    parser.add_argument("--only", help="only fixes whose repository, class or language contains this text")
    parser.add_argument("--llm", action="store_true", help="run the llm reviewers too (needs a provider key)")
    parser.add_argument("--semgrep-rules", help="a local folder of Semgrep rules (never the registry)")
    parser.add_argument("--json", type=Path, help="write each fix's outcome here")
    args = parser.parse_args(argv)
    fixes = [f for f in read_fixes(args.list)
             if not args.only or any(args.only in v for v in (f.repo, f.kind, f.language))]
    peers = [p for p in PEERS if which(p) and (p != "semgrep" or args.semgrep_rules)]
    missing = [f"{p} (not installed)" for p in PEERS if not which(p)]
    if which("semgrep") and not args.semgrep_rules:
        missing.append("semgrep (no --semgrep-rules folder)")
    keys = [k for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY") if os.environ.get(k)]
    if args.llm and not keys:
        print("--llm needs a provider key (ANTHROPIC_API_KEY or OPENAI_API_KEY)", file=sys.stderr)
        return 2
    if not args.llm:
        missing.append("llm reviewers (" + ("--llm not given" if keys else "no provider configured") + ")")
    with tempfile.TemporaryDirectory(prefix="recall-") as work:
        outcomes = [review(f, args.mirrors, Path(work), args.config, args.llm, peers, args.semgrep_rules)
                    for f in fixes]
    reviewers = ["pattern agents", *(["llm reviewers"] if args.llm else []), *peers]
    print(report(outcomes, reviewers, missing))
    if args.json:
        args.json.write_text(json.dumps([{"repo": o.fix.repo, "fix": o.fix.fix, "skipped": o.skipped,
                                          "error": o.error, "caught": o.caught} for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
