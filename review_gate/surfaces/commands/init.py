"""``review-gate init``: a configuration in .review-gate/ that extends the built-in one (an overlay
holding only what the team changes, so that every upgrade reaches the rest); ``init --full``: a
copy of the built-in configuration to own whole, the five files and the loop's prompt templates
(``loop/*.md``)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from review_gate.config import CONFIG_FILES, builtin_dir
from review_gate.errors import ReviewGateError, UsageError
from review_gate.models.config import SETTINGS_FILE
from review_gate.state.location import INIT_GITIGNORE, is_ours_gitignore
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import find_repo_root


def init_command(args: argparse.Namespace) -> int:
    root = find_repo_root() or Path.cwd()
    if args.hooks is not None:
        if args.dir or args.force:
            raise UsageError("--hooks writes only the coding agent's settings; it takes no --dir or --force",
                             fix="run `review-gate init --hooks HOST` and `review-gate init` separately")
        return _hooks(root, args.hooks)
    default = root / ".review-gate"
    target = Path(args.dir) if args.dir else default
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a directory",
                         fix="move it away, or choose another place with --dir")
    source = builtin_dir("config")
    templates = [f"loop/{path.name}" for path in sorted((source / "loop").glob("*.md"))]
    names = [*CONFIG_FILES, *templates, ".gitignore"] if args.full else [SETTINGS_FILE, ".gitignore"]
    existing = [n for n in names if (target / n).exists()]
    replaced = ""
    if existing == [".gitignore"] and is_ours_gitignore(target / ".gitignore"):
        existing = []  # only what the run-state store wrote: init may proceed, and says so
        replaced = " (replacing the .gitignore the run state had written)"
    if existing and not args.force:
        raise UsageError(f"{target} already has {', '.join(existing)}; nothing was written",
                         fix="edit those files, or pass --force to overwrite them with the defaults")
    try:
        if args.full:
            (target / "loop").mkdir(parents=True, exist_ok=True)
            for name in [*CONFIG_FILES, *templates]:
                shutil.copyfile(source / name, target / name)
        else:
            target.mkdir(parents=True, exist_ok=True)
            (target / SETTINGS_FILE).write_text(OVERLAY, encoding="utf-8")
        (target / ".gitignore").write_text(INIT_GITIGNORE, encoding="utf-8")
    except OSError as exc:
        raise ReviewGateError(f"cannot write to {target}: {exc.strerror}",
                              fix="choose a writable directory with --dir") from exc
    check = "review-gate config validate"
    if target.resolve() != default.resolve():
        check += f" --config {target}"
    if not args.full:
        console.out(f"wrote {target / SETTINGS_FILE}{replaced}: a configuration that extends the built-in one and "
                    f"changes nothing yet (its $comment shows how to change, turn off or add a rule); see what is in "
                    f"force with `review-gate config show --origin`, check it with `{check}`. "
                    f"`review-gate init --full` copies the whole built-in configuration instead")
        return 0
    console.out(f"wrote {len(names)} files to {target}{replaced} (the five configuration files, the loop's "
                f"{len(templates)} prompt templates, a .gitignore); check them with `{check}`")
    console.out(f"the llm agents' instructions are not copied: they are read from {source / 'instructions'} until "
                f"a file of the same name is in {target / 'instructions'} (copy one there to edit it)")
    return 0


_EXAMPLE_RULE = {
    "id": "team-no-breakpoint-01", "name": "breakpoint() left in", "severity": "major", "agent": "hygiene-patterns",
    "category": "debug-leftover", "description": "A breakpoint() stops the service under load.",
    "detection": "breakpoint( at the start of a statement in Python files.", "recommendation": "Remove it.",
    "pattern": r"^\s*breakpoint\(", "paths": ["*.py"]}
OVERLAY_DATA = {
    "$comment": {
        "what this is": "This configuration extends the built-in one: it holds only what this project changes, so "
                        "every upgrade of review-gate reaches the rest. Settings go in this file, key by key; the "
                        "other four files (review-rules.json, review-domains.json, review-agents.json, "
                        "review-composition.json) may hold changes by id, as in the examples.",
        "what is in force, and which file set it": "review-gate config show --origin",
        "examples, each a whole file to write": {
            "review-rules.json, a rule's severity changed": {
                "version": 1, "rules": [{"id": "sec-tls-verify-01", "severity": "critical"}]},
            "review-rules.json, a rule turned off": {"version": 1, "disable": ["hyg-debug-print-01"]},
            "review-rules.json, a rule added (every field)": {"version": 1, "rules": [_EXAMPLE_RULE]},
            "review-agents.json, an llm reviewer turned off": {"version": 1, "disable": ["performance-reviewer"]},
        },
    },
    "version": 1,
    "extends": ["builtin"],
}
OVERLAY = json.dumps(OVERLAY_DATA, indent=2) + "\n"
"""What ``init`` writes: an overlay of the built-in configuration that changes nothing yet."""


def _hooks(root: Path, name: str) -> int:
    """``init --hooks HOST``: review-gate's entries merged into the host's project settings,
    running this review-gate by its absolute path: a host that cannot find the program gets exit
    127, takes it for a non-blocking error, and the gate never runs."""
    from review_gate.surfaces.hooks import HOSTS
    from review_gate.surfaces.hooks.check import marker
    from review_gate.surfaces.hooks.settings import merge

    host = HOSTS[name]
    path = root / host.SETTINGS
    program = running_program()
    added, updated = merge(path, host.entries(program), marker(host.NAME))
    check = f"`{program} hook check {host.NAME}`"
    if name == "claude-code":
        console.out(_skill(root, program))
    if not added and not updated:
        console.out(f"{path} already runs `{program} hook {host.NAME}`; nothing was changed. Prove it runs: {check}")
        return 0
    what = f"added review-gate's {' and '.join(added)} hooks" if added else ""
    if updated:
        what = (what + "; " if what else "") + f"pointed the {' and '.join(updated)} hooks at this review-gate"
    console.out(f"{what} in {path} (timeout {host.TIMEOUT_S} s, --budget {host.BUDGET_S}), running {program}.\n"
                f"  That path is this machine's: on another, run `review-gate init --hooks {host.NAME}` there (or put "
                f"review-gate on the PATH the agent has). Prove the hooks run and block: {check}")
    return 0


SKILL = Path(".claude") / "skills" / "review-gate" / "SKILL.md"
PROGRAM_LINE = "review-gate on this machine: "  # the skill's line that names the program, filled in


def _skill(root: Path, program: str) -> str:
    """Claude Code's skill with the steps of a host review (``hooks/SKILL.md``, naming this
    review-gate), where Claude Code reads project skills; one that differs (the user's) is left as it is."""
    text = (Path(__file__).resolve().parents[1] / "hooks" / "SKILL.md").read_text(encoding="utf-8")
    text = text.replace(f"{PROGRAM_LINE}`review-gate`", f"{PROGRAM_LINE}`{program}`", 1)
    path = root / SKILL
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            return f"{path} is up to date (the steps of a host review)"
        if current is not None or path.is_symlink():
            return (f"{path} exists and differs from review-gate's skill; it was left as it is (remove it and run "
                    f"`review-gate init --hooks claude-code` again for the current steps)")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewGateError(f"cannot write {path}: {exc}", fix="make .claude/skills/ writable") from None
    return f"wrote {path}: the skill with the steps of a host review (sub-agents answer the LLM reviewers)"


def running_program() -> str:
    """The review-gate running now, as a shell word: the absolute path of its console script,
    else this Python with ``-I -m review_gate`` (``python -m review_gate init --hooks``): isolated
    from the start, since the hook runs in the repository it judges and ``-m`` alone would import
    that repository's ``review_gate/`` (and ``PYTHONPATH``'s) in place of ours."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "review-gate":
        found = argv0 if argv0.is_absolute() or "/" in sys.argv[0] else shutil.which(sys.argv[0])
        if found is not None and os.access(found, os.X_OK):
            return shlex.quote(os.path.abspath(found))
    beside = Path(sys.executable).parent / "review-gate"
    if beside.is_file() and os.access(beside, os.X_OK):
        return shlex.quote(str(beside))
    return f"{shlex.quote(sys.executable)} -I -m review_gate"
