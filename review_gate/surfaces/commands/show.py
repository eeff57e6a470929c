"""``review-gate show RUN``: a recorded run's report, in any output format."""

from __future__ import annotations

import argparse
import sys
from functools import partial

from review_gate.change.blobs import blob_ids
from review_gate.change.own_files import relative
from review_gate.errors import StateError
from review_gate.outputs import renderer, text
from review_gate.outputs.text import show
from review_gate.state import runs, written
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import find_repo_root, write_output
from review_gate.surfaces.commands.state_common import open_existing


def show_command(args: argparse.Namespace) -> int:
    path, store = open_existing(args)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist)", fix="run `review-gate` first")
    with store:
        report = runs.find_report(store, args.run)
        if args.output and args.output != "-":
            render = partial(text.render, verbose=True) if args.format == "text" and args.verbose \
                else renderer(args.format)
            target, data = write_output(args.output, render(report))
            # a report the gate wrote, as a run's own --output is: the next run leaves it out
            # while its content is what was written (never reviewed as a changed file)
            rel = relative(target, find_repo_root())
            if rel is not None:
                written.record(store, report.run_id, [(rel, blob_ids(data), "report")])
            return 0
    if args.format == "text":
        show(report, console.stdout(), verbose=args.verbose)
    else:
        sys.stdout.write(renderer(args.format)(report))
        sys.stdout.flush()
    return 0
