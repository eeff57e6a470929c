"""``review-gate gaps``: the gaps recorded runs reported, grouped and counted (docs/gaps.md);
``--apply ID`` applies one gap's patch to the config directory, once a person has seen it.

    review-gate gaps --unlinked --drafts DIR   DIR/ID.title and DIR/ID.md per open gap a configuration
                                               change closes and no issue was opened for
    review-gate gaps link ID URL               the issue opened for gap ID: it is never opened again

Subjects and reasons come from the changes reviewed (paths, an agent's reason): they are
escaped in every format, as a report's text is.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from review_gate import api
from review_gate.errors import ConfigError, StateError, UsageError
from review_gate.outputs.markdown import text as md
from review_gate.state import gaps
from review_gate.state.gaps import GapGroup
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import find_repo_root, write_output
from review_gate.surfaces.commands.state_common import open_existing
from review_gate.text.escape import json_safe, sanitize

SUBJECT_WIDTH = 60
# Why a kind of gap has no patch: it is not about a missing config entry.
NO_PATCH = {
    "config_changed": "it is about an edit to the gate's configuration under review, not a missing entry",
    "baseline_changed": "it is about an edit to the baseline under review, not a missing entry",
    "state_changed": "it is about the run state committed in the change, not a missing entry",
    "gap_detector_failed": "the LLM gap detector failed; nothing is missing from the configuration",
    "nested_repository": "a repository inside this one is reviewed on its own, not by an entry of this configuration",
    "unknown_agent": "a configuration that names an unknown agent does not load; `review-gate config validate` "
                     "says where",
}


# Gaps about one change or one outage, not about what the configuration lacks: no issue for them.
NO_ISSUE = ("config_changed", "baseline_changed", "state_changed", "gap_detector_failed")
TITLE_CHARS = 120
MARKER = "review-gate-gap:"


def gaps_command(args: argparse.Namespace) -> int:
    if getattr(args, "gaps_command", None) == "link":
        return _link(args)
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: must be at least 1")
    if args.drafts is not None:
        if args.apply is not None or args.format is not None or args.output is not None:
            raise UsageError("--drafts writes the issue drafts; it takes no --apply, --format or --output",
                             fix="review-gate gaps --unlinked --drafts DIR")
        return _drafts(args)
    if args.apply is not None:
        if args.format is not None or args.output is not None:
            raise UsageError("--apply shows the patch and applies it; it takes no --format or --output",
                             fix="list the gaps with `review-gate gaps --format F`, apply one with --apply ID")
        return _apply(args)
    if args.yes:
        raise UsageError("--yes confirms --apply ID", fix="give the gap to apply: --apply ID --yes")
    path, store = open_existing(args)
    if store is None:
        console.err(f"no runs recorded yet ({path} does not exist)")
        found: list[GapGroup] = []
    else:
        with store:
            found = gaps.grouped(store)
    shown = [g for g in found if (args.all or g.open) and not (args.unlinked and g.issue_url)][:args.limit]
    fmt = args.format or "text"
    rendered = {"json": render_json, "markdown": render_markdown, "text": render_text}[fmt](shown)
    if args.output and args.output != "-":
        write_output(args.output, rendered)
    elif fmt == "text":
        if rendered:
            console.out(rendered.rstrip("\n"))
    else:
        sys.stdout.write(rendered)
        sys.stdout.flush()
    if not shown and fmt == "text" and store is not None:
        closed = len(found) - len(shown)
        console.err("no gaps recorded" if not found else f"no open gaps ({closed} closed by a patch; --all lists them)")
    elif fmt == "text" and any(g.patch is not None and g.open for g in shown):
        console.err("apply a gap's patch with `review-gate gaps --apply ID`: it shows the diff and checks the "
                    "configuration first")
    return 0


def _applicable(group: GapGroup) -> bool:
    return group.patch is not None


def render_text(found: list[GapGroup]) -> str:
    if not found:
        return ""
    rows = [("id", "kind", "runs", "first seen", "last seen", "patch", "subject")]
    for g in found:
        state = ("yes" if g.open else "applied") if _applicable(g) else "-"
        rows.append((g.id, g.kind, str(g.runs), g.first_seen[:16].replace("T", " "),
                     g.last_seen[:16].replace("T", " "), state, _clip(sanitize(g.subject), SUBJECT_WIDTH)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row, group in zip(rows, [None, *found], strict=True):
        cells = [c.rjust(w) if i == 2 else c.ljust(w) for i, (c, w) in enumerate(zip(row[:-1], widths, strict=True))]
        lines.append("  ".join(cells) + "  " + row[-1])
        if group is not None and len(group.files) > 1:  # the files a gap counts, one a line
            lines += [f"    {sanitize(path)}" for path in group.files]
    return "\n".join(lines) + "\n"


def _clip(value: str, width: int) -> str:
    return value if len(value) <= width else value[:width - 1] + "…"


def as_data(group: GapGroup) -> dict[str, Any]:
    return {"id": group.id, "kind": group.kind, "subject": group.subject, "runs": group.runs,
            "first_seen": group.first_seen, "last_seen": group.last_seen, "last_run": group.last_run,
            "reason": group.reason, "suggestion": group.suggestion, "files": group.files,
            "patch": {"file": group.patch.file, "operations": group.patch.as_json()} if group.patch else None,
            "applicable": _applicable(group), "applied_at": group.fixed_at, "issue_url": group.issue_url}


def render_json(found: list[GapGroup]) -> str:
    return json_safe(json.dumps({"gaps": [as_data(g) for g in found]}, indent=2, ensure_ascii=False)) + "\n"


def render_markdown(found: list[GapGroup]) -> str:
    """One issue draft per gap: a level-2 heading (the title), then the body: the evidence, the
    suggestion, and the patch with the command that applies it."""
    drafts = [_draft(g) for g in found]
    return "\n\n".join(drafts) + ("\n" if drafts else "")


def _draft(g: GapGroup) -> str:
    return f"## review-gate gap: {md(g.kind, limit=100)} {md(g.subject, limit=300)}\n\n" + body(g).rstrip("\n")


def title(g: GapGroup) -> str:
    """One line of plain text for an issue tracker: control characters shown, mentions broken, bounded."""
    line = sanitize(" ".join(f"Review configuration gap ({g.kind}): {g.subject}".split()))
    if len(line) > TITLE_CHARS:
        line = line[:TITLE_CHARS - 1].rstrip() + "…"
    return line.replace("@", "@\u200d")


def body(g: GapGroup) -> str:
    """The issue's body: a hidden marker naming the gap (so that an issue opened for it can be
    found again), the evidence, the suggestion, and the patch with the command that applies it."""
    seen = f"{g.runs} recorded run{'s' if g.runs != 1 else ''}"
    lines = [f"<!-- {MARKER}{g.id} -->",
             f"The review configuration missed this in {seen} (first {g.first_seen}, last {g.last_seen}, latest "
             f"run {md(g.last_run, limit=100)}).", "",
             f"- **Kind:** {md(g.kind, limit=100)}",
             f"- **Subject:** {md(g.subject, limit=500)}",
             f"- **Latest evidence:** {md(g.reason)}",
             f"- **Suggested change:** {md(g.suggestion)}", ""]
    if g.patch is None:
        why = NO_PATCH.get(g.kind, "no single configuration entry closes it")
        return "\n".join([*lines, f"No patch: {why}."]) + "\n"
    patch = json.dumps(g.patch.as_json(), indent=2, ensure_ascii=True)
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", patch)), default=0) + 1)
    return "\n".join([
        *lines,
        f"Patch of {md(g.patch.file, limit=100)} (JSON Patch, RFC 6902). `review-gate gaps --apply {g.id}` shows it "
        "as a diff, checks the configuration with it and applies it:", "",
        f"{fence}json", patch, fence]) + "\n"


def _drafts(args: argparse.Namespace) -> int:
    """One ``ID.title`` (one line) and ``ID.md`` (the body) per open gap a configuration change
    closes (with --unlinked: that no issue was opened for), the most recurring first; the ids on
    standard output, one a line, for a script to open issues from."""
    directory = Path(args.drafts)
    _, store = open_existing(args)
    found: list[GapGroup] = []
    if store is not None:
        with store:
            found = gaps.grouped(store)
    chosen = [g for g in found if g.open and g.kind not in NO_ISSUE and not (args.unlinked and g.issue_url)]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for g in chosen[:args.limit]:
            (directory / f"{g.id}.title").write_text(title(g) + "\n", encoding="utf-8")
            (directory / f"{g.id}.md").write_text(body(g), encoding="utf-8")
            console.out(g.id)
    except OSError as exc:
        raise UsageError(f"--drafts {directory}: {exc.strerror}", fix="name a directory that can be written") from exc
    return 0


def _link(args: argparse.Namespace) -> int:
    path, store = open_existing(args)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so no gap {args.gap} either",
                         fix="run `review-gate` first; `review-gate gaps` lists what runs recorded")
    with store:
        group, changed = gaps.link(store, args.gap, args.url, api.person(), replace=args.replace)
    console.out(f"linked gap {group.id} to {group.issue_url}" if changed
                else f"gap {group.id} is linked to {group.issue_url} already")
    return 0


def _apply(args: argparse.Namespace) -> int:
    from review_gate.config import locate_config_dir
    from review_gate.config.patching import prepare, refuse_builtin, write

    path, store = open_existing(args)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so no gap {args.apply} either",
                         fix="run `review-gate` first; `review-gate gaps` lists what runs recorded")
    with store:
        group = gaps.find(store, args.apply)
        if group.patch is None:
            why = NO_PATCH.get(group.kind, "no single configuration entry closes it")
            raise UsageError(f"gap {group.id} ({group.kind}) has no patch to apply: {why}",
                             fix=f"follow its suggestion by hand: {group.suggestion}")
        directory = refuse_builtin(locate_config_dir(args.config, find_repo_root()))
        try:
            patched = prepare(directory, group.patch)
        except ConfigError as exc:
            for problem in exc.problems[:10]:
                console.err(f"{problem.describe()}\n  fix: {problem.fix}")
            console.err(f"review-gate: error: gap {group.id}'s patch would leave the configuration invalid; "
                        "nothing was written")
            return 2
        console.out(f"gap {group.id} · {group.kind} · {sanitize(group.subject)} · seen in {group.runs} run(s)")
        console.out(patched.diff().rstrip("\n"))
        if not _confirmed(args, group, patched.path.name):
            console.err("not applied; nothing was written")
            return 1
        write(patched)
        gaps.mark_fixed(store, group.id, patched.path.name, str(directory), api.person())
    check = f"review-gate config validate --config {directory}"
    console.out(f"applied: {patched.path} (the configuration validates: `{check}`)")
    return 0


def _confirmed(args: argparse.Namespace, group: GapGroup, name: str) -> bool:
    """--yes, or a person answering y at the terminal; with neither, refuse (exit 2)."""
    if args.yes:
        return True
    if not console.is_interactive(sys.stdin):
        raise UsageError("not applied: confirm the change above with --yes (standard input is not a terminal "
                         "to ask on); nothing was written",
                         fix=f"read the diff, then run `review-gate gaps --apply {group.id} --yes`")
    sys.stderr.write(f"apply this change to {name}? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
