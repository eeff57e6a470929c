"""Stage 2: PRFacts + domains -> PRClassification (domains per file, risk, PR type). Pure."""

from __future__ import annotations

import math
import re

from review_gate.models import Domain, FileChange, FileDomains, PRClassification, PRFacts, PrType, RiskLevel
from review_gate.models.config import script_names
from review_gate.pipeline.boundary import checked
from review_gate.text.globs import Globs, selections

_CONVENTIONAL = re.compile(r"^(feat|fix|refactor|docs|test|chore|build|ci|perf|deps)(\(.+\))?!?:", re.I)
_COMMIT_TYPES: dict[str, PrType] = {
    "feat": "feature", "fix": "fix", "refactor": "refactor", "perf": "refactor", "docs": "docs",
    "test": "test", "chore": "config", "build": "config", "ci": "config", "deps": "deps",
}


def risk_score(facts: PRFacts, touched: list[Domain]) -> int:
    """0-100: size (up to 40, log scale, 1000 changed lines ~ 40), spread (up to 20, one point a
    file) and the domains touched (up to 40, four points per unit of the heaviest domain weights)."""
    lines = facts.lines_added + facts.lines_removed
    size = min(40.0, 40 * math.log10(1 + lines) / 3)
    spread = min(20, len(facts.files))
    weights = sorted((d.risk_weight for d in touched), reverse=True)
    domain = min(40, 4 * sum(weights[:2]) + sum(weights[2:]))
    return min(100, round(size + spread + domain))


def risk_level(score: int) -> RiskLevel:
    return "low" if score < 25 else "medium" if score < 50 else "high" if score < 75 else "critical"


def pr_type(facts: PRFacts, files: list[FileDomains], domains: dict[str, Domain]) -> PrType:
    """Every file in domains of one declared type -> that type; else the commits' conventional
    prefix when they agree; else feature (mostly new files), refactor (renames) or mixed."""
    if not facts.files:
        return "mixed"
    file_types: set[PrType | None] = set()
    for entry in files:
        types = {domains[d].pr_type for d in entry.domains if domains[d].pr_type is not None}
        file_types.add(next(iter(types)) if len(types) == 1 else None)
    if len(file_types) == 1 and None not in file_types:
        only = next(iter(file_types))
        assert only is not None
        return only
    commit_types = {_COMMIT_TYPES[m.group(1).lower()] for c in facts.commits
                    if (m := _CONVENTIONAL.match(c.subject))}
    if len(commit_types) == 1:
        return next(iter(commit_types))
    statuses = [f.status for f in facts.files]
    if statuses.count("added") * 2 > len(statuses):
        return "feature"
    if all(s in ("renamed", "copied") for s in statuses):
        return "refactor"
    return "mixed"


def _files(changes: list[FileChange], domains: list[Domain]) -> list[FileDomains]:
    """Each file's domains: every domain's globs asked about every path at once (``selections``),
    then a script's interpreter and the other names it goes by."""
    chosen = selections([d.paths for d in domains], [f.path for f in changes])
    specs = [(d, Globs(d.paths)) for d in domains]
    out = []
    for i, change in enumerate(changes):
        names = script_names(change.path, change.interpreter, domains, change.content_kind)
        ids = [d.id for d, picked in zip(domains, chosen, strict=True) if i in picked]
        if not names and change.interpreter is None:  # the common case, kept lean: a large change has thousands
            out.append(FileDomains(path=change.path, domains=ids))
            continue
        ids = [d.id for (d, spec), picked in zip(specs, chosen, strict=True)
               if d.claims(change.interpreter) or i in picked or any(spec.match(n) for n in names)]
        out.append(FileDomains(path=change.path, domains=ids, names=names))
    return out


def classify(facts: PRFacts, domains: list[Domain]) -> PRClassification:
    """Map each changed file to the domains whose globs select it or whose ``shebangs`` name the
    interpreter of its ``#!`` line (then matched also by that domain's extensions), then score
    the change.

    >>> from review_gate.models import Domain, FileChange, PRFacts
    >>> docs = Domain(id="docs", description="d", paths=["*.md"], risk_weight=0, pr_type="docs")
    >>> facts = PRFacts(source="t", files=[FileChange(path="README.md", old_path="README.md",
    ...                 status="modified", added=1, removed=0)])
    >>> classify(facts, [docs]).pr_type
    'docs'
    """
    facts = checked("classify", facts)
    files = _files(facts.files, domains)
    touched_ids = sorted({d for f in files for d in f.domains})
    by_id = {d.id: d for d in domains}
    score = risk_score(facts, [by_id[d] for d in touched_ids])
    return checked("classify", PRClassification(
        files=files,
        domains=touched_ids,
        unclassified=[f.path for f in files if not f.domains],
        risk_score=score,
        risk_level=risk_level(score),
        pr_type=pr_type(facts, files, by_id),
    ))
