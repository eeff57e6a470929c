"""``review-gate config validate``: every problem names its file, JSON pointer, and the fix."""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff

BUILTIN_CONFIG = Path(__file__).parents[2] / "config"
RULES, DOMAINS, AGENTS, COMPOSITION, GATE = (
    "review-rules.json", "review-domains.json", "review-agents.json",
    "review-composition.json", "review-gate.json",
)
PROBLEM = re.compile(r"^(?P<file>\S.*?\.json): (?P<pointer>/\S*): (?P<message>.+)$")


@dataclass
class Problem:
    file: str
    pointer: str
    message: str
    fix: str


def problems(err: str) -> list[Problem]:
    """Parse the two-line problems of ``config validate``; each must be followed by its fix."""
    lines = err.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = PROBLEM.match(line)
        if match:
            fix = lines[index + 1] if index + 1 < len(lines) else ""
            assert fix.startswith("  fix: "), f"no fix line after {line!r}"
            found.append(Problem(match["file"], match["pointer"], match["message"], fix[len("  fix: "):]))
    return found


class ConfigDir:
    """A copy of the built-in config in a temporary directory, to break one thing at a time."""

    def __init__(self, path: Path) -> None:
        shutil.copytree(BUILTIN_CONFIG, path)
        self.path = path

    def __str__(self) -> str:
        return str(self.path)

    def load(self, name: str) -> Any:
        return json.loads((self.path / name).read_text(encoding="utf-8"))

    def save(self, name: str, data: Any) -> None:
        (self.path / name).write_text(json.dumps(data, indent=2), encoding="utf-8")

    def index(self, name: str, key: str, item_id: str) -> int:
        """Where the entry ``item_id`` is in the file's list, so pointers survive config edits."""
        return [item["id"] for item in self.load(name)[key]].index(item_id)

    def count(self, name: str, key: str) -> int:
        return len(self.load(name)[key])

    def edit(self, name: str, change: Callable[[Any], object]) -> None:
        """Change the parsed file in place (``change``'s return value is ignored) and save it."""
        data = self.load(name)
        change(data)
        self.save(name, data)


@pytest.fixture
def cfg(tmp_path: Path) -> ConfigDir:
    return ConfigDir(tmp_path / "config")


def invalid(cli: Any, cfg: ConfigDir, count: int | None = 1) -> list[Problem]:
    """Run validate, check the failure is a clean exit 2, return the problems it listed."""
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2, result.out + result.err
    assert "Traceback" not in result.err
    assert "config OK" not in result.out
    found = problems(result.err)
    assert found, result.err
    if count is not None:
        assert len(found) == count, result.err
    plural = "problem" if len(found) == 1 else "problems"
    assert result.err.rstrip().endswith(f"config invalid: {len(found)} {plural}")
    return found


def only(cli: Any, cfg: ConfigDir, file: str, pointer: str) -> Problem:
    """The single problem validate reports, after checking its file and pointer."""
    [problem] = invalid(cli, cfg)
    assert problem.file == str(cfg.path / file)
    assert problem.pointer == pointer
    return problem


# --- reading -------------------------------------------------------------------------------------


def test_invalid_json_names_line_and_column(cli, cfg: ConfigDir) -> None:
    (cfg.path / RULES).write_text('{"version": 1,\n "rules": [,]}\n', encoding="utf-8")
    problem = only(cli, cfg, RULES, "/")
    assert "invalid JSON at line 2 column 12" in problem.message
    assert "JSON syntax" in problem.fix


def test_trailing_comma_is_invalid_json(cli, cfg: ConfigDir) -> None:
    (cfg.path / GATE).write_text('{\n  "version": 1,\n  "concurrency": 4,\n}\n', encoding="utf-8")
    problem = only(cli, cfg, GATE, "/")
    assert re.search(r"invalid JSON at line \d+ column \d+", problem.message)
    assert "trailing comma" in problem.fix


def test_not_utf8_names_the_byte_and_its_place(cli, cfg: ConfigDir) -> None:
    text = (cfg.path / DOMAINS).read_text(encoding="utf-8").replace("Python source code", "Code Python é")
    (cfg.path / DOMAINS).write_bytes(text.encode("latin-1"))
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "é" in t)
    column = text.splitlines()[line - 1].index("é") + 1
    problem = only(cli, cfg, DOMAINS, "/")
    assert problem.message == f"not UTF-8 text: byte 0xe9 at line {line} column {column}"
    assert "UTF-8" in problem.fix


def test_a_byte_order_mark_is_tolerated(cli, cfg: ConfigDir) -> None:
    path = cfg.path / GATE
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 0, result.err


