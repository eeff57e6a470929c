"""``review-gate meta check FILE``: is this a valid ``@@@REVIEW_META`` review?

Valid: prints the block's summary line and exits 0, whatever the verdict (the check answers
"can this be read?"; the verdict is in the line for whoever acts on it). Missing or malformed:
exits 2 with one line naming the problem and one saying how to fix it. FILE ``-`` is standard
input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from review_gate import console
from review_gate.errors import InputError, MetaError
from review_gate.review_meta import parse_meta


def meta_command(args: argparse.Namespace) -> int:
    name, text = _read(args.file)
    try:
        meta = parse_meta(text)
    except MetaError as exc:
        raise MetaError(f"{name}: {exc.message}") from exc
    console.out(meta.summary_line())
    return 0


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        name, raw = "standard input", sys.stdin.buffer.read()
    else:
        name = path
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {console.sanitize(path)}: {exc.strerror or exc}",
                             fix="give the path of a review file, or - for standard input") from exc
    name = console.sanitize(name)
    try:
        return name, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                         fix="save the review as UTF-8") from exc
