#!/usr/bin/env python3
"""How fast the agent hook reads a shell command line (review_gate/surfaces/hooks/shell.py).

Run from the repository root with the interpreter review-gate is installed in:

    python benchmarks/hook_shell.py [--strict]

Each line is read in-process by ``shell.gates`` in a temporary git repository with a
``.review-gate/`` directory protected, as the hook reads a Bash call (median of many reads);
the first read of a process, which loads tree-sitter's bash grammar, and the import of the
hook's modules (which must not load it) are measured in fresh interpreters. Prints a table;
exits 0 unless --strict is given and a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PER_LINE_MS = 5.0  # a 1 KB line
FIRST_READ_MS = 150.0  # the grammar loaded, the first line read


def kilobyte_lines() -> dict[str, str]:
    """Lines of 1 KB as coding agents write them (``KB`` rows), and the longest line parsed."""
    message = "fix(parser): handle escaped quotes in nested substitutions; keep the old fallback " * 12
    body = "\n".join(f"- step {n}: don't git push before the review, it's gated" for n in range(20))
    pad = " ".join(["-q"] * 200)
    return {
        "1 KB list: tests, add, commit, push": (
            f'npm ci && npm test -- --runInBand 2>&1 | tee test.log && git add -A && '
            f'git commit -m "{message}')[:1023] + '" && git push -u origin feature/parser',
        "1 KB list, a commit in a subdirectory (git asked where it is)": (
            f'cd src && npm test 2>&1 | tee test.log && git add -A && git commit {pad} {pad}')[:1024],
        "1 KB pull request body in a here-document": (
            f"gh pr create --title 'Parser fixes' --body \"$(cat <<'EOF'\n## Summary\n{body}")[:1000]
            + "\nEOF\n)\"",
        "1 KB of 24 commands, substitutions, a loop": "; ".join(
            ['for f in $(git diff --name-only); do echo "$f"; done', 'x="$(git rev-parse HEAD)"',
             'if [[ -n "$x" ]]; then echo "${x:0:7}"; fi', "sed -n '1,5p' README.md | grep -c review"] * 6)[:1024],
        "64 KB list (the longest line parsed)": " && ".join(["git status --short"] * 3500)[:64 * 1024],
    }


def median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def fresh(code: str) -> float:
    """Milliseconds a fresh interpreter spends on ``code`` (which prints them), median of 5."""
    values = []
    for _ in range(5):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        values.append(float(done.stdout.split()[0]))
    return statistics.median(values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    from review_gate.surfaces.hooks import shell

    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".review-gate").mkdir()
        (root / "src").mkdir()
        protected = [root / ".review-gate"]
        shell.gates("true", root, protected)  # the grammar loaded once
        for name, line in kilobyte_lines().items():
            runs = 200 if len(line) <= 4096 else 10
            ms = median_ms(lambda line=line: shell.gates(line, root, protected), runs)
            found = " ".join(sorted(shell.gates(line, root, protected))) or "nothing"
            measured = len(line) <= 1100 and "git asked" not in name
            target = f"< {PER_LINE_MS:g} ms" if measured else "-"
            status = ("ok" if ms < PER_LINE_MS else "FAIL") if measured else "info"
            rows.append((f"{name} ({len(line)} chars)", target, f"{ms:.2f} ms per line (gates: {found})", status))
    imported = fresh("import sys, time; t = time.perf_counter(); import review_gate.surfaces.hooks.base; "
                     "print((time.perf_counter() - t) * 1000, 'tree_sitter' in sys.modules)")
    loaded = subprocess.run([sys.executable, "-c", "import sys, review_gate.surfaces.hooks.base; "
                             "print('tree_sitter' in sys.modules)"], capture_output=True, text=True, check=True)
    lazy = loaded.stdout.strip() == "False"
    rows.append(("import review_gate.surfaces.hooks.base, fresh interpreter", "tree-sitter not loaded",
                 f"{imported:.0f} ms, tree-sitter {'not ' if lazy else ''}loaded", "ok" if lazy else "FAIL"))
    first = fresh("import time; from pathlib import Path; from review_gate.surfaces.hooks import shell; "
                  "t = time.perf_counter(); shell.gates('git push', Path('.')); "
                  "print((time.perf_counter() - t) * 1000)")
    rows.append(("first line read in a process (the grammar loaded)", f"< {FIRST_READ_MS:g} ms", f"{first:.0f} ms",
                 "ok" if first < FIRST_READ_MS else "FAIL"))
    header = ("measurement", "target", "measured", "ok/FAIL")
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(4)]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 1 if args.strict and any(row[3] == "FAIL" for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