def test_nan_is_not_json(cli, cfg: ConfigDir) -> None:
    (cfg.path / GATE).write_text('{"version": 1, "timeout_s": NaN}', encoding="utf-8")
    problem = only(cli, cfg, GATE, "/")
    assert "NaN" in problem.message


def test_a_directory_in_place_of_a_file_is_reported(cli, cfg: ConfigDir) -> None:
    (cfg.path / GATE).unlink()
    (cfg.path / GATE).mkdir()
    problem = only(cli, cfg, GATE, "/")
    assert "cannot read" in problem.message


# --- schema violations ---------------------------------------------------------------------------


def test_missing_required_field(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].pop("severity"))
    problem = only(cli, cfg, RULES, f"/rules/{i}")
    assert problem.message == "missing required field 'severity'"
    assert "'critical', 'major', 'warning', 'info'" in problem.fix


def test_missing_file_level_list(cli, cfg: ConfigDir) -> None:
    cfg.edit(DOMAINS, lambda d: d.pop("domains"))
    problem = only(cli, cfg, DOMAINS, "/")
    assert problem.message == "missing required field 'domains'"
    assert "add 'domains'" in problem.fix


def test_wrong_type(cli, cfg: ConfigDir) -> None:
    i = cfg.index(DOMAINS, "domains", "go")
    cfg.edit(DOMAINS, lambda d: d["domains"][i].update(risk_weight="high"))
    problem = only(cli, cfg, DOMAINS, f"/domains/{i}/risk_weight")
    assert problem.message == "expected an integer, got the string 'high'"
    assert problem.fix == "use an integer"


def test_quoted_number_says_to_drop_the_quotes(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "secrets-scanner")
    cfg.edit(AGENTS, lambda d: d["agents"][i].update(retries="2"))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}/retries")
    assert problem.fix == "use an integer (without quotes)"


def test_optional_number_of_the_wrong_type(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "secrets-scanner")
    cfg.edit(AGENTS, lambda d: d["agents"][i].update(timeout_s="soon"))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}/timeout_s")
    assert problem.message == "expected a number or null, got the string 'soon'"


def test_whole_file_of_the_wrong_type(cli, cfg: ConfigDir) -> None:
    cfg.save(RULES, [])
    problem = only(cli, cfg, RULES, "/")
    assert problem.message == "expected an object, got a list"
    assert '{"version": 1, "rules": [...]}' in problem.fix


def test_unknown_field_lists_the_allowed_fields(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "security-patterns")
    cfg.edit(AGENTS, lambda d: d["agents"][i].update(timeout=30))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}/timeout")
    assert problem.message == "unknown field 'timeout'"
    assert "did you mean 'timeout_s'?" in problem.fix
    assert ("allowed fields: capabilities, description, enabled, id, kind, name, on_failure, required, retries, "
            "timeout_s" in problem.fix)


def test_each_unknown_field_is_its_own_problem(cli, cfg: ConfigDir) -> None:
    i = cfg.index(COMPOSITION, "policies", "high-risk-security")
    cfg.edit(COMPOSITION, lambda d: d["policies"][i].update(colour="red", size=2))
    found = invalid(cli, cfg, count=2)
    assert [p.pointer for p in found] == [f"/policies/{i}/colour", f"/policies/{i}/size"]
    assert all("allowed fields: description, dispatch, id, priority, trigger" in p.fix for p in found)


def test_unknown_top_level_field(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(concurency=4))
    problem = only(cli, cfg, GATE, "/concurency")
    assert "did you mean 'concurrency'?" in problem.fix
    assert "$schema" in problem.fix


def test_an_llm_agent_needs_provider_model_and_instructions(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "security-patterns")
    cfg.edit(AGENTS, lambda d: d["agents"][i].update(kind="llm"))
    found = invalid(cli, cfg, count=3)
    assert {p.message for p in found} == {"missing required field 'provider'", "missing required field 'model'",
                                          "missing required field 'instructions'"}


def test_unknown_agent_kind(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "security-patterns")
    cfg.edit(AGENTS, lambda d: d["agents"][i].update(kind="patern"))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}/kind")
    assert problem.message.startswith("unknown agent kind 'patern'")
    assert "did you mean 'pattern'?" in problem.fix


def test_missing_agent_kind(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "hygiene-patterns")
    cfg.edit(AGENTS, lambda d: d["agents"][i].pop("kind"))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}")
    assert problem.message == "missing required field 'kind'"
    assert "'command', 'llm', 'pattern'" in problem.fix


