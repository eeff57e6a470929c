"""The loop's prompts are Markdown templates in the config directory (``loop/<name>.md``, written
by ``review-gate init``; the built-in ones otherwise): config, not code.

A template names values as ``{{name}}``. Sections that may be empty (``standards``, ``plan``,
``feedback``, ``findings``, ``history``) bring their own heading, so a template needs no
conditionals. An unknown name is a config error at ``loop start``, not a surprise later.

    >>> render("# {{task_id}}\\n\\n{{feedback}}\\n\\nDo it.\\n", {"task_id": "t1", "feedback": ""})
    '# t1\\n\\nDo it.\\n'
"""

from __future__ import annotations

import re
from pathlib import Path

from review_gate.change.input_files import MIB, regular_bytes
from review_gate.config.locations import find_config_file
from review_gate.errors import ConfigError, ConfigProblem, InputError

MAX_TEMPLATE_BYTES = MIB
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
PHASE_VALUES = ("task_id", "iteration", "task", "standards", "plan", "feedback", "findings", "history", "base",
                "fail_on")
NAMES: dict[str, tuple[str, ...]] = {
    "plan": PHASE_VALUES,
    "generate": PHASE_VALUES,
    "review": PHASE_VALUES,
    "revise": PHASE_VALUES,
    # seed 002's retry prompt: the original prompt, the rejected output, the feedback
    "retry": ("task_id", "iteration", "phase", "prompt", "rejected", "feedback"),
}


def path_of(name: str, config_dir: str | None) -> Path:
    found = find_config_file(f"loop/{name}.md", config_dir)
    if found is None:  # the built-in config ships every template
        raise ConfigError([ConfigProblem(f"loop/{name}.md", "/", "template not found",
                                         "run `review-gate init --force` to write the built-in templates")])
    return found


def load(name: str, config_dir: str | None) -> str:
    path = path_of(name, config_dir)
    try:
        data = regular_bytes(path, limit=MAX_TEMPLATE_BYTES, name=str(path), fix="")
        if data is None:
            raise OSError(f"{path} is not a regular file")
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, InputError) as exc:
        raise ConfigError([ConfigProblem(str(path), "/", f"cannot read the template: {exc}",
                                         "make it a readable UTF-8 Markdown file")]) from exc


def check(config_dir: str | None) -> None:
    """Every template readable, naming only values it can have."""
    problems = []
    for name, allowed in NAMES.items():
        text = load(name, config_dir)
        for match in PLACEHOLDER.finditer(text):
            if match.group(1) not in allowed:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(ConfigProblem(
                    str(path_of(name, config_dir)), f"line {line}",
                    f"unknown placeholder {match.group(0)}",
                    f"use one of {', '.join('{{' + n + '}}' for n in allowed)}"))
    if problems:
        raise ConfigError(problems)


def render(text: str, values: dict[str, str]) -> str:
    """``text`` with every ``{{name}}`` replaced; runs of blank lines an empty section leaves are closed up."""
    filled = PLACEHOLDER.sub(lambda m: values.get(m.group(1), ""), text)
    filled = re.sub(r"\n{3,}", "\n\n", filled)
    return filled.strip("\n") + "\n"
