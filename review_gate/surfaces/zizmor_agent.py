"""``review-gate-zizmor``: the program of the built-in ``zizmor`` command agent (issue 31).

zizmor (GitHub Actions static analysis, installed by the ``zizmor`` extra) reads whole workflow
and action files, while a command agent is given a diff. This program reads that diff on standard
input, takes the new content of each workflow or action file it changes by the blob id the diff
names (``change.blobs.new_contents``: git's object or a working-tree file of that id, never a
path taken on trust), writes it under a temporary directory at its own path and runs
``zizmor --offline --no-config --no-ignores --format sarif`` there. So what is audited is the
change's content whatever the working tree holds (a ``--base A --head B`` review), the change's
own ``zizmor.yml`` and ``# zizmor: ignore`` comments decide nothing (the gate counts inline
waivers itself), and nothing is fetched. It prints the SARIF with the paths as the repository
has them and zizmor's levels as the gate's severities: an error or a warning is a ``warning``,
a note ``info`` (zizmor is a second opinion; the gate's own rules decide what blocks, and the
same finding from both is merged into the rule's: ``Rule.peers``).

Exit 0 with SARIF on standard output; 2 when zizmor is not installed or fails (the agent fails,
with the message, as any command agent does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

ACTION_NAMES = ("action.yml", "action.yaml")
LEVELS = {"error": "warning", "warning": "warning", "note": "info", "none": "info"}


def audited(path: str) -> bool:
    """A file zizmor reads: a workflow, an action definition, a Dependabot configuration."""
    posix = PurePosixPath(path)
    if posix.suffix not in (".yml", ".yaml"):
        return False
    return (posix.parent.as_posix() == ".github/workflows" or posix.name in ACTION_NAMES
            or path in (".github/dependabot.yml", ".github/dependabot.yaml"))


def zizmor_program() -> str | None:
    """zizmor beside this interpreter (the environment the extra installed it into), else on PATH."""
    beside = Path(sys.executable).parent / "zizmor"
    return str(beside) if beside.is_file() else shutil.which("zizmor")


def relabel(sarif: dict[str, object]) -> dict[str, object]:
    """zizmor's levels as the gate's severities, in each result's ``properties.severity``."""
    for run in sarif.get("runs") or []:  # type: ignore[attr-defined]
        for result in run.get("results") or []:
            level = result.get("level") or "warning"
            result.setdefault("properties", {})["severity"] = LEVELS.get(level, "warning")
    return sarif


def main(argv: Sequence[str] | None = None) -> int:
    from review_gate.change.blobs import new_contents
    from review_gate.change.diff_parser import parse_diff

    del argv  # the agent passes nothing: the diff comes on standard input
    program = zizmor_program()
    if program is None:
        sys.stderr.write("zizmor is not installed: pip install 'review-gate[zizmor]'\n")
        return 2
    changes = [c for c in parse_diff(sys.stdin.buffer.read()) if c.status != "deleted" and audited(c.path)]
    empty = {"version": "2.1.0", "runs": []}
    if not changes:
        sys.stdout.write(json.dumps(empty))
        return 0
    with tempfile.TemporaryDirectory(prefix="review-gate-zizmor-") as scratch:
        written = []
        for change, data in new_contents(Path.cwd(), changes):
            if data is None:
                continue
            target = Path(scratch, change.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(change.path)
        if not written:
            sys.stdout.write(json.dumps(empty))
            return 0
        done = subprocess.run([program, "--offline", "--no-config", "--no-ignores", "--no-exit-codes", "--no-progress",
                               "--format", "sarif", *sorted(written)], cwd=scratch, capture_output=True, check=False,
                              env={**os.environ, "NO_COLOR": "1"})
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-500:]
        sys.stderr.write(f"zizmor exited {done.returncode}: {tail}\n")
        return 2
    sys.stdout.write(json.dumps(relabel(json.loads(done.stdout or b"{}"))))
    return 0


def entry() -> int:
    """The console script: started again isolated first when this interpreter would import from
    the working directory, which is the repository under review (``review_gate/_isolation.py``)."""
    from review_gate._isolation import restart_isolated

    restart_isolated(ours=True)
    return main()


if __name__ == "__main__":
    sys.exit(main())