def test_errors_inside_an_agent_of_a_known_kind(cli, cfg: ConfigDir) -> None:
    i = cfg.count(AGENTS, "agents")
    cfg.edit(AGENTS, lambda d: d["agents"].append(
        {"id": "lint", "name": "Lint", "description": "Runs the linter.", "kind": "command", "command": []}))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}/command")
    assert problem.message == "command must list at least one entry"


def test_severity_not_in_the_enum(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(severity="high"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/severity")
    assert problem.message == "'high' is not a valid severity"
    assert problem.fix == "use one of: 'critical', 'major', 'warning', 'info'"


def test_misspelt_enum_value_gets_a_suggestion(cli, cfg: ConfigDir) -> None:
    i = cfg.index(COMPOSITION, "policies", "code-security")
    cfg.edit(COMPOSITION, lambda d: d["policies"][i]["trigger"].update(type="domian"))
    problem = only(cli, cfg, COMPOSITION, f"/policies/{i}/trigger/type")
    assert problem.fix.startswith("did you mean 'domain'?")


def test_priority_out_of_range(cli, cfg: ConfigDir) -> None:
    i = cfg.index(COMPOSITION, "policies", "high-risk-security")
    cfg.edit(COMPOSITION, lambda d: d["policies"][i].update(priority=101))
    problem = only(cli, cfg, COMPOSITION, f"/policies/{i}/priority")
    assert problem.message == "101 is out of range: priority must be from 0 to 100"
    assert problem.fix == "use a value from 0 to 100"


def test_exclusive_minimum(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(timeout_s=0))
    problem = only(cli, cfg, GATE, "/timeout_s")
    assert "more than 0 and at most 3600" in problem.message


def test_version_2(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(version=2))
    problem = only(cli, cfg, GATE, "/version")
    assert "version 2 is not supported" in problem.message
    assert 'set "version": 1' in problem.fix


def test_version_as_a_string_is_one_problem(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(version="1"))
    problem = only(cli, cfg, GATE, "/version")
    assert problem.message == "expected an integer, got the string '1'"


def test_invalid_id(cli, cfg: ConfigDir) -> None:
    i = cfg.index(AGENTS, "agents", "secrets-scanner")
    cfg.edit(AGENTS, lambda d: d["agents"][i].update(id="secrets scanner"))
    problem = only(cli, cfg, AGENTS, f"/agents/{i}/id")
    assert problem.message == "'secrets scanner' is not a valid id"
    assert "letters, digits" in problem.fix


def test_empty_description_fails_the_schema(cli, cfg: ConfigDir) -> None:
    i = cfg.index(DOMAINS, "domains", "shell")
    cfg.edit(DOMAINS, lambda d: d["domains"][i].update(description=""))
    problem = only(cli, cfg, DOMAINS, f"/domains/{i}/description")
    assert problem.message == "description must not be empty"


# --- cross-file checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(("file", "key"), [
    (RULES, "rules"), (DOMAINS, "domains"), (AGENTS, "agents"), (COMPOSITION, "policies"),
])
def test_duplicate_id(cli, cfg: ConfigDir, file: str, key: str) -> None:
    index = cfg.count(file, key)
    first_id = cfg.load(file)[key][0]["id"]
    cfg.edit(file, lambda d: d[key].append(dict(d[key][0])))
    problem = only(cli, cfg, file, f"/{key}/{index}/id")
    assert problem.message == f"duplicate id '{first_id}': /{key}/0 already has it"
    assert "rename one of them" in problem.fix


