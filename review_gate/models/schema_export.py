"""The published JSON Schemas of the five config files, the JSON report, what each stage hands
the next (the facts, the classification, the manifest, the gap log, an agent's result) and a host
review's task and answer.

They are generated from the models, never written by hand, and checked in under ``schemas/``
so that editors can validate a config file as it is typed (``"$schema": "..."`` in the file)
and tools can validate a report without installing review-gate.

    python -m review_gate.models.schema_export            # rewrite schemas/*.json
    python -m review_gate.models.schema_export --check    # exit 1 when a checked-in file is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from review_gate.models import AgentResult, Gap, ManifestEntry, PRClassification, PRFacts, ReviewConfig, ReviewReport
from review_gate.models.config import AGENTS_FILE, COMPOSITION_FILE, DOMAINS_FILE, RULES_FILE, SETTINGS_FILE
from review_gate.models.host import HostAnswered, HostTask

DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://raw.githubusercontent.com/review-gate/review-gate/main/schemas/"
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"  # the repository's schemas/, beside the package

DESCRIPTIONS = {
    RULES_FILE: "The rules agents check: severity, category, the agent that runs each one and, for "
                "pattern agents, its RE2 pattern.",
    DOMAINS_FILE: "Domains classify changed files by gitignore-style globs and weigh the change's risk.",
    AGENTS_FILE: "The agent registry: pattern agents (the RE2 patterns of their rules), command agents "
                 "(local programs) and llm agents (a model behind an OpenAI-compatible or Anthropic API).",
    COMPOSITION_FILE: "Policies: which agents a change dispatches, triggered by domain, risk, paths or PR type.",
    SETTINGS_FILE: "The gate's conditions and decision threshold, the filter mode, concurrency and timeouts.",
}
REPORT_SCHEMA = "report.schema.json"
# what each stage returns (docs/architecture.md), as `plan --format json`, the report and a bundle hold it
STAGES: dict[str, tuple[TypeAdapter[Any], str, str]] = {
    "facts.schema.json": (TypeAdapter(PRFacts), "review-gate facts (stage 1, normalize)",
                          "What the diff says: the changed files, their status, counts and hunks, and the commits."),
    "classification.schema.json": (TypeAdapter(PRClassification), "review-gate classification (stage 2, classify)",
                                   "Each changed file's domains, the unclassified files, the risk and the PR type."),
    # the list of entries, as plan, the report and a bundle print it (not the model's {"entries": ...} wrapper)
    "manifest.schema.json": (TypeAdapter(list[ManifestEntry]), "review-gate manifest (stage 3, compose)",
                             "The agents a change dispatches: each with the files in its scope, the policies "
                             "that chose it and its priority."),
    "gap-log.schema.json": (TypeAdapter(list[Gap]), "review-gate gap log (stage 4, gap-detect)",
                            "What the configuration missed for this change, each gap with its reason, a "
                            "suggestion and, where one config entry closes it, a JSON Patch."),
    "agent-result.schema.json": (TypeAdapter(AgentResult), "review-gate agent result (stage 5, dispatch)",
                                 "One agent's outcome: its status, attempts, duration, usage and findings."),
    # a host review (`review-gate --llm host`): a task file of the run's directory, and an answer taken
    "host-task.schema.json": (TypeAdapter(HostTask), "review-gate host review task",
                              "One llm reviewer's request for the coding agent's host to answer with a sub-agent: "
                              "the messages and the answer's JSON Schema exactly as a provider would get them, "
                              "and the files a finding may name."),
    "host-answered.schema.json": (TypeAdapter(HostAnswered), "review-gate host answer taken",
                                  "An answer to a host review task, checked and kept: the task, its findings' "
                                  "count and the run's tasks still unanswered."),
}


def schema_name(config_file: str) -> str:
    """``review-rules.json`` -> ``review-rules.schema.json``."""
    return config_file.removesuffix(".json") + ".schema.json"


def _publish(name: str, schema: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    """Put the dialect, the id, the title and the description first, then the generated body."""
    body = {k: v for k, v in schema.items() if k not in ("$schema", "$id", "title", "description")}
    return {"$schema": DIALECT, "$id": BASE_ID + name, "title": title,
            "description": description, **body}


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every published schema."""
    result = {
        schema_name(name): _publish(schema_name(name), kind.model.model_json_schema(by_alias=True),
                                    f"review-gate {kind.field} ({name})", DESCRIPTIONS[name])
        for name, kind in ReviewConfig.FILES.items()
    }
    result[REPORT_SCHEMA] = _publish(
        REPORT_SCHEMA, ReviewReport.model_json_schema(mode="serialization"),
        "review-gate report (--format json)",
        "The report of one review: decision, metrics, findings, agents, classification, "
        "manifest, gaps and coverage.",
    )
    for name, (adapter, title, description) in STAGES.items():
        result[name] = _publish(name, adapter.json_schema(mode="serialization"), title, description)
    return result


def render(schema: dict[str, Any]) -> str:
    """The exact text of a checked-in schema file."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def stale_files(directory: Path) -> list[str]:
    """Names of the schema files in ``directory`` that are missing or differ from the generated ones."""
    stale = []
    for name, schema in schemas().items():
        path = directory / name
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != render(schema):
            stale.append(name)
    return stale


def write_all(directory: Path) -> list[str]:
    """Write every schema into ``directory``; return the names of the files that changed."""
    changed = stale_files(directory) if directory.is_dir() else list(schemas())
    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in schemas().items():
        if name in changed:
            (directory / name).write_text(render(schema), encoding="utf-8", newline="\n")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m review_gate.models.schema_export",
        description="Generate the published JSON Schemas from the models into schemas/.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 and list the files that are stale")
    parser.add_argument("--dir", metavar="DIR", type=Path, default=SCHEMA_DIR,
                        help=f"where the schemas live (default: {SCHEMA_DIR})")
    args = parser.parse_args(argv)
    directory: Path = args.dir
    if args.check:
        stale = stale_files(directory)
        for name in stale:
            sys.stderr.write(f"stale: {directory / name}\n")
        if stale:
            sys.stderr.write("regenerate them with `python -m review_gate.models.schema_export`\n")
            return 1
        sys.stdout.write(f"{len(schemas())} schemas up to date in {directory}\n")
        return 0
    changed = write_all(directory)
    sys.stdout.write(f"wrote {len(changed)} of {len(schemas())} schemas to {directory}"
                     + (f": {', '.join(changed)}\n" if changed else " (all up to date)\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
