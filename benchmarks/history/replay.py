#!/usr/bin/env python3
"""Blocking precision of the offline gate on real history.

Replays the last N non-merge commits of local clones of public repositories, each reviewed as
``review-gate --base C~1 --head C --offline --no-state`` (in-process, through the API), and
compares every blocking finding with the verdicts of a judgement file kept beside this script:

    python benchmarks/history/replay.py CLONE... [-n 300] [--out DIR] [--unjudged]
    python benchmarks/history/replay.py --recorded DIR      # judge an earlier --out again

Prints, per repository and in all: commits, blocked commits (exit 1) and incomplete ones
(exit 3), blocking findings and their verdicts, blocking precision (true + contested over the
judged blocking findings), false blocks per commit, the share of commits that end
``pass_with_warnings`` and warnings per commit; then the findings judged true that do not block
in this run (after a change, there must be none). ``--out DIR`` writes every blocking finding with its flagged line
and context (``findings.jsonl``) and one line a commit (``commits.jsonl``), for judging;
``--unjudged`` prints the blocking findings the judgement file has no verdict for.

Nothing is cloned or fetched: the clones are given. The judgement file holds only repository
names, commit ids, rule ids, paths, line numbers, verdicts and a reason in our own words; a
judgement that names a commit its clone lacks is reported and skipped. Never run in CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
JUDGEMENTS = HERE / "judgements.json"
VERDICTS = ("true", "false", "contested")
BLOCKING = ("critical", "major")
CONTEXT = 3  # lines each side of a flagged line written to findings.jsonl

Key = tuple[str, str, str, str, int]  # repository, commit, rule, path, line


def git(clone: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=clone, capture_output=True, check=False)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""


def repository(clone: Path) -> str:
    """owner/name from the clone's origin (a GitHub URL), else the directory's name."""
    url = git(clone, "remote", "get-url", "origin").strip().removesuffix(".git")
    for prefix in ("https://github.com/", "git@github.com:", "ssh://git@github.com/"):
        if url.startswith(prefix):
            return url[len(prefix):]
    return clone.name


def recent(clone: Path, count: int) -> list[str]:
    """The last ``count`` non-merge commits that have a parent, newest first."""
    listed = git(clone, "rev-list", "--no-merges", "--parents", f"--max-count={count + 1}", "HEAD").split("\n")
    return [parts[0] for line in listed if len(parts := line.split()) == 2][:count]


def present(clone: Path, commit: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=clone, capture_output=True,
                          check=False).returncode == 0


@dataclass
class Judgement:
    verdict: str
    reason: str


@dataclass
class Judgements:
    by_key: dict[Key, Judgement] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Judgements:
        """The verdicts of ``path``; an entry that is malformed is reported and left out."""
        found = cls()
        if not path.is_file():
            found.problems.append(f"{path}: no judgement file; every blocking finding is unjudged")
            return found
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))["judgements"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            found.problems.append(f"{path}: not a judgement file ({exc}); every blocking finding is unjudged")
            return found
        for at, entry in enumerate(entries if isinstance(entries, list) else []):
            try:
                key = (entry["repo"], entry["commit"], entry["rule"], entry["path"], int(entry["line"]))
                verdict = entry["verdict"]
            except (KeyError, TypeError, ValueError):
                found.problems.append(f"{path}: /judgements/{at}: needs repo, commit, rule, path, line and verdict")
                continue
            if verdict not in VERDICTS:
                found.problems.append(f"{path}: /judgements/{at}/verdict: {verdict!r} is not one of {VERDICTS}")
                continue
            found.by_key[key] = Judgement(verdict, str(entry.get("reason", "")))
        return found

    def check(self, clones: dict[str, Path]) -> None:
        """Judgements whose commit a given clone lacks are reported and dropped (not a crash)."""
        missing: dict[str, list[str]] = defaultdict(list)
        for key in list(self.by_key):
            clone = clones.get(key[0])
            if clone is not None and not present(clone, key[1]):
                missing[key[0]].append(key[1])
                del self.by_key[key]
        for repo, commits in sorted(missing.items()):
            shown = ", ".join(sorted(c[:12] for c in set(commits))[:5])
            self.problems.append(f"{repo}: {len(commits)} judgement(s) name commits the clone lacks ({shown}"
                                 f"{', ...' if len(set(commits)) > 5 else ''}): skipped")


@dataclass
class Outcome:
    repo: str
    commit: str
    exit_code: int
    decision: str
    blocking: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    seconds: float
    error: str | None = None


def review(clone: Path, commit: str, config: str | None) -> Outcome:
    import anyio

    from review_gate import api
    from review_gate.errors import ReviewGateError

    repo = repository(clone)
    started = time.perf_counter()

    async def run() -> Any:
        return await api.review_async(cwd=clone, base=f"{commit}~1", head=commit, offline=True, state=False,
                                      config=config)

    try:
        report = anyio.run(run)
    except ReviewGateError as exc:
        return Outcome(repo, commit, 2, "error", [], [], time.perf_counter() - started, f"{exc.message} ({exc.fix})")
    except Exception:  # the benchmark goes on, and says which commit broke
        return Outcome(repo, commit, 3, "crash", [], [], time.perf_counter() - started,
                       traceback.format_exc(limit=3).strip().splitlines()[-1])
    found = [{"rule": f.rule_id or "", "path": f.file or "", "line": f.line or 0, "severity": f.severity,
              "message": f.message} for f in report.findings]
    blocking = [f for f in found if f["severity"] in BLOCKING]
    warnings = [f for f in found if f["severity"] == "warning"]
    error = None
    if report.exit_code == 3:
        error = "; ".join(sorted({*report.coverage.unreviewed, *(u.path for u in report.coverage.not_inspected
                                                                  if u.counted)}))[:300] or report.decision
    return Outcome(repo, commit, report.exit_code, report.decision, blocking, warnings,
                   time.perf_counter() - started, error)


def context(clone: Path, commit: str, path: str, line: int) -> list[str]:
    text = git(clone, "show", f"{commit}:{path}").split("\n")
    low, high = max(0, line - 1 - CONTEXT), min(len(text), line + CONTEXT)
    return [f"{'>' if n + 1 == line else ' '}{n + 1:6} {text[n][:300]}" for n in range(low, high)]


@dataclass
class Tally:
    commits: int = 0
    blocked: int = 0
    incomplete: int = 0
    errors: int = 0
    false_blocks: int = 0
    with_warnings: int = 0
    warnings: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, outcome: Outcome, verdicts: list[str]) -> None:
        self.commits += 1
        self.seconds += outcome.seconds
        self.blocked += outcome.exit_code == 1
        self.incomplete += outcome.exit_code == 3
        self.errors += outcome.exit_code == 2
        # a commit that passes with a warning finding: the decision alone would count every
        # --offline run whose llm reviewers were routed (agents_skipped), which says nothing of rules
        self.with_warnings += outcome.exit_code == 0 and bool(outcome.warnings)
        self.warnings += len(outcome.warnings)
        self.verdicts.update(verdicts)
        right = any(v in ("true", "contested") for v in verdicts)
        self.false_blocks += outcome.exit_code in (1, 3) and not right

    def row(self, name: str) -> list[str]:
        judged = self.verdicts["true"] + self.verdicts["false"] + self.verdicts["contested"]
        precision = f"{100 * (self.verdicts['true'] + self.verdicts['contested']) / judged:.1f} %" if judged else "-"
        share = (lambda n: f"{100 * n / self.commits:.2f} %") if self.commits else (lambda n: "-")
        return [name, str(self.commits), str(self.blocked), str(self.incomplete), str(self.errors),
                str(sum(self.verdicts.values())), str(self.verdicts["true"]), str(self.verdicts["contested"]),
                str(self.verdicts["false"]), str(self.verdicts["unjudged"]), precision, share(self.false_blocks),
                share(self.with_warnings), f"{self.warnings / self.commits:.3f}" if self.commits else "-",
                f"{self.seconds:.0f}"]


HEADER = ["repository", "commits", "exit 1", "exit 3", "exit 2", "blocking", "true", "contested", "false",
          "unjudged", "precision", "false blocks", "warned commits", "warnings/commit", "seconds"]


def table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
             for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def replayed_outcomes(clones: dict[str, Path], count: int, config: str | None) -> Iterator[tuple[Path, Outcome]]:
    for clone in clones.values():
        for commit in recent(clone, count):
            yield clone, review(clone, commit, config)


def recorded_outcomes(directory: Path) -> Iterator[tuple[Path | None, Outcome]]:
    """The outcomes a run with ``--out DIRECTORY`` wrote, to judge again without replaying."""
    kept: dict[str, dict[tuple[str, str], list[dict[str, Any]]]] = {"findings": defaultdict(list),
                                                                    "warnings": defaultdict(list)}
    for name, found in kept.items():
        if not (directory / f"{name}.jsonl").is_file():
            print(f"{directory / name}.jsonl: not there; read as none", file=sys.stderr)
            continue
        with (directory / f"{name}.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                found[record["repo"], record["commit"]].append(
                    {"rule": record.get("rule") or "", "path": record.get("path") or "",
                     "line": record.get("line") or 0, "severity": record.get("severity", "warning"),
                     "message": record.get("message", "")})
    with (directory / "commits.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            c = json.loads(line)
            key = (c["repo"], c["commit"])
            yield None, Outcome(c["repo"], c["commit"], c["exit_code"], c["decision"], kept["findings"][key],
                                kept["warnings"][key], c["seconds"], c["error"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", nargs="*", type=Path, help="local clones of the repositories to replay")
    parser.add_argument("-n", "--commits", type=int, default=300, help="non-merge commits a repository (300)")
    parser.add_argument("--judgements", type=Path, default=JUDGEMENTS, help="the verdicts (judgements.json)")
    parser.add_argument("--config", help="a configuration directory (default: each clone's, else the built-in)")
    parser.add_argument("--out", type=Path, help="write findings.jsonl, warnings.jsonl and commits.jsonl here")
    parser.add_argument("--recorded", type=Path, help="judge again what an earlier --out wrote, replaying nothing")
    parser.add_argument("--unjudged", action="store_true", help="print the blocking findings without a verdict")
    args = parser.parse_args(argv)
    if not args.clones and args.recorded is None:
        parser.error("give the clones to replay, or --recorded DIR")
    if args.recorded is not None and not (args.recorded / "commits.jsonl").is_file():
        parser.error(f"{args.recorded}: no commits.jsonl (give a directory an earlier --out wrote)")

    clones: dict[str, Path] = {}
    for clone in args.clones:
        if not (clone / ".git").exists():
            print(f"{clone}: not a git clone: skipped", file=sys.stderr)
            continue
        clones[repository(clone)] = clone.resolve()
    judgements = Judgements.read(args.judgements)
    judgements.check(clones)
    for problem in judgements.problems:
        print(problem, file=sys.stderr)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    tallies: dict[str, Tally] = {}
    replayed: set[tuple[str, str]] = set()
    blocking_keys: set[Key] = set()
    unjudged: list[dict[str, Any]] = []
    found_out = (args.out / "findings.jsonl").open("w", encoding="utf-8") if args.out else None
    warned_out = (args.out / "warnings.jsonl").open("w", encoding="utf-8") if args.out else None
    commits_out = (args.out / "commits.jsonl").open("w", encoding="utf-8") if args.out else None
    source: Iterator[tuple[Path | None, Outcome]] = (
        recorded_outcomes(args.recorded) if args.recorded is not None
        else replayed_outcomes(clones, args.commits, args.config))
    for clone, outcome in source:
        repo, commit = outcome.repo, outcome.commit
        tally = tallies.setdefault(repo, Tally())
        replayed.add((repo, commit))
        verdicts = []
        for finding in outcome.blocking:
            key = (repo, commit, finding["rule"], finding["path"], finding["line"])
            blocking_keys.add(key)
            judged = judgements.by_key.get(key)
            verdicts.append(judged.verdict if judged else "unjudged")
            record = {"repo": repo, "commit": commit, **finding, "verdict": judged.verdict if judged else None}
            if judged is None:
                unjudged.append(record)
            if found_out is not None:
                lines = context(clone, commit, finding["path"], finding["line"]) if clone and finding["line"] else []
                found_out.write(json.dumps({**record, "context": lines}) + "\n")
                found_out.flush()
        tally.add(outcome, verdicts)
        if warned_out is not None:
            for finding in outcome.warnings:
                warned_out.write(json.dumps({"repo": repo, "commit": commit, **finding}) + "\n")
        if commits_out is not None:
            commits_out.write(json.dumps({"repo": repo, "commit": commit, "exit_code": outcome.exit_code,
                                          "decision": outcome.decision, "blocking": len(outcome.blocking),
                                          "warnings": len(outcome.warnings), "error": outcome.error,
                                          "seconds": round(outcome.seconds, 3)}) + "\n")
            commits_out.flush()
    for handle in (found_out, warned_out, commits_out):
        if handle is not None:
            handle.close()
    total = Tally()
    for tally in tallies.values():
        total.commits += tally.commits
        total.blocked += tally.blocked
        total.incomplete += tally.incomplete
        total.errors += tally.errors
        total.false_blocks += tally.false_blocks
        total.with_warnings += tally.with_warnings
        total.warnings += tally.warnings
        total.verdicts.update(tally.verdicts)
        total.seconds += tally.seconds
    print(table([HEADER, *(tally.row(repo) for repo, tally in tallies.items()), total.row("all")]))
    lost = sorted(key for key, judged in judgements.by_key.items()
                  if judged.verdict == "true" and (key[0], key[1]) in replayed and key not in blocking_keys)
    print(f"\nfindings judged true that do not block in this run: {len(lost)}")
    for key in lost:
        print(f"  {key[0]} {key[1][:12]} {key[2]} {key[3]}:{key[4]}")
    if args.unjudged:
        print(f"\nunjudged blocking findings: {len(unjudged)}")
        for record in unjudged:
            print(f"  {record['repo']} {record['commit'][:12]} {record['rule']} {record['path']}:{record['line']}"
                  f"  {record['message'][:120]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
