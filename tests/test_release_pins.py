"""What the docs tell a user to install or pin exists: this repository publishes no release
tags and no PyPI package yet, so no snippet pins a tag of it, and installing from PyPI is said to
work once review-gate is published there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "action.yml", *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "docs").rglob("*.yml"))]
TAG_PIN = re.compile(r"(?:review-gate/review-gate@|^\s*rev:\s*)v\d+\.\d+\.\d+", re.MULTILINE)
FROM_PYPI = re.compile(r"pip install ['\"]?review-gate(?:\[[a-z,]+\])?['\"]?(?!\s*@)(?:\s|$|`|\))")


def test_no_snippet_pins_a_release_tag_this_repository_does_not_have() -> None:
    found = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}" for p in DOCS
             for m in TAG_PIN.finditer(p.read_text(encoding="utf-8"))]
    assert not found


def test_installing_from_pypi_is_said_to_wait_for_the_release() -> None:
    """A line that installs review-gate by its bare name says it works once published."""
    bare = []
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FROM_PYPI.search(line) and "published" not in line:
                bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bare


USES = re.compile(r"^\s*-?\s*uses:\s*(?P<ref>\S+)", re.MULTILINE)
FENCE = re.compile(r"```ya?ml\n(?P<body>.*?)```", re.DOTALL)


def _workflow_snippets() -> list[tuple[str, str]]:
    """Every YAML snippet of the docs (fenced in Markdown, or a whole example file)."""
    found = []
    for path in [*DOCS, *sorted((ROOT / ".github" / "workflows").glob("*.yml"))]:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".yml":
            found.append((str(path.relative_to(ROOT)), text))
        elif path.suffix == ".md":
            found += [(f"{path.relative_to(ROOT)}#{n}", m["body"]) for n, m in enumerate(FENCE.finditer(text))]
    return found


def test_every_action_the_docs_use_is_pinned_by_commit() -> None:
    """A tag can be moved to other code; a commit id cannot (zizmor's unpinned-uses)."""
    loose = [f"{where}: {m['ref']}" for where, body in _workflow_snippets() for m in USES.finditer(body)
             if not m["ref"].startswith("./") and not re.search(r"@[0-9a-f]{40}$", m["ref"])]
    assert not loose


def test_every_checkout_the_docs_show_keeps_no_credentials_and_every_workflow_says_its_permissions() -> None:
    checkouts, unscoped = [], []
    for where, body in _workflow_snippets():
        for m in USES.finditer(body):
            if m["ref"].startswith("actions/checkout@") and "persist-credentials: false" not in body[m.end():][:300]:
                checkouts.append(where)
        if re.search(r"^jobs:", body, re.MULTILINE) and "permissions:" not in body:
            unscoped.append(where)
    assert not checkouts and not unscoped


def test_a_release_is_built_checked_and_published_by_trusted_publishing() -> None:
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML reads the key `on` as true
    assert workflow["permissions"] == {}
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    assert build["permissions"] == {"contents": "read"}
    script = "\n".join(step.get("run", "") for step in build["steps"])
    assert "python -m build" in script and "twine check --strict" in script
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert not any("password" in (step.get("with") or {}) for step in publish["steps"])  # no stored token
