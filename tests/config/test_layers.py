"""Configuration layers (``extends``), through the real CLI in real repositories: an overlay on the
built-in configuration, a directory preset, a preset an installed package publishes, ``disable``,
unknown ids, full copies, ``config show --origin`` and ``config diff``, and every way a layer is
wrong (exit 2, one line naming the layer, the id and the fix; nothing half applied)."""

from __future__ import annotations

import json
import subprocess
import sysconfig
import venv
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

BUILTIN = Path(__file__).parents[2] / "config"
TLS = "sec-tls-verify-01"
PRINT = "hyg-debug-print-01"


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def overlay(folder: Path, *, extends: list[str] | None = None, **files: Any) -> None:
    write(folder / "review-gate.json", {"version": 1, "extends": extends if extends is not None else ["builtin"],
                                        **files.pop("settings", {})})
    for name, data in files.items():
        write(folder / f"review-{name}.json", {"version": 1, **data})


def findings(cli: Any, *args: str) -> dict[str, str]:
    """Rule id -> severity of what an offline review of the working tree counts."""
    result = cli("--offline", "--no-state", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return {f["rule_id"]: f["severity"] for f in result.json()["findings"] if not f.get("waived")}


def show(cli: Any, *args: str) -> dict[str, Any]:
    result = cli("config", "show", *args)
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    return data


NEW_RULE = {"id": "team-no-breakpoint-01", "name": "breakpoint() left in", "severity": "major",
            "agent": "hygiene-patterns", "category": "debug-leftover", "description": "It stops the service.",
            "detection": "breakpoint( in Python.", "recommendation": "Remove it.",
            "pattern": r"^\s*breakpoint\(", "paths": ["*.py"]}
CODE = "import requests\nr = requests.get(url, verify=False, timeout=5)\nprint(r)\nbreakpoint()\n"


def test_init_writes_an_overlay_that_changes_nothing(cli, repo: GitRepo) -> None:
    result = cli("init")
    assert result.code == 0, result.err
    target = repo.root / ".review-gate"
    assert sorted(p.name for p in target.iterdir()) == [".gitignore", "review-gate.json"]
    assert json.loads((target / "review-gate.json").read_text())["extends"] == ["builtin"]
    validated = cli("config", "validate")
    assert validated.code == 0, validated.err
    assert "layers: built-in <" in validated.out
    mine, builtin = show(cli), show(cli, "--config", str(BUILTIN))
    for name in ("review-rules.json", "review-domains.json", "review-agents.json", "review-composition.json",
                 "review-gate.json"):
        assert mine[name] == builtin[name], name


def test_the_examples_init_writes_are_files_that_work(cli, repo: GitRepo) -> None:
    assert cli("init").code == 0
    target = repo.root / ".review-gate"
    examples = json.loads((target / "review-gate.json").read_text())["$comment"]["examples, each a whole file to write"]
    for title, data in examples.items():
        write(target / title.split(",")[0], data)
        assert cli("config", "validate").code == 0, title


def test_an_overlay_changes_disables_and_adds_by_id(cli, repo: GitRepo) -> None:
    repo.write("app.py", CODE)
    before = findings(cli)
    assert before[TLS] == "major" and PRINT in before and "team-no-breakpoint-01" not in before
    overlay(repo.root / ".review-gate", rules={"rules": [{"id": TLS, "severity": "critical"}, NEW_RULE],
                                               "disable": [PRINT]})
    after = findings(cli)
    assert after[TLS] == "critical"
    assert PRINT not in after
    assert after["team-no-breakpoint-01"] == "major"
    rules = {r["id"]: r for r in show(cli)["review-rules.json"]["rules"]}
    builtin = {r["id"]: r for r in show(cli, "--config", str(BUILTIN))["review-rules.json"]["rules"]}
    assert rules[TLS] == {**builtin[TLS], "severity": "critical"}  # only the field given changed
    assert len(rules) == len(builtin)  # one added, one removed


def test_settings_merge_key_by_key(cli, repo: GitRepo) -> None:
    overlay(repo.root / ".review-gate", settings={"gate": {"fail_on": "fail"}, "concurrency": 3})
    settings = show(cli)["review-gate.json"]
    builtin = show(cli, "--config", str(BUILTIN))["review-gate.json"]
    assert settings["gate"] == {**builtin["gate"], "fail_on": "fail"}  # the conditions kept
    assert settings["concurrency"] == 3 and settings["timeout_s"] == builtin["timeout_s"]


def test_a_directory_preset_and_the_origins_shown(cli, repo: GitRepo) -> None:
    gate = repo.root / ".review-gate"
    overlay(gate / "presets" / "team", rules={"rules": [{"id": TLS, "severity": "critical"}, NEW_RULE]})
    overlay(gate, extends=["builtin", "presets/team"], rules={"rules": [{"id": TLS, "paths": ["src/**"]}]},
            agents={"disable": ["performance-reviewer"]})
    data = show(cli, "--origin")
    rules = {r["id"]: r for r in data["review-rules.json"]["rules"]}
    assert rules[TLS]["severity"] == "critical" and rules[TLS]["paths"] == ["src/**"]
    assert data["layers"] == ["built-in", "presets/team", str(gate)]
    tls = data["origins"]["rules"][TLS]
    assert [(t["layer"], t["action"]) for t in tls] == [
        ("built-in", "defined"), ("presets/team", "changed"), (str(gate), "changed")]
    assert tls[1]["file"] == str(gate / "presets" / "team" / "review-rules.json")
    assert tls[1]["pointer"] == "/rules/0" and tls[1]["fields"] == ["severity"]
    assert tls[2]["pointer"] == "/rules/0" and tls[2]["fields"] == ["paths"]
    # the pointers point at what the files hold
    team = json.loads((gate / "presets" / "team" / "review-rules.json").read_text())
    assert team["rules"][0]["id"] == TLS
    builtin_index = int(tls[0]["pointer"].rsplit("/", 1)[1])
    assert json.loads((BUILTIN / "review-rules.json").read_text())["rules"][builtin_index]["id"] == TLS
    added = data["origins"]["rules"]["team-no-breakpoint-01"]
    assert [(t["layer"], t["action"]) for t in added] == [("presets/team", "added")]
    off = data["origins"]["agents"]["performance-reviewer"][-1]
    assert off["action"] == "disabled" and off["pointer"] == "/disable/0"
    agents = {a["id"]: a for a in data["review-agents.json"]["agents"]}
    assert agents["performance-reviewer"]["enabled"] is False  # turned off, still named by its policies
    card = cli("rule", TLS)
    assert "severity by" in card.out and "presets/team/review-rules.json" in card.out


def test_explain_and_a_review_use_the_layers(cli, repo: GitRepo) -> None:
    overlay(repo.root / ".review-gate", rules={"rules": [{"id": TLS, "severity": "critical"}]})
    repo.write("app.py", CODE)
    result = cli("--offline", "--no-state")
    assert result.code == 1
    assert "FAIL" in result.out


@pytest.mark.parametrize(("layers", "words"), [
    ({"rules": {"rules": [{"id": "sec-tls-verify-1", "severity": "critical"}]}},
     ["review-rules.json: /rules/0/id", "unknown rule id 'sec-tls-verify-1'", "did you mean 'sec-tls-verify-01'"]),
    ({"rules": {"disable": ["hyg-debug-print-1"]}},
     ["review-rules.json: /disable/0", "cannot disable unknown rule", "hyg-debug-print-01"]),
    ({"agents": {"agents": [{"id": "build-reviewr", "enabled": False}]}},
     ["review-agents.json: /agents/0/id", "unknown agent id 'build-reviewr'", "build-reviewer"]),
])
def test_an_unknown_id_names_the_layer_and_close_ids(cli, repo: GitRepo, layers: dict[str, Any],
                                                     words: list[str]) -> None:
    overlay(repo.root / ".review-gate", **layers)
    result = cli("config", "validate")
    assert result.code == 2
    assert "Traceback" not in result.err
    for word in words:
        assert word in result.err
    assert str(repo.root / ".review-gate") in result.err
    run = cli("--offline", "--no-state")
    assert run.code == 2 and "fix:" in run.err and len(run.err.strip().splitlines()) <= 3


def test_every_problem_of_every_layer_in_one_pass(cli, repo: GitRepo) -> None:
    gate = repo.root / ".review-gate"
    overlay(gate / "team", rules={"rules": [{"id": TLS, "severity": "bogus", "pattern": "(unclosed"}]})
    overlay(gate, extends=["team"], rules={"disable": ["no-such-rule"]})
    result = cli("config", "validate")
    assert result.code == 2
    assert f"{gate / 'team' / 'review-rules.json'}: /rules/0/severity" in result.err
    assert f"{gate / 'team' / 'review-rules.json'}: /rules/0/pattern: not a valid RE2 pattern" in result.err
    assert f"{gate / 'review-rules.json'}: /disable/0" in result.err
    assert "config invalid: 3 problems" in result.err


def test_a_full_copy_without_extends_is_read_as_before(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    path = repo.root / ".review-gate" / "review-rules.json"
    rules = json.loads(path.read_text())
    rules["rules"] = [r for r in rules["rules"] if r["id"] != PRINT]
    path.write_text(json.dumps(rules))
    repo.write("app.py", CODE)
    assert PRINT not in findings(cli)  # a rule the copy deleted stays deleted


def test_config_diff_turns_a_full_copy_into_the_overlay_that_makes_it(cli, repo: GitRepo, tmp_path: Path) -> None:
    assert cli("init", "--full").code == 0
    folder = repo.root / ".review-gate"
    rules = json.loads((folder / "review-rules.json").read_text())
    for rule in rules["rules"]:
        if rule["id"] == TLS:
            rule["severity"] = "critical"
    rules["rules"] = [r for r in rules["rules"] if r["id"] != PRINT] + [NEW_RULE]
    (folder / "review-rules.json").write_text(json.dumps(rules))
    settings = json.loads((folder / "review-gate.json").read_text())
    settings["concurrency"] = 3
    (folder / "review-gate.json").write_text(json.dumps(settings))
    result = cli("config", "diff")
    assert result.code == 0, result.err
    made = result.json()
    assert set(made) == {"review-rules.json", "review-gate.json"}
    assert made["review-rules.json"]["disable"] == [PRINT]
    assert {"id": TLS, "severity": "critical"} in made["review-rules.json"]["rules"]
    assert made["review-gate.json"] == {"version": 1, "extends": ["builtin"], "concurrency": 3}
    target = tmp_path / "overlay"
    for name, data in made.items():
        write(target / name, data)
    full, layered = show(cli), show(cli, "--config", str(target))
    for name in made:
        assert layered[name] == full[name], name


def test_a_cycle_a_missing_preset_and_a_path_outside_are_refused(cli, repo: GitRepo) -> None:
    gate = repo.root / ".review-gate"
    overlay(gate / "a", extends=["../b"])
    overlay(gate / "b", extends=["../a"])
    overlay(gate, extends=["a"])
    result = cli("config", "validate")
    assert result.code == 2 and "makes a cycle" in result.err and "/extends/0" in result.err
    overlay(gate, extends=["builtin", "missing"])
    result = cli("config", "validate")
    assert result.code == 2 and "extends 'missing': no such directory" in result.err
    assert f"{gate / 'review-gate.json'}: /extends/1" in result.err
    (repo.root / "elsewhere").mkdir()
    overlay(gate, extends=["../elsewhere"])
    result = cli("config", "validate")
    assert result.code == 2 and "leaves the configuration directory" in result.err


def test_two_layers_adding_the_same_new_id(cli, repo: GitRepo) -> None:
    gate = repo.root / ".review-gate"
    overlay(gate / "one", rules={"rules": [NEW_RULE]})
    overlay(gate / "two", rules={"rules": [{**NEW_RULE, "severity": "warning"}]})
    overlay(gate, extends=["builtin", "one", "two"])
    result = cli("config", "validate")
    assert result.code == 2
    assert "'team-no-breakpoint-01' is added by two layers (one and two)" in result.err
    assert str(gate / "two" / "review-rules.json") in result.err


def _venv_with_preset(tmp_path: Path, body: str) -> Path:
    """A real virtual environment that sees this review-gate (a .pth file, as an editable install
    writes) and holds an installed package ``acme_review`` publishing the preset ``acme``: its
    files and its .dist-info with the entry point, as an installer leaves them."""
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # this environment's packages, its own .pth files (an editable install's) processed too
    (site / "review_gate_here.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    package = site / "acme_review"
    package.mkdir()
    (package / "__init__.py").write_text(body)
    write(package / "review-rules.json", {"version": 1, "rules": [{"id": TLS, "severity": "critical"}]})
    write(package / "review-gate.json", {"version": 1, "extends": ["builtin"]})
    info = site / "acme_review-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-review\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[review_gate.presets]\nacme = acme_review\n")
    return python


def test_a_preset_an_installed_package_publishes(repo: GitRepo, tmp_path: Path) -> None:
    python = _venv_with_preset(tmp_path, "")
    overlay(repo.root / ".review-gate", extends=["preset:acme"], rules={"rules": [{"id": TLS, "paths": ["app/**"]}]})
    shown = subprocess.run([str(python), "-m", "review_gate", "config", "show", "--origin"], cwd=repo.root,
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    rule = next(r for r in data["review-rules.json"]["rules"] if r["id"] == TLS)
    assert rule["severity"] == "critical" and rule["paths"] == ["app/**"]
    assert data["layers"] == ["built-in", "preset:acme", str(repo.root / ".review-gate")]
    assert data["origins"]["rules"][TLS][1]["file"].endswith("acme_review/review-rules.json")
    missing = subprocess.run([str(python), "-m", "review_gate", "config", "validate"], cwd=repo.root,
                             capture_output=True, text=True, env=None)
    assert missing.returncode == 0, missing.stderr
    overlay(repo.root / ".review-gate", extends=["preset:acne"])
    wrong = subprocess.run([str(python), "-m", "review_gate", "config", "validate"], cwd=repo.root,
                           capture_output=True, text=True)
    assert wrong.returncode == 2
    assert "no installed package publishes the preset 'acne' (did you mean 'acme'?)" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_a_preset_whose_package_fails_to_import(repo: GitRepo, tmp_path: Path) -> None:
    python = _venv_with_preset(tmp_path, "raise ImportError('broken on purpose')\n")
    overlay(repo.root / ".review-gate", extends=["preset:acme"])
    result = subprocess.run([str(python), "-m", "review_gate", "config", "validate"], cwd=repo.root,
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "the preset 'acme' (acme_review) failed to load: ImportError: broken on purpose" in result.stderr
    assert "/extends/0" in result.stderr and "Traceback" not in result.stderr


def test_the_configuration_identity_covers_every_layer(repo: GitRepo, tmp_path: Path) -> None:
    from review_gate.config.identity import identity

    gate = repo.root / ".review-gate"
    overlay(gate / "team", rules={"rules": [{"id": TLS, "severity": "critical"}]})
    overlay(gate, extends=["team"])
    first = identity(gate)
    overlay(gate / "team", rules={"rules": [{"id": TLS, "severity": "warning"}]})
    assert identity(gate) != first


def test_the_identity_covers_an_installed_preset(repo: GitRepo, tmp_path: Path) -> None:
    python = _venv_with_preset(tmp_path, "")
    gate = repo.root / ".review-gate"
    overlay(gate, extends=["preset:acme"])
    ask = [str(python), "-c", f"from review_gate.config.identity import identity; print(identity({str(gate)!r}))"]
    first = subprocess.run(ask, capture_output=True, text=True, check=True).stdout
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages"))
    write(site / "acme_review" / "review-rules.json", {"version": 1, "rules": [{"id": TLS, "severity": "warning"}]})
    assert subprocess.run(ask, capture_output=True, text=True, check=True).stdout != first


def test_a_gap_patch_goes_into_the_overlay_as_the_entry_alone(cli, repo: GitRepo) -> None:
    assert cli("init").code == 0
    repo.write("notes.xyz", "some notes\n")
    recorded = cli("--offline", "--format", "json")
    assert recorded.code in (0, 1), recorded.err
    listed = cli("gaps", "--format", "json")
    assert listed.code == 0, listed.err
    gap = next(g for g in listed.json()["gaps"] if g["kind"] == "unclassified_file")
    applied = cli("gaps", "--apply", gap["id"], "--yes")
    assert applied.code == 0, applied.err
    written = json.loads((repo.root / ".review-gate" / "review-domains.json").read_text())
    assert [d["id"] for d in written["domains"]] == ["xyz"]  # the new domain, not a copy of every built-in one
    domains = {d["id"] for d in show(cli)["review-domains.json"]["domains"]}
    assert "xyz" in domains and "python" in domains


def test_agents_list_says_which_layer_switched_an_agent(cli, repo: GitRepo) -> None:
    overlay(repo.root / ".review-gate", agents={"disable": ["performance-reviewer"],
                                                "agents": [{"id": "test-reviewer", "enabled": False}]})
    listed = cli("agents", "list", "--format", "json")
    assert listed.code == 0, listed.err
    states = {a["id"]: a["state"] for a in listed.json()["agents"]}
    where = str(repo.root / ".review-gate" / "review-agents.json")
    assert states["performance-reviewer"] == f"disabled by {where}"
    assert states["test-reviewer"] == f"disabled by {where}"
    assert states["secrets-scanner"] == "enabled"


def test_explain_says_which_layer_set_a_policy(cli, repo: GitRepo) -> None:
    overlay(repo.root / ".review-gate", composition={"policies": [{"id": "code-security", "priority": 99}]})
    result = cli("explain", "app/views.py")
    assert result.code == 0, result.err
    line = next(line for line in result.out.splitlines() if "policy code-security" in line)
    assert "priority 99" in line and "priority by" in line and "review-composition.json" in line
