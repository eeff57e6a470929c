"""Sharding a run over a CI matrix: ``--shard K/N`` reviews a stable, balanced share of the files.

Every shard plans the whole change (the same classification, risk, manifest and gaps as an
unsharded run) and then reviews only its share of the files: each agent's scope cut to them.
Shares are balanced by size: the files, largest first (ties broken by a hash of the path), go
one by one to the shard with the fewest bytes so far (the lowest-numbered on a tie). The same
change gives every shard the same assignment, whatever machine computes it, and N shards get
near-equal bytes.

Each shard's report records K/N, its files, how the assignment was computed (every file of the
change with the bytes it weighs) and the identity of the whole (the change's and the
configuration's SHAs), so that ``review-gate merge`` combines the reports of one run only, and
computes the shares again to check that each shard reviewed exactly its own.

    >>> parse("2/4")
    (2, 4)
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Mapping

from review_gate.errors import UsageError
from review_gate.models import AgentManifest, FileChange, Plan, ReviewConfig, ShardInfo
from review_gate.state.freshness import config_sha

MAX_SHARDS = 1000
_SHARD = re.compile(r"(\d+)/(\d+)")


def parse(text: str) -> tuple[int, int]:
    """``K/N`` with 1 <= K <= N <= MAX_SHARDS."""
    match = _SHARD.fullmatch(text.strip())
    index, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if not match or not 1 <= index <= count <= MAX_SHARDS:
        raise UsageError(f"--shard {text}: not a shard K/N with 1 <= K <= N <= {MAX_SHARDS}",
                         fix="give this job's share of N, e.g. --shard 2/4 (in a GitHub matrix: "
                             "--shard ${{ matrix.shard }}/4)")
    return index, count


def _size(change: FileChange) -> int:
    return len(change.patch) or (change.added + change.removed + 1)


def _path_hash(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()


def sizes(files: list[FileChange]) -> dict[str, int]:
    """Each file's path and the bytes the balance weighs it by: what the assignment is computed from."""
    return {change.path: _size(change) for change in files}


def assign(files: list[FileChange], count: int) -> list[list[str]]:
    """The files of each of ``count`` shards (index 0 is shard 1), each list sorted."""
    return assign_sizes(sizes(files), count)


def assign_sizes(weights: Mapping[str, int], count: int) -> list[list[str]]:
    """``assign`` from the recorded sizes alone (what ``merge`` has): the same shares."""
    shares: list[list[str]] = [[] for _ in range(count)]
    loads = [(0, index) for index in range(count)]  # (bytes so far, shard): a heap
    for path in sorted(weights, key=lambda p: (-weights[p], _path_hash(p))):
        load, index = heapq.heappop(loads)
        shares[index].append(path)
        heapq.heappush(loads, (load + weights[path], index))
    return [sorted(share) for share in shares]


def change_sha(plan: Plan) -> str:
    """The whole change as planned: each file's path, status, blob id and diff section."""
    files = [(f.path, f.old_path, f.status, f.content_sha, hashlib.sha256(
        f.patch.encode("utf-8", "surrogateescape")).hexdigest()) for f in plan.facts.files]
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


def share(plan: Plan, config: ReviewConfig, index: int, count: int) -> tuple[Plan, ShardInfo]:
    """Shard ``index`` of ``count`` of the plan: its files, every agent's scope cut to them (an
    agent with none of them does not run in this shard), and the shard's identity."""
    mine = assign(plan.facts.files, count)[index - 1]
    kept = set(mine)
    entries = []
    for entry in plan.manifest.entries:
        files = [f for f in entry.files if f in kept]
        if files or (not entry.files and index == 1):  # an agent with an empty scope runs once, in shard 1
            entries.append(entry.model_copy(update={"files": files}))
    facts = plan.facts.model_copy(update={"files": [f for f in plan.facts.files if f.path in kept]})
    info = ShardInfo(index=index, count=count, change_sha=change_sha(plan), config_sha=config_sha(config),
                     files=mine, sizes=sizes(plan.facts.files))
    return plan.model_copy(update={"facts": facts, "manifest": AgentManifest(entries=entries)}), info


__all__ = ["assign", "assign_sizes", "change_sha", "parse", "share", "sizes"]
