"""``review-gate meta check FILE``: is this a valid ``@@@REVIEW_META`` review?

Valid: prints the block's summary line and exits 0, whatever the verdict (the check answers
"can this be read?"; the verdict is in the line for whoever acts on it). Missing or malformed:
exits 2 with one line naming the problem and one saying how to fix it. FILE ``-`` is standard
input.
"""

from __future__ import annotations

import argparse
import sys

from review_gate.change.input_files import MIB, read_path, read_stream
from review_gate.errors import InputError, MetaError
from review_gate.judging.review_meta import parse_meta
from review_gate.surfaces import console

MAX_REVIEW_BYTES = 16 * MIB  # a review file a person or an agent wrote


def meta_command(args: argparse.Namespace) -> int:
    name, text = _read(args.file)
    try:
        meta = parse_meta(text)
    except MetaError as exc:
        raise MetaError(f"{name}: {exc.message}") from exc
    console.out(meta.summary_line())
    return 0


def _read(path: str) -> tuple[str, str]:
    fix = "give the path of a review file, or - for standard input"
    name = "standard input" if path == "-" else console.sanitize(path)
    if path == "-":
        raw = read_stream(sys.stdin.buffer, limit=MAX_REVIEW_BYTES, name=name, fix=fix)
    else:
        raw = read_path(path, limit=MAX_REVIEW_BYTES, name=name, fix=fix)
    try:
        return name, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                         fix="save the review as UTF-8") from exc