def test_rule_with_an_unknown_agent(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(agent="hygeine-patterns"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/agent")
    assert problem.message == "unknown agent 'hygeine-patterns'"
    assert problem.fix.startswith("did you mean 'hygiene-patterns'? add it to review-agents.json")
    assert "security-patterns" in problem.fix


def test_policy_dispatching_an_unknown_agent(cli, cfg: ConfigDir) -> None:
    i = cfg.index(COMPOSITION, "policies", "code-security")
    j = len(cfg.load(COMPOSITION)["policies"][i]["dispatch"])
    cfg.edit(COMPOSITION, lambda d: d["policies"][i]["dispatch"].append("ghost"))
    problem = only(cli, cfg, COMPOSITION, f"/policies/{i}/dispatch/{j}")
    assert problem.message == "unknown agent 'ghost'"
    assert "add it to review-agents.json or use one of: " in problem.fix
    assert "secrets-scanner" in problem.fix


def test_policy_naming_an_unknown_domain(cli, cfg: ConfigDir) -> None:
    i = cfg.index(COMPOSITION, "policies", "code-security")
    j = len(cfg.load(COMPOSITION)["policies"][i]["trigger"]["domains"])
    cfg.edit(COMPOSITION, lambda d: d["policies"][i]["trigger"]["domains"].append("cobol"))
    problem = only(cli, cfg, COMPOSITION, f"/policies/{i}/trigger/domains/{j}")
    assert problem.message == "unknown domain 'cobol'"
    assert "add it to review-domains.json or use one of: " in problem.fix
    assert "python" in problem.fix


@pytest.mark.parametrize(("file", "key", "item", "field", "globs", "bad", "message"), [
    (DOMAINS, "domains", "python", "paths", ["*.py", "\\"], 1,
     "invalid glob '\\\\': a trailing backslash escapes nothing"),
    (DOMAINS, "domains", "python", "paths", ["*.py", ""], 1, "empty glob '' matches nothing"),
    (COMPOSITION, "policies", "code-security", "paths", ["src/**", "  "], 1, "empty glob '  ' matches nothing"),
    (COMPOSITION, "policies", "code-security", "paths", ["lib\\"], 0,
     "invalid glob 'lib\\\\': a trailing backslash escapes nothing"),
    (RULES, "rules", "sec-tls-verify-01", "paths", ["src/\\"], 0,
     "invalid glob 'src/\\\\': a trailing backslash escapes nothing"),
    (RULES, "rules", "sec-tls-verify-01", "exclude_paths", [""], 0, "empty glob '' matches nothing"),
    (RULES, "rules", "sec-tls-verify-01", "paths", ["# not a glob"], 0,
     "glob '# not a glob' is a comment in gitignore syntax and matches nothing"),
], ids=["domain-backslash", "domain-empty", "policy-blank", "policy-backslash", "rule-backslash",
        "rule-exclude-empty", "rule-comment"])
def test_invalid_glob(cli, cfg: ConfigDir, file: str, key: str, item: str, field: str,
                      globs: list[str], bad: int, message: str) -> None:
    i = cfg.index(file, key, item)
    if file == COMPOSITION:
        cfg.edit(file, lambda d: d[key][i]["trigger"].update({field: globs}))
        pointer = f"/{key}/{i}/trigger/{field}/{bad}"
    else:
        cfg.edit(file, lambda d: d[key][i].update({field: globs}))
        pointer = f"/{key}/{i}/{field}/{bad}"
    problem = only(cli, cfg, file, pointer)
    assert problem.message == message
    assert problem.fix


@pytest.mark.parametrize(("pattern", "reason", "fix"), [
    ("(?<=a)b", "invalid perl operator: (?<", "no look-ahead or look-behind"),
    ("foo(?!bar)", "invalid perl operator: (?!", "no look-ahead or look-behind"),
    ("(", "missing ): (", "balance the parentheses"),
    ("(a)\\1", "invalid escape sequence: \\1", "no backreferences"),
    ("a{2,1}", "invalid repetition size", "fix the regular expression"),
])
def test_pattern_that_is_not_re2(cli, cfg: ConfigDir, pattern: str, reason: str, fix: str) -> None:
    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(pattern=pattern))
    problem = only(cli, cfg, RULES, f"/rules/{i}/pattern")
    assert problem.message.startswith("not a valid RE2 pattern: ")
    assert reason in problem.message
    assert fix in problem.fix


def with_lonely_agent(cfg: ConfigDir) -> None:
    """A pattern agent no policy dispatches."""
    cfg.edit(AGENTS, lambda d: d["agents"].append(
        {"id": "lonely", "name": "Lonely", "kind": "pattern", "description": "Dispatched by no policy."}))


def test_orphan_rule(cli, cfg: ConfigDir) -> None:
    with_lonely_agent(cfg)
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(agent="lonely"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/agent")
    assert problem.message.startswith("orphan rule: no policy dispatches agent 'lonely'")
    assert "add 'lonely' to a policy's 'dispatch' list in review-composition.json" in problem.fix
    assert '"enabled": false' in problem.fix


def test_a_disabled_rule_is_not_an_orphan(cli, cfg: ConfigDir) -> None:
    with_lonely_agent(cfg)
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(agent="lonely", enabled=False))
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 0, result.err


def test_no_always_policy(cli, cfg: ConfigDir) -> None:
    def no_always(data: Any) -> None:
        for policy in data["policies"]:
            if policy["trigger"]["type"] == "always":
                policy["trigger"] = {"type": "risk", "min_risk": 0}

    cfg.edit(COMPOSITION, no_always)
    problem = only(cli, cfg, COMPOSITION, "/policies")
    assert problem.message == "no policy has a trigger of type 'always'"
    assert '"always"' in problem.fix


@pytest.mark.parametrize(("file", "key", "item"), [
    (DOMAINS, "domains", "shell"), (AGENTS, "agents", "hygiene-patterns"),
    (COMPOSITION, "policies", "infrastructure"), (RULES, "rules", "sec-private-key-01"),
])
def test_blank_description(cli, cfg: ConfigDir, file: str, key: str, item: str) -> None:
    i = cfg.index(file, key, item)
    cfg.edit(file, lambda d: d[key][i].update(description=" \t "))
    problem = only(cli, cfg, file, f"/{key}/{i}/description")
    assert problem.message == "description is blank"
    assert problem.fix == "say in a sentence what this entry is for"


def test_pattern_agent_rule_without_a_pattern(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].pop("pattern"))
    problem = only(cli, cfg, RULES, f"/rules/{i}")
    assert problem.message.startswith("missing 'pattern': 'hygiene-patterns' is a pattern agent")
    assert "add an RE2 'pattern'" in problem.fix


