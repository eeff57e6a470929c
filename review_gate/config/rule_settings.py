"""Checks of what a rule does where its match lives (path_classes, placeholders, contexts), and of
the rules file's ``path_classes`` globs: each problem names its JSON pointer and the fix."""

from __future__ import annotations

from collections.abc import Callable

from review_gate.config.messages import show
from review_gate.models import SEVERITY_RANK, Rule, RulesFile
from review_gate.models.rule_context import PATH_CLASSES
from review_gate.text.globs import GlobError, check_glob
from review_gate.text.regex import PatternError, compile_pattern

Add = Callable[[str, str, str], None]  # (pointer, message, fix)


def check_path_classes(rules: RulesFile, add: Add) -> None:
    """Every glob of ``path_classes`` compiles."""
    from review_gate.config.validate import glob_problem

    lists: dict[str, list[str]] = {name: rules.path_classes.globs(name) for name in PATH_CLASSES}
    lists["minified_by_line"] = rules.path_classes.minified_by_line
    for name, globs in lists.items():
        for index, glob in enumerate(globs):
            try:
                check_glob(glob)
            except GlobError as exc:
                add(f"/path_classes/{name}/{index}", *glob_problem(glob, exc))


def check_rule(rule: Rule, at: str, add: Add) -> None:
    """A rule's path classes and contexts only lower its severity; their patterns compile."""
    lower = f"use \"skip\", \"keep\" or a severity below the rule's own ({rule.severity})"
    for name, action in (rule.path_classes or {}).items():
        if action not in ("skip", "keep") and SEVERITY_RANK[action] < SEVERITY_RANK[rule.severity]:
            add(f"{at}/path_classes/{name}", f"{show(action)} is more severe than the rule itself ({rule.severity}): "
                                             "a path class only skips or lowers a finding", lower)
    checks = rule.placeholders
    if checks is not None:
        if rule.pattern is None:
            add(f"{at}/placeholders", "placeholders are checked in a pattern's match, and the rule has no pattern",
                "add a 'pattern', or remove 'placeholders'")
        _pattern(checks.value, f"{at}/placeholders/value", add)
        _pattern(checks.host, f"{at}/placeholders/host", add, group=True)
    for index, context in enumerate(rule.contexts):
        where = f"{at}/contexts/{index}"
        _pattern(context.pattern, f"{where}/pattern", add, group=context.when in ("same_owner", "created"))
        _pattern(context.only, f"{where}/only", add)
        if context.action not in ("skip", "keep") and SEVERITY_RANK[context.action] < SEVERITY_RANK[rule.severity]:
            add(f"{where}/action", f"{show(context.action)} is more severe than the rule itself ({rule.severity}): "
                                   "a context only skips or lowers a finding", lower)


def _pattern(pattern: str | None, pointer: str, add: Add, group: bool = False) -> None:
    from review_gate.config.validate import pattern_problem

    if pattern is None:
        return
    try:
        regex = compile_pattern(pattern)
    except PatternError as exc:
        add(pointer, *pattern_problem(exc))
        return
    if group and regex.groups < 1:
        add(pointer, f"pattern {show(pattern)} has no group: its first group must capture the name it compares",
            "put the name in parentheses, e.g. uses:[ \\t]*([\\w.-]+)/")
