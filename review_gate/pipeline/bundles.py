"""Replay bundles: everything a run saw and every agent said, to re-decide without the agents.

``run --bundle DIR`` writes::

    bundle.json            version, tool version, run id, the run's --filter-mode/--fail-on, waivers, the
                           gate's own findings on its files the change edits
    facts.json             the full PRFacts: files, hunks and each file's patch text
    classification.json    stage 2
    manifest.json          stage 3-4 manifest
    gaps.json              stage 4 gaps
    config/                the five effective config files, as JSON, and the files they name (an llm
                           agent's instructions, the constitution), so replay needs nothing else
    agents/<id>.json       each AgentResult with its findings and its raw answer
    prompts/<id>.json      what each llm agent sent: a system and a user message a request
    intent.md              what the change is for, as the run was given it (--intent), when it was
    report.json            the report of the run

``review-gate replay DIR`` reads it back (``read``) and aggregates again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from review_gate.config.load import read_json
from review_gate.config.messages import pointer
from review_gate.errors import BundleError, ConfigProblem, InputError, ReviewGateError, UsageError
from review_gate.models import (
    AgentResult,
    FailOn,
    FilterMode,
    Finding,
    Gap,
    LlmAgent,
    ManifestEntry,
    PRClassification,
    PRFacts,
    ReviewConfig,
    ReviewReport,
)
from review_gate.models.base import Frozen
from review_gate.models.findings import Waiver

MARKER = "bundle.json"
INTENT = "intent.md"
PROMPTS_README = ("One file per llm agent that sent requests in this run: a JSON list of the requests, "
                  "each its system and user message. Agents of other kinds send no prompt; a cached "
                  "agent sent nothing this run.\n")


class BundleInfo(Frozen):
    version: Literal[1] = 1
    tool_version: str
    run_id: str
    filter_mode: FilterMode | None = None  # the run's --filter-mode, None when the config decided
    fail_on: FailOn | None = None  # the run's --fail-on (or never for --exit-zero)
    waivers: dict[str, Waiver] = Field(default_factory=dict, description="Fingerprint -> what left it out of the "
                                                                     "count (a bare reason: a bundle of 0.3)")
    own_file_findings: list[Finding] = Field(default_factory=list,
                                             description="The gate's own findings on its files the change edits.")


class Bundle(Frozen):
    info: BundleInfo
    facts: PRFacts
    classification: PRClassification
    manifest: list[ManifestEntry]
    gaps: list[Gap]
    results: list[AgentResult]
    report: ReviewReport


def check_target(directory: Path) -> None:
    """Refuse, before any agent runs, to write into a file or a non-empty directory that is not a bundle."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--bundle {directory}: not a directory", fix="name a new or empty directory")
    if directory.is_dir() and any(directory.iterdir()) and not (directory / MARKER).is_file():
        raise UsageError(f"--bundle {directory}: the directory is not empty and holds no bundle",
                         fix="name a new or empty directory, or an earlier bundle to replace")


def _dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json")


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def facts_data(facts: PRFacts) -> Any:
    """PRFacts as JSON, with each file's patch, which model dumps leave out."""
    data = _dump(facts)
    for file_data, change in zip(data["files"], facts.files, strict=True):
        file_data["patch"] = change.patch
    return data


def result_data(result: AgentResult) -> Any:
    """An AgentResult as JSON, with its findings and raw answer, which model dumps leave out."""
    data = _dump(result)
    data["findings"] = [_dump(f) for f in result.findings]
    from review_gate.agents.base import capped  # here: importing the agents package imports every kind

    data["raw"] = capped(result.raw)  # kinds cap their answers; a bundle never trusts that alone
    return data


