"""What a YAML file is by what it holds: a GitHub Actions workflow, a Kubernetes manifest or a
Compose file, wherever it sits (issue 31).

The rules and domains find those files by folder and name (``.github/workflows/**``, ``k8s/**``,
``docker-compose*.yml``); a workflow template kept in ``ci/templates/``, a manifest in
``deploy/`` or a Compose file named ``stack.yml`` would be read as plain configuration. A file
whose top-level keys say what it is gets a ``content_kind``, and ``models.config.script_names``
gives it the name of that kind's usual place as well (``.github/workflows/NAME``,
``k8s/PATH``, ``DIR/docker-compose.yml``), so the domains' globs and the rules' ``paths`` reach
it as they reach a file that sits there. ``kind_of`` is pure; ``annotate`` reads the new content of
the YAML files the change shows only in part (one ``git cat-file --batch``, 1 MB a file at most).

>>> kind_of("on:\\n  push:\\njobs:\\n  build:\\n    runs-on: ubuntu-latest\\n")
'github-workflow'
>>> kind_of("apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: x\\n")
'kubernetes'
>>> kind_of("services:\\n  web:\\n    image: nginx\\n")
'compose'
>>> kind_of("name: x\\nversion: 2\\n") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from review_gate.models import FileChange, PRFacts

YAML = (".yml", ".yaml")
_TOP = re.compile(r"^(?:[\"']?)([A-Za-z_][\w-]*)(?:[\"']?)[ \t]*:", re.MULTILINE)  # a key at column 0
# a policy's privileged: true or hostPID: true permits what a pod may ask for; the container rules
# would read it as a pod asking (kubernetes/examples' PodSecurityPolicy examples)
_POLICY = re.compile(r"^kind:[ \t]*[\"']?PodSecurityPolicy\b", re.MULTILINE)
_SERVICE_KEY = re.compile(r"^[ \t]+(?:image|build)[ \t]*:", re.MULTILINE)
# where each kind already sits by name: no read is needed there
_PLACED: dict[str, Callable[[str], bool]] = {
    "github-workflow": lambda p: p.startswith(".github/workflows/"),
    "kubernetes": lambda p: p.startswith(("k8s/", "kubernetes/")),
    "compose": lambda p: PurePosixPath(p).name.startswith(("docker-compose", "compose.")),
}


def kind_of(text: str) -> str | None:
    """``github-workflow`` (top-level ``on`` and ``jobs``), ``kubernetes`` (top-level ``apiVersion``
    and ``kind``, in any document of the file; not a PodSecurityPolicy), ``compose`` (top-level
    ``services`` with a service that has an ``image`` or ``build``), else None."""
    keys = {m.group(1) for m in _TOP.finditer(text)}
    if "jobs" in keys and ("on" in keys or "true" in keys):  # YAML 1.1 reads an unquoted on as true
        return "github-workflow"
    if "apiVersion" in keys and "kind" in keys and not _POLICY.search(text):
        return "kubernetes"
    if "services" in keys and _SERVICE_KEY.search(text):
        return "compose"
    return None


def _whole(change: FileChange) -> str | None:
    """The new content when the change shows all of it (a new file), else None."""
    if change.status != "added" or not change.hunks:
        return None
    return "\n".join(line.text for hunk in change.hunks for line in hunk.lines)


def annotate(facts: PRFacts, root: Path | None) -> PRFacts:
    """``facts`` with each YAML file's ``content_kind`` where its content says one that its place
    does not: from the change when it shows the whole file, else from its new content in ``root``."""
    from review_gate.change.blobs import new_contents

    found: dict[str, str | None] = {}
    unread: list[FileChange] = []
    for change in facts.files:
        # a model built without validation reaches classify's boundary check, which names what is wrong
        if (not isinstance(change.path, str) or not change.path.endswith(YAML) or change.status == "deleted"
                or change.binary or change.content_kind is not None):
            continue
        whole = _whole(change)
        if whole is not None:
            found[change.path] = kind_of(whole)
        elif root is not None:
            unread.append(change)
    if unread and root is not None:
        for change, data in new_contents(root, unread):
            if data is not None:
                found[change.path] = kind_of(data.decode("utf-8", "replace"))
    kinds = {p: k for p, k in found.items() if k is not None and not _PLACED[k](p)}
    if not kinds:
        return facts
    files = [c.model_copy(update={"content_kind": kinds[c.path]}) if c.path in kinds else c for c in facts.files]
    return facts.model_copy(update={"files": files})
