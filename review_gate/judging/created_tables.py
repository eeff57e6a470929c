"""The tables a change creates, so a migration that alters or drops one of them is no risk. Pure.

A change that adds ``create_table :api_keys`` in one migration and ``remove_column :api_keys, :key``
in the next drops a column of a table that holds no data yet and that nothing reads: no data to
lose, no lock to wait on. The rules' ``created`` context compares the table a flagged line names
with the ones the change's added lines create (Rails' ``create_table``, Alembic's
``op.create_table``, SQL's ``CREATE TABLE``, Django's ``CreateModel``).

>>> sorted(created_tables(["  create_table :api_keys, id: :uuid do |t|", 'CREATE TABLE IF NOT EXISTS "Audit"']))
['api_keys', 'audit']
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from review_gate.models import PRFacts

_CREATES = re.compile(
    r"""\bcreate_table[ \t]*\(?[ \t]*[:"']?([A-Za-z_][\w.]*)"""
    r"""|(?i:\bCREATE[ \t]+(?:(?:GLOBAL|LOCAL)[ \t]+)?(?:TEMP(?:ORARY)?[ \t]+|UNLOGGED[ \t]+)?TABLE[ \t]+"""
    r"""(?:IF[ \t]+NOT[ \t]+EXISTS[ \t]+)?[`"\[]?([\w.]+))"""
    r"""|\bCreateModel[ \t]*\([ \t]*(?:name[ \t]*=[ \t]*)?['"](\w+)""")
# a file whose diff creates no table is not read line by line
_HINT = re.compile(r"(?i:create[ \t_]+table)|CreateModel")


def table_name(name: str) -> str:
    """A table's name as compared: without its schema, quotes or case (``public."Users"`` is ``users``)."""
    return name.rsplit(".", 1)[-1].strip("`\"[]'").lower()


def created_tables(lines: Iterable[str]) -> frozenset[str]:
    """The tables the ``lines`` create."""
    found = set()
    for line in lines:
        for match in _CREATES.finditer(line):
            name = next((group for group in match.groups() if group), None)
            if name:
                found.add(table_name(name))
    return frozenset(found)


def change_creates(facts: PRFacts) -> frozenset[str]:
    """The tables the lines the change adds create, in any file."""
    added = (line.text for change in facts.files if _HINT.search(change.patch)
             for hunk in change.hunks for line in hunk.lines if line.added)
    return created_tables(added)
