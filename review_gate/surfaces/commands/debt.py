"""``review-gate debt``: the deferred debt (findings a passing gate let through), and issue drafts.

    review-gate debt                          open items, a table
    review-gate debt --all                    resolved and waived ones too
    review-gate debt --format markdown        an issue draft (title and body) per item
    review-gate debt --unlinked --drafts DIR  DIR/ID.title and DIR/ID.md per item no issue was opened for
    review-gate debt --limit N                the N most severe (then oldest) items
    review-gate debt link ID URL              the issue opened for item ID: it is never opened again
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from review_gate.errors import StateError, UsageError
from review_gate.models import DebtItem
from review_gate.state import debt
from review_gate.surfaces import console
from review_gate.surfaces.commands.state_common import open_existing, who

WHERE_WIDTH = 32
_ISSUE_NUMBER = re.compile(r"/(?:issues|pull|-/issues)/(\d+)/?$")


def debt_command(args: argparse.Namespace) -> int:
    if args.debt_command == "link":
        return _link(args)
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: must be at least 1")
    if args.output and args.format == "text":
        raise UsageError("--output writes the json or markdown drafts", fix="add --format markdown or --format json")
    path, store = open_existing(args)
    if store is None:
        console.err(f"no debt recorded yet ({path} does not exist)")
        items: list[DebtItem] = []
    else:
        with store:
            items = debt.listing(store, closed=args.all, unlinked=args.unlinked)[:args.limit]
    if args.drafts is not None:
        return _drafts(Path(args.drafts), items)
    if args.format != "text":
        from review_gate.outputs import debt as drafts

        rendered = drafts.render_json(items) if args.format == "json" else drafts.render_markdown(items)
        if args.output:
            _write(Path(args.output), rendered)
        else:
            console.out(rendered.rstrip("\n"))
        return 0
    if not items:
        if store is not None:
            console.err("no open debt items" + ("" if args.all else " (--all lists resolved and waived ones)"))
        return 0
    _table(items, show_status=args.all)
    return 0


def _link(args: argparse.Namespace) -> int:
    path, store = open_existing(args)
    if store is None:
        raise StateError(f"no debt recorded yet ({path} does not exist)", fix="run `review-gate` first")
    with store:
        item, changed = debt.link(store, args.item, args.url, who(), replace=args.replace)
    if changed:
        console.out(f"linked debt item {item.id} to {item.issue_url}")
    else:
        console.out(f"debt item {item.id} is linked to {item.issue_url} already")
    return 0


def _drafts(directory: Path, items: list[DebtItem]) -> int:
    """One ``ID.title`` (one line) and ``ID.md`` (the body) per item, for a script to open issues
    from; the ids on standard output, one a line."""
    from review_gate.outputs import debt as drafts

    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--drafts {directory}: {exc.strerror}", fix="name a directory that can be created") from exc
    for item in items:
        _write(directory / f"{item.id}.title", drafts.title(item) + "\n")
        _write(directory / f"{item.id}.md", drafts.body(item))
        console.out(str(item.id))
    return 0


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}", fix="choose a writable path") from exc


def _table(items: list[DebtItem], *, show_status: bool) -> None:
    from rich.table import Table

    from review_gate.outputs.debt import location
    from review_gate.outputs.text import print_trimmed

    out = console.stdout()
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("id", no_wrap=True, justify="right", min_width=max(len(str(i.id)) for i in items))
    table.add_column("severity", no_wrap=True)
    if show_status:
        table.add_column("status", no_wrap=True)
    table.add_column("where", no_wrap=True, max_width=WHERE_WIDTH)
    table.add_column("runs", no_wrap=True, justify="right")
    table.add_column("first", no_wrap=True)
    table.add_column("issue", no_wrap=True)
    table.add_column("message", ratio=1, overflow="fold")
    for item in items:
        cells = [str(item.id), item.severity, *([item.status] if show_status else []),
                 _head(console.sanitize(location(item)), WHERE_WIDTH), str(item.runs), item.first_seen[:10],
                 _issue(item.issue_url), console.sanitize(_message(item))]
        table.add_row(*cells)
    print_trimmed(out, table)


def _message(item: DebtItem) -> str:
    """The message; for a closed item, why it was closed too."""
    return item.message if item.status == "open" else f"{item.message} [{item.status}: {item.resolution}]"


def _head(text: str, width: int) -> str:
    """A long path keeps its end (the file name and line), as history keeps a source's."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _issue(url: str | None) -> str:
    if url is None:
        return "-"
    number = _ISSUE_NUMBER.search(url)
    return f"#{number.group(1)}" if number else "linked"
