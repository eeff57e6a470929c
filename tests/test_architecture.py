"""Which way the imports run (docs/architecture.md): an ast walk of the whole package.

Every import counts, at module level, inside functions and under ``TYPE_CHECKING`` alike: a
lazy import is still a dependency. Each rule names a layer and what it must not import (or the
only things it may); a module is in a layer when its name is the layer or starts with it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import review_gate

PACKAGE = Path(review_gate.__file__).resolve().parent
OURS = "review_gate"

# layer -> ("only", allowed layers) or ("not", forbidden layers). Every rule whose layer holds a
# module applies to it: a folder's rule and a module's own rule alike.
# The surfaces people and agents use: the CLI and its commands, the hooks, the MCP server, the API.
SURFACES = ("review_gate.surfaces", "review_gate.api")
CONSOLE = "review_gate.surfaces.console"
RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    # the ground everything stands on: models import nothing of ours, the text helpers nothing at
    # all, the error hierarchy only the models
    "review_gate.models": ("only", ("review_gate.models",)),
    "review_gate.text": ("only", ()),
    "review_gate.errors": ("only", ("review_gate.models",)),
    # a format reads a finished report and escapes what it writes; it never reaches the console
    "review_gate.outputs": ("only", ("review_gate.models", "review_gate.text.escape", "review_gate.outputs")),
    # the run state sees models only (and the error hierarchy)
    "review_gate.state": ("only", ("review_gate.models", "review_gate.state", "review_gate.errors")),
    # which files this process has an SQLite connection to, and where the user's cache is: pure
    "review_gate.state.open_databases": ("only", ()),
    "review_gate.state.cache_dir": ("only", ()),
    # the schema's migrations are SQL text alone
    "review_gate.state.migrations": ("only", ()),
    # configuration: files in, models out; it runs nothing and knows no caller
    "review_gate.config": ("not", (*SURFACES, "review_gate.outputs", "review_gate.pipeline", "review_gate.agents",
                                   "review_gate.llm", "review_gate.state", "review_gate.judging", "review_gate.scale",
                                   "review_gate.loop")),
    "review_gate.config.rulebook": ("only", ("review_gate.models", "review_gate.errors", "review_gate.text.globs",
                                             "review_gate.text.regex")),
    "review_gate.config.gap_patches": ("only", ("review_gate.models",)),
    # reading a change: git and files in, models out; it runs no stage, agent or judgement
    "review_gate.change": ("not", (*SURFACES, "review_gate.outputs", "review_gate.pipeline", "review_gate.agents",
                                   "review_gate.llm", "review_gate.state", "review_gate.judging", "review_gate.scale",
                                   "review_gate.loop", "review_gate.config")),
    # what bytes are to a reviewer, git's binary patches, a whole file's diff text: pure
    "review_gate.change.text_or_binary": ("only", ("review_gate.change.binary_formats",)),
    "review_gate.change.binary_formats": ("only", ()),
    "review_gate.change.binary_patches": ("only", ()),
    "review_gate.change.whole_file_diff": ("only", ()),
    # the gaps a change to the gate's own files makes: worded over models
    "review_gate.change.own_file_gaps": ("only", ("review_gate.models", "review_gate.change.own_files")),
    # judging findings: over models, patterns and what the change and the configuration hold
    "review_gate.judging": ("not", (*SURFACES, "review_gate.outputs", "review_gate.pipeline", "review_gate.agents",
                                    "review_gate.llm", "review_gate.state", "review_gate.scale", "review_gate.loop")),
    # the dimension mapping is pure: verdicts in, findings out, shared by command and llm agents
    "review_gate.judging.dimensions": ("only", ("review_gate.models", "review_gate.judging.dimensions")),
    # recorded findings judged by another configuration's rules (replay): pure, over models
    "review_gate.judging.rejudge": ("only", ("review_gate.models",)),
    # findings judged where their lines live: pure over models and patterns; only surroundings reads git
    "review_gate.judging.refine": ("only", ("review_gate.models", "review_gate.judging.rule_contexts",
                                            "review_gate.judging.path_classes", "review_gate.judging.placeholders",
                                            "review_gate.judging.preexisting", "review_gate.judging.created_tables",
                                            "review_gate.judging.old_lines", "review_gate.judging.occurrences",
                                            "review_gate.judging.code_regions", "review_gate.text.regex")),
    # comments and docstrings found with the grammar: over the file's text
    "review_gate.judging.code_regions": ("only", ("review_gate.models", "review_gate.text.grammars",
                                                  "review_gate.text.literals")),
    # what pays for a finding not counted: old lines paired one for one, entries one each; pure
    "review_gate.judging.old_lines": ("only", ("review_gate.models", "review_gate.judging.path_classes",
                                               "review_gate.judging.preexisting", "review_gate.judging.rule_contexts",
                                               "review_gate.judging.code_text", "review_gate.text.regex")),
    # a line as pairing compares it: its trailing comment found with the grammar, or kept
    "review_gate.judging.code_text": ("only", ("review_gate.judging.code_regions", "review_gate.text.grammars")),
    "review_gate.judging.occurrences": ("only", ("review_gate.models", "review_gate.judging.fingerprint")),
    # the one judging step that leaves findings out of the count
    "review_gate.judging.left_out": ("only", ("review_gate.models",)),
    "review_gate.judging.path_classes": ("only", ("review_gate.models", "review_gate.text.globs")),
    "review_gate.judging.rule_contexts": ("only", ("review_gate.models", "review_gate.judging.created_tables")),
    "review_gate.judging.created_tables": ("only", ("review_gate.models",)),
    "review_gate.judging.placeholders": ("only", ()),
    "review_gate.judging.preexisting": ("only", ()),
    "review_gate.judging.submodule_notes": ("only", ("review_gate.models", "review_gate.judging.fingerprint")),
    "review_gate.judging.waivers": ("only", ("review_gate.models", "review_gate.judging.fingerprint",
                                             "review_gate.judging.code_regions",
                                             "review_gate.judging.waiver_comments")),
    # the waiver comments a line holds: its text, the grammar's comments, the markers
    "review_gate.judging.waiver_comments": ("only", ("review_gate.models", "review_gate.judging.code_regions",
                                                     "review_gate.text.waiver_markers")),
    "review_gate.judging.shared_acceptances": ("only", ("review_gate.models", "review_gate.errors",
                                                        "review_gate.config", "review_gate.judging.baseline")),
    # llm/ (prompts, providers, answers) never imports agents/, a stage or a sink
    "review_gate.llm": ("not", (*SURFACES, "review_gate.agents", "review_gate.pipeline", "review_gate.outputs",
                                "review_gate.state", "review_gate.scale", "review_gate.loop")),
    # agents never import a stage
    "review_gate.agents": ("not", (*SURFACES, "review_gate.pipeline", "review_gate.outputs", "review_gate.state",
                                   "review_gate.scale", "review_gate.loop")),
    # the pattern engine: rules and added lines in, matches out; it knows no agent, stage or sink
    "review_gate.agents.pattern_matching": ("only", ("review_gate.models", "review_gate.text.regex")),
    # nothing in pipeline/ knows who calls it, nor a run beyond one review (scale/ drives the
    # runner, so nothing it drives imports scale/); the stages have their own rule (STAGES below)
    "review_gate.pipeline": ("not", (*SURFACES, "review_gate.loop", "review_gate.scale")),
    # a caller's arguments checked: over models, the output formats' names and the shards' bound
    "review_gate.pipeline.arguments": ("only", ("review_gate.models", "review_gate.errors", "review_gate.outputs",
                                                "review_gate.pipeline.shards", "review_gate.pipeline.bounds")),
    "review_gate.pipeline.bounds": ("only", ("review_gate.errors",)),
    # a plan split into shares, and one run's replay bundle: parts of one recorded run that scale/
    # reads too; over models, the configuration's files, the state's config digest and how much of
    # an agent's raw answer is kept; no stage
    "review_gate.pipeline.shards": ("only", ("review_gate.models", "review_gate.errors",
                                             "review_gate.state.freshness")),
    "review_gate.pipeline.bundles": ("only", ("review_gate.models", "review_gate.errors", "review_gate.config",
                                              "review_gate.agents.base")),
    "review_gate.pipeline.review_request": ("only", ("review_gate.models", "review_gate.errors",
                                                     "review_gate.change.git", "review_gate.pipeline.arguments",
                                                     "review_gate.pipeline.normalize")),
    # the runner and its bootstrap serve every caller and write no report
    "review_gate.pipeline.runner": ("not", ("review_gate.outputs",)),
    "review_gate.pipeline.bootstrap": ("not", ("review_gate.outputs",)),
    # provider batches run the stages as the runner does, for every caller alike
    "review_gate.scale": ("not", (*SURFACES, "review_gate.loop")),
    # a batch or host run decides through the runner's own steps (runner.decide), never a second
    # judging or aggregation of its own: its report is a live review's with the same answers
    "review_gate.scale.batch": ("not", ("review_gate.outputs", "review_gate.pipeline.aggregate",
                                        "review_gate.judging.refine")),
    "review_gate.scale.host": ("not", ("review_gate.outputs", "review_gate.pipeline.aggregate",
                                       "review_gate.judging.refine")),
    # sweeps make a change, merge joins reports: steps a review run composes
    "review_gate.scale.sweep_facts": ("not", ("review_gate.pipeline", "review_gate.state")),
    "review_gate.scale.merge_reports": ("not", ("review_gate.pipeline.runner", "review_gate.pipeline.bootstrap")),
    # the loop calls the API as the CLI and the MCP server do (DESIGN §8); it never reaches into
    # stages, and it reports through the Reporter its caller passes, never the console
    "review_gate.loop": ("not", ("review_gate.surfaces", "review_gate.pipeline", "review_gate.scale")),
    # the library facade serves the other surfaces and imports none of them
    "review_gate.api": ("not", ("review_gate.surfaces",)),
    # the console writes what the surfaces say, escaped; the agent report quotes the change's lines
    # for the surfaces that know the change, and imports none of them
    CONSOLE: ("only", ("review_gate.text.escape",)),
    "review_gate.surfaces.quoted_agent_report": ("not", ("review_gate.surfaces", "review_gate.api",
                                                         "review_gate.pipeline.runner")),
    # the MCP tools' argument types and result models: over models and the arguments' bounds
    "review_gate.surfaces.mcp.tool_shapes": ("only", ("review_gate.models", "review_gate.pipeline.arguments")),
}
# the command line's parser imports nothing heavy, so that --help and --version start fast
RULES.update({f"review_gate.surfaces.cli.{name}": ("only", ("review_gate.outputs", "review_gate.surfaces.cli.options",
                                                           "review_gate.surfaces.cli.review_parsers",
                                                           "review_gate.surfaces.cli.state_parsers"))
              for name in ("parser", "options", "review_parsers", "state_parsers")})
# the stages (and what they are told and hand each other) never import an output format, the
# state or a run beyond one review, nor what runs them
STAGES = ("normalize", "classify", "compose", "gap_detect", "dispatch", "aggregate", "options", "boundary")
STAGE_RULE = ("not", ("review_gate.outputs", "review_gate.state", "review_gate.scale", "review_gate.pipeline.runner",
                      "review_gate.pipeline.bootstrap", "review_gate.pipeline.arguments",
                      "review_gate.pipeline.review_request", "review_gate.pipeline.recorded_run"))
RULES.update({f"review_gate.pipeline.{stage}": STAGE_RULE for stage in STAGES})

# The API's entry points that live with their concern (``review_gate.api`` re-exports each): held
# to the API's rule instead of their folder's, and imported by nothing but the surfaces, the API
# and each other.
API_ENTRY_POINTS = ("review_gate.acceptances", "review_gate.scale.sweep", "review_gate.scale.merge",
                    "review_gate.scale.batch.runs", "review_gate.scale.host.runs")

# Modules that import nothing of ours (each held to that by its own rule), which every layer may
# import: whoever reads a file of the working tree must ask which files this process has an
# SQLite connection to, whatever its layer; whoever keeps a file for the next run asks where the
# user's cache is (the run state, the checked configuration).
SHARED_LEAVES = ("review_gate.state.open_databases", "review_gate.state.cache_dir")

# (importer, imported) pairs that break a rule today and are on their way out. An entry that no
# longer breaks anything fails the test too, so the list only ever shrinks.
KNOWN: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports_of(importer: str) -> set[str]:
    """The modules of ours that ``importer`` imports anywhere in its source."""
    tree = ast.parse(MODULES[importer].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(importer, node)
            # `from review_gate.surfaces import console` imports the module review_gate.surfaces.console
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names)
    return {name for name in found if name == OURS or name.startswith(OURS + ".")}


def _in(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


def _governs(layer: str, module: str) -> bool:
    """Whether the rule of ``layer`` applies to ``module``: an API entry point is held to the API's
    rule (and its own), never its folder's."""
    if module in API_ENTRY_POINTS:
        return layer in ("review_gate.api", module)
    return _in(module, layer)


