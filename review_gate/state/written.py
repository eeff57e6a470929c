"""Files the gate wrote into the working tree (reports, bundles), by git blob id: a later run
leaves them out of the review while their content is exactly what the gate wrote."""

from __future__ import annotations

import json
from collections.abc import Iterable

from review_gate.state.store import Store
from review_gate.state.times import utc_now


def load(store: Store) -> dict[str, list[str]]:
    """Repository-relative path -> the blob ids of what the gate last wrote there."""
    return {path: json.loads(ids) for path, ids in store.db.execute("SELECT path, blob_ids FROM written_files")}


def record(store: Store, run_id: str, files: Iterable[tuple[str, list[str], str]]) -> None:
    """``files``: (repository-relative path, blob ids, kind) of each file this run wrote."""
    now = utc_now()
    rows = [(path, json.dumps(ids), kind, run_id, now) for path, ids, kind in files]
    if not rows:
        return
    with store.write() as db:
        db.executemany("INSERT OR REPLACE INTO written_files (path, blob_ids, kind, run_id, written_at) "
                       "VALUES (?, ?, ?, ?, ?)", rows)