def test_gap_detector_naming_a_missing_agent(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(gap_detector="llm-gaps"))
    problem = only(cli, cfg, GATE, "/gap_detector")
    assert problem.message == "gap_detector: unknown agent 'llm-gaps'"
    assert "as an agent of kind 'llm'" in problem.fix and "remove 'gap_detector'" in problem.fix


def test_gap_detector_naming_a_non_llm_agent(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(gap_detector="security-patterns"))
    problem = only(cli, cfg, GATE, "/gap_detector")
    assert "is a pattern agent; the gap detector must be an 'llm' agent" in problem.message
    assert "remove 'gap_detector'" in problem.fix


def test_trigger_without_its_list_never_fires(cli, cfg: ConfigDir) -> None:
    i = cfg.index(COMPOSITION, "policies", "dependencies")
    cfg.edit(COMPOSITION, lambda d: d["policies"][i]["trigger"].update(domains=[]))
    problem = only(cli, cfg, COMPOSITION, f"/policies/{i}/trigger/domains")
    assert "never fires" in problem.message


# --- several problems, the happy path, where the config comes from --------------------------------


def test_several_problems_in_several_files_are_all_listed(cli, cfg: ConfigDir) -> None:
    tls = cfg.index(RULES, "rules", "sec-tls-verify-01")
    todo = cfg.index(RULES, "rules", "hyg-todo-01")
    agent = cfg.index(AGENTS, "agents", "security-patterns")
    cfg.edit(RULES, lambda d: d["rules"][tls].update(severity="high"))
    cfg.edit(RULES, lambda d: d["rules"][todo].update(colour="red"))
    cfg.edit(AGENTS, lambda d: d["agents"][agent].update(kind="gpt"))
    cfg.edit(GATE, lambda d: d.update(version=2))
    found = invalid(cli, cfg, count=4)
    assert [(Path(p.file).name, p.pointer) for p in found] == [
        *sorted([(RULES, f"/rules/{tls}/severity"), (RULES, f"/rules/{todo}/colour")],
                key=lambda item: int(item[1].split("/")[2])),
        (AGENTS, f"/agents/{agent}/kind"), (GATE, "/version"),
    ]


def test_several_cross_file_problems_are_all_listed(cli, cfg: ConfigDir) -> None:
    todo = cfg.index(RULES, "rules", "hyg-todo-01")
    key = cfg.index(RULES, "rules", "sec-private-key-01")
    policy = cfg.index(COMPOSITION, "policies", "code-security")
    dispatched = len(cfg.load(COMPOSITION)["policies"][policy]["dispatch"])
    cfg.edit(RULES, lambda d: d["rules"][todo].update(pattern="(?<=a)b"))
    cfg.edit(RULES, lambda d: d["rules"][key].update(agent="nobody"))
    cfg.edit(COMPOSITION, lambda d: d["policies"][policy]["dispatch"].append("ghost"))
    cfg.edit(GATE, lambda d: d.update(gap_detector="llm-gaps"))
    found = invalid(cli, cfg, count=4)
    assert {(Path(p.file).name, p.pointer) for p in found} == {
        (RULES, f"/rules/{todo}/pattern"), (RULES, f"/rules/{key}/agent"),
        (COMPOSITION, f"/policies/{policy}/dispatch/{dispatched}"), (GATE, "/gap_detector"),
    }


def test_problems_are_in_document_order(cli, cfg: ConfigDir) -> None:
    last = cfg.count(DOMAINS, "domains") - 1
    assert last >= 10, "needs a two-digit index to tell numeric from text order"
    cfg.edit(DOMAINS, lambda d: [d["domains"][i].update(risk_weight=99) for i in (last, 2)])
    found = invalid(cli, cfg, count=2)
    assert [p.pointer for p in found] == ["/domains/2/risk_weight", f"/domains/{last}/risk_weight"]


