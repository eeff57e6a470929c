"""A workflow, a Kubernetes manifest or a Compose file is known by what it holds, wherever it sits
(issue 31): the rules of its kind read it as they read one in .github/workflows/, k8s/ or a
docker-compose file. A YAML file that only looks alike (no top-level on + jobs, apiVersion + kind,
services with an image) stays plain configuration."""

from __future__ import annotations

from typing import Any

import pytest

from review_gate.change.content_kind import kind_of
from tests.conftest import GitRepo, make_diff

WORKFLOW = ["name: build", "on:", "  issues:", "jobs:", "  triage:", "    runs-on: ubuntu-latest", "    steps:",
            '      - run: echo "${{ github.event.issue.title }}"']
MANIFEST = ["apiVersion: v1", "kind: Pod", "metadata:", "  name: cache", "spec:", "  containers:",
            "    - name: cache", "      image: redis:latest"]
COMPOSE = ["services:", "  cache:", "    image: redis:latest"]


def _rules(cli: Any, path: str, lines: list[str]) -> set[str]:
    result = cli("--diff", "-", "--format", "json", "--offline", "--no-state", stdin=make_diff(path, lines).encode())
    assert result.code in (0, 1), result.err
    return {f["rule_id"] for f in result.json()["findings"]}


@pytest.mark.parametrize(("path", "lines", "rule"), [
    ("ci/templates/triage.yml", WORKFLOW, "infra-gha-injection-01"),
    ("deploy/cache.yaml", MANIFEST, "infra-image-latest-01"),
    ("stack.yml", COMPOSE, "infra-image-latest-01"),
])
def test_a_file_is_read_by_what_it_holds(cli: Any, path: str, lines: list[str], rule: str) -> None:
    assert rule in _rules(cli, path, lines)


@pytest.mark.parametrize(("path", "lines"), [
    ("config/steps.yml", WORKFLOW[4:]),  # steps without on: and jobs: are no workflow
    ("config/app.yaml", ["kind: cache", "image: redis:latest"]),  # kind without apiVersion
    ("config/app.yml", ["services:", "  - redis", "image: redis:latest"]),  # no service with an image
])
def test_a_look_alike_stays_configuration(cli: Any, path: str, lines: list[str]) -> None:
    assert not _rules(cli, path, lines) & {"infra-gha-injection-01", "infra-image-latest-01"}


def test_a_modified_file_is_read_from_its_new_content(cli: Any, repo: GitRepo) -> None:
    """The change shows only the edited line; the kind comes from the whole new file."""
    repo.write("deploy/cache.yaml", "\n".join([*MANIFEST[:-1], "      image: redis:7"]) + "\n")
    base = repo.commit("pinned")
    repo.write("deploy/cache.yaml", "\n".join(MANIFEST) + "\n")
    head = repo.commit("unpinned")
    result = cli("--base", base, "--head", head, "--format", "json", "--offline", "--no-state")
    assert "infra-image-latest-01" in {f["rule_id"] for f in result.json()["findings"]}, result.out


def test_kind_of() -> None:
    assert kind_of("\n".join(WORKFLOW)) == "github-workflow"
    assert kind_of("---\n# a comment\napiVersion: apps/v1\nkind: Deployment\n") == "kubernetes"
    assert kind_of("\n".join(COMPOSE)) == "compose"
    assert kind_of("'on': push\njobs: {}\n") == "github-workflow"
    assert kind_of("jobs:\n  - nightly\n") is None
    assert kind_of("apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nspec:\n  privileged: true\n") is None