def violations() -> set[tuple[str, str]]:
    found = set()
    callers = (*SURFACES, *API_ENTRY_POINTS)
    for importer in MODULES:
        found.update((importer, imported) for imported in imports_of(importer)
                     if imported in API_ENTRY_POINTS and not any(_in(importer, c) for c in callers))
        for layer, (how, layers) in RULES.items():
            if not _governs(layer, importer):
                continue
            for imported in imports_of(importer):
                if imported == OURS:  # the package itself: __version__
                    continue
                if how == "not" and imported in SHARED_LEAVES:
                    continue
                listed = any(_in(imported, other) for other in layers)
                if (how == "only" and not listed) or (how == "not" and listed):
                    found.add((importer, imported))
    return found


def test_imports_run_the_documented_way() -> None:
    broken = sorted(violations() - KNOWN)
    assert not broken, "imports against docs/architecture.md:\n" + "\n".join(f"  {a} -> {b}" for a, b in broken)


def test_known_violations_are_still_there() -> None:
    """Delete an entry of KNOWN once its import is gone."""
    assert not sorted(KNOWN - violations())


def test_the_walk_sees_every_kind_of_import() -> None:
    """Function-level, TYPE_CHECKING and relative imports are all found (the rules rely on it)."""
    assert "review_gate.surfaces.console" in imports_of("review_gate.surfaces.cli.main")  # imported inside main()
    assert "review_gate.llm.governor" in imports_of("review_gate.agents.base")  # under TYPE_CHECKING
    assert "review_gate.models.report" in imports_of("review_gate.errors")


