"""A line of code as the pairing of old and new lines compares it: without a trailing comment,
where the language's grammar says the line ends in one (``judging.old_lines``). Pure.

Issue 29 asks that lines be compared as written (a reformat inside a line is an edit), and that
comments be found with the grammar or not at all. A team that moves ``# why`` off the line
``chmod 777 "$PGDATA"  # why`` did not write a new ``chmod``: both lines are that statement. So a
line is parsed alone with its file's grammar, and a comment that ends it after code is left out.
Anything in doubt leaves the line as written (more is judged new, never less): no grammar for
the language, no comment marker, a parse with an error (a line inside a string or a bracket
that a line alone cannot show), a comment that is the whole line.

>>> bare("deploy.sh", 'chmod 777 "$PGDATA"  # let postgres write')
'chmod 777 "$PGDATA"'
>>> bare("app.py", "return eval(size) // 2 or eval(q)")
'return eval(size) // 2 or eval(q)'
>>> bare("app.py", 'x = "# not a comment"')
'x = "# not a comment"'
>>> bare("app.py", "call(a,  # the first")
'call(a,  # the first'
>>> bare("Dockerfile", 'RUN chmod 777 "$PGDATA" # replaced at run time')
'RUN chmod 777 "$PGDATA"'
"""

from __future__ import annotations

import time
from functools import lru_cache

from review_gate.judging.code_regions import COMMENTS, language
from review_gate.text import grammars

MARKERS = ("#", "//", "/*", "--")  # where a comment may start in the languages with a grammar here
PARSE_SECONDS = 0.05  # one line: a parse that takes longer is in doubt


def bare(path: str, line: str) -> str:
    """``line`` less the comment that ends it after code, as ``path``'s grammar reads the line
    alone; the line as written when anything is in doubt."""
    if not any(marker in line for marker in MARKERS):
        return line
    if _dockerfile(path):  # a RUN instruction's command is a shell's: bash's grammar reads it
        word, space, command = line.lstrip().partition(" ")
        return f"{word}{space}{_bare('bash', command)}" if word.upper() == "RUN" and command.strip() else line
    lang = language(path)
    return line if lang is None else _bare(lang, line)


def _dockerfile(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile")


@lru_cache(maxsize=8192)
def _bare(lang: str, line: str) -> str:
    grammar = grammars.parser(lang)
    if grammar is None:
        return line
    data = line.rstrip().encode("utf-8", "surrogateescape")
    tree = grammars.parse(grammar, data, time.thread_time() + PARSE_SECONDS)
    if tree is None or tree.root_node.has_error:
        return line
    node = tree.root_node
    while node.child_count:
        node = node.children[-1]
    if node.type not in COMMENTS or node.end_byte != len(data):
        return line
    code = data[:node.start_byte].decode("utf-8", "surrogateescape").rstrip()
    return code if code.strip() else line


__all__ = ["bare"]
