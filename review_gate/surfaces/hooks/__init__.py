"""review-gate as a coding agent's hook, answering in each host's own contract.

Coding-agent hosts (Claude Code, Codex CLI) block an agent only on their own protocol: a JSON
decision on stdout with exit 0 (or exit 2 with the reason on stderr). Any other exit code, such
as the 1 that ``review-gate run`` gives on ``needs_fixes``, is logged as a non-blocking error
and the agent carries on. So the hook always answers in that protocol and exits 0; only a payload
it cannot read (or a bad flag) is a usage error, exit 2, which a host takes for a block:

- ``base``: the payload a host sends, which events and which shell commands need a review;
- ``shell``: what a shell command line would commit, push or open, read and never run
  (``syntax`` walks the tree of tree-sitter's bash grammar (``bash_grammar``) into the items of
  ``script``, decoded by ``quoting``; ``programs``, ``git_commands``, ``persons_steps`` and
  ``loose`` hold the judgement's tables and rules; ``repositories`` what git says about where a
  command runs; ``paths`` which paths a word may name);
- ``gate``: the review under the hook's time budget, and the decision (allow, block, deny)
  with the count of blocked stops that keeps an agent from being trapped;
- ``claude_code``, ``codex``: one module per host: how an answer is written, where the
  project's hook settings live and what ``review-gate init --hooks HOST`` puts there;
- ``settings``: merging hook entries into a host's JSON settings file;
- ``fast_path``: the silent allow of a tool call that surely writes nothing the hook guards
  (``ls -la``, a ``Read``, an edit of a source file), from the payload alone, before the gate,
  the models or the shell reader load.

A host is one module and one line in ``HOSTS``.
"""

from __future__ import annotations

from review_gate.surfaces.hooks import claude_code, codex
from review_gate.surfaces.hooks.base import Host

HOSTS: dict[str, Host] = {
    "claude-code": claude_code,
    "codex": codex,
}

__all__ = ["HOSTS", "Host"]