def write(directory: Path, *, facts: PRFacts, classification: PRClassification, manifest: list[ManifestEntry],
          gaps: list[Gap], config: ReviewConfig, report: ReviewReport, info: BundleInfo,
          intent: str | None = None) -> list[tuple[Path, bytes]]:
    """Write the bundle; returns every file written and its bytes. ``intent``: what the change is
    for, as the run's llm agents were given it."""
    check_target(directory)
    files: list[tuple[Path, bytes]] = [
        (directory / "facts.json", _json(facts_data(facts))),
        (directory / "classification.json", _json(_dump(classification))),
        (directory / "manifest.json", _json([_dump(e) for e in manifest])),
        (directory / "gaps.json", _json([_dump(g) for g in gaps])),
        *((directory / "config" / name, _json(config.file(name).model_dump(mode="json", by_alias=True)))
          for name in config.FILES),
        *((directory / "config" / relative, data) for relative, data in named_files(config)),
        *((directory / "agents" / f"{r.id}.json", _json(result_data(r))) for r in report.agents),
        (directory / "prompts" / "README.md", PROMPTS_README.encode("utf-8")),
        *((directory / "prompts" / f"{r.id}.json", _json(r.prompts)) for r in report.agents if r.prompts),
        *([(directory / INTENT, intent.encode("utf-8", "surrogatepass"))] if intent else []),
        (directory / "report.json", _json(_dump(report))),
        (directory / MARKER, _json(_dump(info))),  # last: a bundle with its marker is complete
    ]
    try:
        with contextlib.suppress(FileNotFoundError):
            (directory / INTENT).unlink()  # an earlier bundle's: this run may have had none
        for sub in ("agents", "prompts", "config"):
            shutil.rmtree(directory / sub, ignore_errors=True)  # an earlier bundle's leftovers
        for sub in ("agents", "prompts", "config"):
            (directory / sub).mkdir(parents=True, exist_ok=True)
        for path, data in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except OSError as exc:
        raise ReviewGateError(f"cannot write the bundle {directory}: {exc.strerror}",
                              fix="choose a writable directory with --bundle DIR") from exc
    return files


NAMED_LIMIT = 5 * 1024 * 1024  # bytes of a file a config names (as of a config file)


def named_files(config: ReviewConfig) -> list[tuple[str, bytes]]:
    """(path relative to the config directory, content) of the files the config names there:
    each llm agent's instructions and the constitution. A name that leads out of the directory,
    or a file the built-in config provides, is left out (replay finds the built-in one itself)."""
    if config.directory is None:
        return []
    root = Path(config.directory).resolve()
    names = [a.instructions for a in config.agents.agents if isinstance(a, LlmAgent)]
    names += [config.settings.constitution] if config.settings.constitution else []
    out = []
    for name in dict.fromkeys(names):
        path = (root / name).resolve()
        if not path.is_relative_to(root) or path == root or not path.is_file() or path.stat().st_size > NAMED_LIMIT:
            continue
        out.append((path.relative_to(root).as_posix(), path.read_bytes()))
    return out


def _load(directory: Path, name: str, model: Any) -> Any:
    """Read one file of the bundle and validate it; problems name the file."""
    path = directory / name
    if not os.path.lexists(path):  # anything else there (a FIFO, a device) read_json refuses by name
        raise InputError(f"bundle {directory}: {name} is missing",
                         fix="replay a directory written by `review-gate run --bundle DIR`")
    data = read_json(path, str(path), error=BundleError)
    try:
        return TypeAdapter(model).validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BundleError([ConfigProblem(str(path), pointer(first["loc"]), first["msg"],
                                         "write the bundle again with `review-gate run --bundle DIR`")]) from exc


def read(directory: Path) -> Bundle:
    if not directory.is_dir():
        raise InputError(f"bundle {directory}: no such directory",
                         fix="replay a directory written by `review-gate run --bundle DIR`")
    info = _load(directory, MARKER, BundleInfo)
    manifest = _load(directory, "manifest.json", list[ManifestEntry])
    results = [_load(directory, f"agents/{entry.agent}.json", AgentResult) for entry in manifest]
    return Bundle(
        info=info,
        facts=_load(directory, "facts.json", PRFacts),
        classification=_load(directory, "classification.json", PRClassification),
        manifest=manifest,
        gaps=_load(directory, "gaps.json", list[Gap]),
        results=results,
        report=_load(directory, "report.json", ReviewReport),
    )


def config_dir(directory: Path) -> Path:
    path = directory / "config"
    if not all((path / name).is_file() for name in ReviewConfig.FILES):
        raise InputError(f"bundle {directory}: config/ lacks some of the five config files",
                         fix="write the bundle again (run --bundle DIR): replay needs the rules the run "
                             "was judged by, also to judge it with --config DIR")
    return path