def test_valid_config_prints_config_ok(cli, cfg: ConfigDir) -> None:
    counts = [cfg.count(RULES, "rules"), cfg.count(DOMAINS, "domains"), cfg.count(AGENTS, "agents"),
              cfg.count(COMPOSITION, "policies")]
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 0, result.err
    assert result.out.startswith(
        f"config OK: {cfg}: {counts[0]} rules, {counts[1]} domains, {counts[2]} agents, {counts[3]} policies")
    assert "built-in" not in result.out
    assert result.err == ""


def test_builtin_config_is_valid(cli) -> None:
    result = cli("config", "validate")
    assert result.code == 0, result.err
    assert result.out.startswith("config OK: built-in configuration")


def test_files_missing_from_the_directory_come_from_the_builtin_config(cli, cfg: ConfigDir) -> None:
    (cfg.path / GATE).unlink()
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 0, result.err
    assert f"from the built-in configuration (not in {cfg}): {GATE}" in result.out


def test_problems_against_a_builtin_fallback_still_point_into_the_directory(cli, cfg: ConfigDir) -> None:
    (cfg.path / AGENTS).unlink()
    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(agent="mine"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/agent")
    assert "secrets-scanner" in problem.fix


def test_environment_variable_is_honoured(cli, cfg: ConfigDir, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEW_GATE_CONFIG", str(cfg))
    ok = cli("config", "validate")
    assert ok.code == 0, ok.err
    assert ok.out.startswith(f"config OK: {cfg}:")

    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(pattern="("))
    result = cli("config", "validate")
    assert result.code == 2
    [problem] = problems(result.err)
    assert (problem.file, problem.pointer) == (str(cfg.path / RULES), f"/rules/{i}/pattern")


def test_config_flag_wins_over_the_environment(cli, cfg: ConfigDir, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEW_GATE_CONFIG", str(tmp_path / "missing"))
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 0, result.err


def test_environment_variable_pointing_nowhere(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("REVIEW_GATE_CONFIG", str(missing))
    result = cli("config", "validate")
    assert result.code == 2
    assert f"$REVIEW_GATE_CONFIG {missing}: no such directory" in result.err
    assert "  fix: " in result.err


def test_config_flag_pointing_to_a_missing_directory(cli, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-config"
    result = cli("config", "validate", "--config", str(missing))
    assert result.code == 2
    assert f"--config {missing}: no such directory" in result.err
    assert f"  fix: create it with `review-gate init --dir {missing}`" in result.err
    assert "Traceback" not in result.err


def test_config_flag_pointing_to_a_file(cli, cfg: ConfigDir) -> None:
    result = cli("config", "validate", "--config", str(cfg.path / RULES))
    assert result.code == 2
    assert f"--config {cfg.path / RULES}: not a directory" in result.err


def test_control_characters_from_the_config_are_escaped(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(severity="\x1b[31mred"))
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2
    assert "\x1b" not in result.err
    assert "\\x1b[31mred" in result.err


def test_config_show_lists_every_problem_too(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(severity="high"))
    cfg.edit(GATE, lambda d: d.update(version=2))
    result = cli("config", "show", "--config", str(cfg))
    assert result.code == 2
    assert result.out == ""
    assert [p.pointer for p in problems(result.err)] == [f"/rules/{i}/severity", "/version"]


# --- run refuses a bad config before any agent runs ----------------------------------------------


def with_marker_agent(cfg: ConfigDir, marker: Path) -> None:
    """A command agent, dispatched on every change, that leaves ``marker`` behind when it runs."""
    script = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran'); print('[]')"
    cfg.edit(AGENTS, lambda d: d["agents"].append({
        "id": "marker", "name": "Marker", "kind": "command", "retries": 0,
        "description": "Writes a marker file when it runs.",
        "command": [sys.executable, "-c", script, str(marker)],
    }))
    always = cfg.index(COMPOSITION, "policies", "baseline")
    cfg.edit(COMPOSITION, lambda d: d["policies"][always]["dispatch"].append("marker"))


def test_the_marker_agent_runs_with_a_good_config(cli, cfg: ConfigDir, tmp_path: Path) -> None:
    marker = tmp_path / "agent-ran"
    with_marker_agent(cfg, marker)
    result = cli("run", "--diff", "-", "--config", str(cfg), stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 0, result.err
    assert marker.read_text() == "ran"


def test_run_with_a_bad_config_exits_2_before_any_agent_runs(cli, cfg: ConfigDir, tmp_path: Path) -> None:
    marker = tmp_path / "agent-ran"
    with_marker_agent(cfg, marker)
    i = cfg.index(RULES, "rules", "hyg-todo-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(pattern="(?<=a)b"))
    result = cli("run", "--diff", "-", "--config", str(cfg), stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 2
    assert not marker.exists()
    assert "Traceback" not in result.err
    assert f"{cfg.path / RULES}: /rules/{i}/pattern: not a valid RE2 pattern" in result.err
    assert "  fix: " in result.err
    assert "agent " not in result.err  # no progress line: nothing was dispatched


def test_run_with_a_config_schema_error_exits_2(cli, cfg: ConfigDir, tmp_path: Path) -> None:
    marker = tmp_path / "agent-ran"
    with_marker_agent(cfg, marker)
    cfg.edit(GATE, lambda d: d.update(version=2))
    result = cli("--diff", "-", "--config", str(cfg), stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 2
    assert not marker.exists()
    assert f"{cfg.path / GATE}: /version:" in result.err


def test_run_shows_the_first_problem_and_how_to_list_the_others(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update(version=2, concurrency=0))
    result = cli("run", "--diff", "-", "--config", str(cfg), stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 2
    assert f"{cfg.path / GATE}: /concurrency: 0 is out of range" in result.err
    assert f"(and 1 more problem; list them all with `review-gate config validate --config {cfg}`)" in result.err
    assert "  fix: use a value from 1 to 256" in result.err


def test_control_characters_in_an_unknown_key_are_escaped_for_run_too(cli, cfg: ConfigDir) -> None:
    cfg.edit(GATE, lambda d: d.update({"\x1b]0;pwned\x07": 1}))
    result = cli("run", "--diff", "-", "--config", str(cfg), stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 2
    assert "\x1b" not in result.err and "\x07" not in result.err
    assert "/\\x1b]0;pwned\\x07: unknown field" in result.err


def test_loop_agents_are_checked_as_loop_start_checks_them(cli, cfg: ConfigDir) -> None:
    """An unknown coder and a pattern agent as approver fail `config validate`, not only `loop start`."""
    cfg.edit(GATE, lambda d: d.update(loop={"phases": {"generate": {"ai": "my-codr"},
                                                       "review": {"approver": {"response": "security-patterns"}}}}))
    found = {p.pointer: p for p in invalid(cli, cfg, count=2)}
    assert set(found) == {"/loop/phases/generate/ai", "/loop/phases/review/approver/response"}
    assert found["/loop/phases/generate/ai"].message == "loop generate.ai: unknown agent 'my-codr'"
    assert "or use manual" in found["/loop/phases/generate/ai"].fix
    unable = found["/loop/phases/review/approver/response"]
    assert unable.message == ("loop review.approver.response: agent 'security-patterns' cannot be the approver: "
                              "a pattern agent reviews; it cannot be a loop approver")
    assert "or use skip or manual" in unable.fix


# --- schema and cross-file problems in one pass ---------------------------------------------------


def test_schema_and_cross_file_problems_are_listed_in_one_run(cli, cfg: ConfigDir) -> None:
    """A broken entry does not hide the other entries' cross-file problems: they are checked on
    the entries that pass the schema, and point at each entry's place in the file."""
    def break_two(data: Any) -> None:
        data["rules"][0]["severity"] = "huge"
        data["rules"][1]["agent"] = "no-such-agent"

    cfg.edit(RULES, break_two)
    found = invalid(cli, cfg, count=2)
    assert [(p.pointer, "severity" in p.message) for p in found] == [("/rules/0/severity", True),
                                                                      ("/rules/1/agent", False)]
    assert "unknown agent 'no-such-agent'" in found[1].message


def test_a_run_still_stops_at_the_first_kind_of_problem(cli, cfg: ConfigDir) -> None:
    cfg.edit(RULES, lambda data: data["rules"][0].update(severity="huge"))
    result = cli("--config", str(cfg), "--diff", "-", stdin=make_diff("a.py", ["x = 1"]).encode())
    assert result.code == 2 and "/rules/0/severity" in result.err
# --- what a rule does where its match lives (path_classes, placeholders, contexts) ---------------


def test_a_path_class_may_only_lower_a_rule(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i]["path_classes"].update(test="critical"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/path_classes/test")
    assert "'critical' is more severe than the rule itself (major)" in problem.message
    assert problem.fix == 'use "skip", "keep" or a severity below the rule\'s own (major)'


def test_an_unknown_path_class_is_named(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i]["path_classes"].update(tests="skip"))
    [problem] = invalid(cli, cfg)
    assert problem.pointer.startswith(f"/rules/{i}/path_classes") and "tests" in problem.message + problem.fix


def test_a_context_pattern_must_be_re2_and_capture_what_it_compares(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "infra-gha-unpinned-01")
    cfg.edit(RULES, lambda d: d["rules"][i]["contexts"][0].update(pattern="uses:[ \t]*[\\w.-]+/"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/contexts/0/pattern")
    assert "has no group" in problem.message and "parentheses" in problem.fix
    cfg.edit(RULES, lambda d: d["rules"][i]["contexts"][0].update(pattern="(?<=uses:)(x)"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/contexts/0/pattern")
    assert problem.message.startswith("not a valid RE2 pattern") and "look-behind" in problem.fix


def test_a_context_may_only_lower_a_rule(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "infra-gha-unpinned-tag-01")
    cfg.edit(RULES, lambda d: d["rules"][i]["contexts"][0].update(action="major"))
    problem = only(cli, cfg, RULES, f"/rules/{i}/contexts/0/action")
    assert "more severe than the rule itself (warning)" in problem.message


def test_placeholders_need_a_pattern_and_a_host_group(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "fin-decimal-01")
    cfg.edit(RULES, lambda d: d["rules"][i].update(placeholders={"min_entropy": 3}))
    problem = only(cli, cfg, RULES, f"/rules/{i}/placeholders")
    assert "no pattern" in problem.message
    cfg.edit(RULES, lambda d: d["rules"][i].pop("placeholders"))
    j = cfg.index(RULES, "rules", "sec-url-credentials-01")
    cfg.edit(RULES, lambda d: d["rules"][j]["placeholders"].update(host="@[a-z.]+"))
    problem = only(cli, cfg, RULES, f"/rules/{j}/placeholders/host")
    assert "has no group" in problem.message


def test_a_path_class_glob_is_checked(cli, cfg: ConfigDir) -> None:
    cfg.edit(RULES, lambda d: d.update(path_classes={"fixture": ["**/fixtures/**", "x\\"]}))
    problem = only(cli, cfg, RULES, "/path_classes/fixture/1")
    assert "trailing backslash" in problem.message


def test_a_path_class_setting_stops_a_run_before_any_agent(cli, cfg: ConfigDir) -> None:
    i = cfg.index(RULES, "rules", "sec-tls-verify-01")
    cfg.edit(RULES, lambda d: d["rules"][i]["contexts"][0].update(when="inside"))
    result = cli("--config", str(cfg), "--diff", "-", "--offline", "--no-state",
                 stdin=make_diff("a.py", ["x"]).encode())
    assert result.code == 2 and "Traceback" not in result.err
    assert f"/rules/{i}/contexts/0/when" in result.err


def test_a_command_agent_whose_script_is_missing_is_a_config_error(cli: Any, repo: Any, tmp_path: Path) -> None:
    """A missing script was found only when a review ran it (a failed agent, the gate incomplete)."""
    assert cli("init", "--full").code == 0
    cfg = repo.root / ".review-gate"
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"] += [
        {"id": "lint", "name": "lint", "description": "the team's linter", "kind": "command",
         "command": [sys.executable, ".review-gate/lint.py"], "cwd": "repo"},
        {"id": "mine", "name": "mine", "description": "a script of the configuration", "kind": "command",
         "command": ["bash", "-e", "check.sh"], "cwd": "config"},
        {"id": "tool", "name": "tool", "description": "a program by its path", "kind": "command",
         "command": ["/nonexistent/bin/checker", "--json"]},
    ]
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    composition = json.loads((cfg / "review-composition.json").read_text())
    composition["policies"][0]["dispatch"] += ["lint", "mine", "tool"]
    (cfg / "review-composition.json").write_text(json.dumps(composition))
    result = cli("config", "validate")
    assert result.code == 2, result.out + result.err
    said = result.out + result.err
    assert "agent 'lint': its script '.review-gate/lint.py' does not exist" in said
    assert "agent 'mine': its script 'check.sh' does not exist" in said
    assert "agent 'tool': its program '/nonexistent/bin/checker' does not exist" in said
    assert "/command/1" in said and "/command/2" in said and "/command/0" in said
    (cfg / "lint.py").write_text("print('{\"findings\": []}')\n")
    (cfg / "check.sh").write_text("echo '{\"findings\": []}'\n")
    agents["agents"] = [a for a in agents["agents"] if a["id"] != "tool"]
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    composition["policies"][0]["dispatch"].remove("tool")
    (cfg / "review-composition.json").write_text(json.dumps(composition))
    assert cli("config", "validate").code == 0
