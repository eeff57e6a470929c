"""Writing a finished report in the formats asked for, shared by ``run`` and ``replay``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from review_gate.models import ReviewReport
from review_gate.outputs import renderer
from review_gate.outputs.summary import summary_line
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import write_output

# Formats read in a log or by an agent, where the summary line they carry counts as the run's one
# summary line.
LOG_FORMATS = ("github", "agent")


def emit(report: ReviewReport, targets: list[tuple[str, str | None]], *,
         verbose: bool = False) -> list[tuple[Path, bytes]]:
    """Each format to its file or to stdout (``show``); returns the files written and their bytes."""
    renderers = text_renderers(verbose)
    written = [write_output(path, renderers.get(fmt, renderer(fmt))(report)) for fmt, path in targets
               if path is not None and path != "-"]
    show(report, targets, renderers, verbose=verbose)
    return written


def text_renderers(verbose: bool) -> dict[str, Callable[[ReviewReport], str]]:
    """The text format's renderer for ``--verbose`` (the long layout), else none of its own."""
    if not verbose:
        return {}
    from functools import partial

    from review_gate.outputs.text import render

    return {"text": partial(render, verbose=True)}


def show(report: ReviewReport, targets: list[tuple[str, str | None]],
         renderers: Mapping[str, Callable[[ReviewReport], str]] | None = None, *, verbose: bool = False) -> None:
    """The format bound for stdout; the summary line exactly once (on stdout when the format there
    carries it, else on stderr); with ``github``, the job summary too. Formats bound for files
    were written already. ``renderers``: formats rendered with their flags' options."""
    summary = summary_line(report)
    summary_shown = False
    for fmt, path in targets:
        if path is not None and path != "-":
            continue
        if fmt == "text":
            from review_gate.outputs.text import show as draw  # rich, only when text is asked for

            draw(report, console.stdout(), verbose=verbose)
            summary_shown = True
        else:
            rendered = (renderers or {}).get(fmt, renderer(fmt))(report)
            sys.stdout.write(rendered)
            sys.stdout.flush()
            summary_shown = summary_shown or (fmt in LOG_FORMATS and summary in rendered)
    if not summary_shown:
        console.err(summary)
    if any(fmt == "github" for fmt, _ in targets):
        append_step_summary(report)


def append_step_summary(report: ReviewReport) -> None:
    """With ``--format github`` in a GitHub job, the Markdown report goes to the job summary too,
    sized so the step's summary file stays under GitHub's 1 MiB."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    from review_gate.outputs.github import SUMMARY_LIMIT, step_summary

    try:
        used = os.path.getsize(path)
    except OSError:
        used = 0
    budget = SUMMARY_LIMIT - used - 1  # the blank line that separates it from what is there
    problem = f"it already holds {used} bytes of GitHub's {SUMMARY_LIMIT}" if budget < 4096 else None
    if problem is None:
        try:
            with open(path, "a", encoding="utf-8", newline="") as handle:
                handle.write(("\n" if used else "") + step_summary(report, budget))
        except OSError as exc:
            problem = str(exc.strerror or exc)
    if problem is not None:
        console.err(f"review-gate: warning: the report was not added to $GITHUB_STEP_SUMMARY: {problem}")