def test_every_layer_exists() -> None:
    """A rule names a module or a folder of modules that is there (a rule over nothing holds nothing)."""
    missing = [layer for layer in RULES if not any(_in(module, layer) for module in MODULES)]
    assert not missing


# One place per fact: the models own the severity order and what a broken agent is.
SEVERITY_NAMES = {"critical", "major", "warning", "info"}
FACTS_KNOWN: set[str] = set()


def _spelled_out(tree: ast.AST) -> list[int]:
    """Lines where a tuple, list or set lists every severity, or a dict ranks them (name -> int),
    or a tuple names the broken statuses."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if names >= SEVERITY_NAMES or names == {"failed", "timed_out"}:
                lines.append(node.lineno)
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            ranks = all(isinstance(v, ast.Constant) and isinstance(v.value, int) for v in node.values)
            if keys >= SEVERITY_NAMES and ranks:
                lines.append(node.lineno)
    return lines


def test_severity_order_and_broken_statuses_live_in_the_models() -> None:
    found = {name: _spelled_out(ast.parse(path.read_text(encoding="utf-8"))) for name, path in MODULES.items()
             if not _in(name, "review_gate.models") and name not in FACTS_KNOWN}
    assert not {name: lines for name, lines in found.items() if lines}


def test_facts_known_are_still_there() -> None:
    assert all(_spelled_out(ast.parse(MODULES[name].read_text(encoding="utf-8"))) for name in FACTS_KNOWN)


def test_errors_are_whole_when_raised() -> None:
    """An error's message, fix and exit code are set where it is made (errors.py), never
    changed afterwards: the class says what the user sees."""
    changed = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr in ("exit_code", "message", "fix") \
                        and not (isinstance(target.value, ast.Name) and target.value.id == "self"):
                    changed.append(f"{name}:{node.lineno}")
    assert not changed


def test_stages_name_no_command_line_flag_in_their_errors() -> None:
    """A stage serves every caller (the CLI, a library user, the loop): the flag wording of an
    error belongs to the command that has the flag."""
    import re

    flag = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
    found = []
    for name, path in MODULES.items():
        if name != "review_gate.pipeline" and not any(_in(name, f"review_gate.pipeline.{s}") for s in STAGES):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                texts = [c.value for c in ast.walk(node.exc)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                found += [f"{name}:{node.lineno}: {t}" for t in texts if flag.search(t)]
    assert not found


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: a user's mypy reads our annotations only when the package ships py.typed."""
    assert (PACKAGE / "py.typed").is_file()
