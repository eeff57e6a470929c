"""The command line's parser: every subcommand, in the order ``--help`` lists them; the commands that
configure, serve coding agents (hook, mcp) or describe the configuration are built here, those
that review in ``review_parsers.py``, those over the run state in ``state_parsers.py``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, cast

from review_gate import __version__
from review_gate.surfaces.cli.options import DECISIONS, HOOK_HOSTS, seconds
from review_gate.surfaces.cli.review_parsers import (
    add_baseline,
    add_batch,
    add_collect,
    add_explain,
    add_merge,
    add_plan,
    add_replay,
    add_rule,
    add_run,
    add_sweep,
)
from review_gate.surfaces.cli.state_parsers import add_ack, add_gaps, add_loop, add_state

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

STATE_COMMANDS = ("history", "show", "accept", "accepted", "gc", "debt")


def add_config(sub: Subparsers) -> None:
    """config validate | show, and init."""
    config = sub.add_parser("config", help="check or show the configuration")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    for name, text in (("validate", "check every file and every cross-file reference, of every layer"),
                       ("show", "print the effective configuration as JSON"),
                       ("diff", "print how the configuration differs from the built-in one, as the overlay files "
                                "that make it (turn a full copy into an overlay)")):
        p = config_sub.add_parser(name, help=text)
        p.add_argument("--config", metavar="DIR")
        if name == "show":
            p.add_argument("--origin", action="store_true",
                           help="add where each rule, domain, agent, policy and setting came from: the layers "
                                "(built-in, presets, this directory) and the file and JSON pointer of each")

    init = sub.add_parser("init", help="write a configuration that extends the built-in one into .review-gate/")
    init.add_argument("--full", action="store_true",
                      help="copy the whole built-in configuration instead, to own every rule "
                           "(upgrades do not reach it)")
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.add_argument("--dir", metavar="DIR", help="where to write (default: .review-gate/ at the repository root)")
    init.add_argument("--hooks", choices=HOOK_HOSTS, metavar="HOST",
                      help="instead, add review-gate's hooks to the project's settings of a coding agent "
                           f"({', '.join(HOOK_HOSTS)}), keeping what is there")


def add_agents(sub: Subparsers) -> None:
    agents = sub.add_parser("agents", help="the agent registry")
    agents_sub = agents.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    listing = agents_sub.add_parser("list", help="every agent, its kind, state and the policies that dispatch it")
    listing.add_argument("--config", metavar="DIR")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    check = agents_sub.add_parser(
        "check", help="send one tiny request to an llm agent's endpoint: latency, model, structured output",
        description="Send one tiny request to an llm agent's endpoint and print the latency, the model the "
                    "server reports and whether structured output works. Exit 0 when it works, 1 when the "
                    "request fails, 2 on a usage error (unknown agent, not an llm agent, key not set).")
    check.add_argument("agent", metavar="ID")
    check.add_argument("--config", metavar="DIR")
    check.add_argument("--timeout", type=seconds, default=60, metavar="SECONDS", help="give up after this long")


def add_meta(sub: Subparsers) -> None:
    meta = sub.add_parser("meta", help="the @@@REVIEW_META review format (--format meta, output: review_meta)")
    meta_sub = meta.add_subparsers(dest="meta_command", metavar="ACTION", required=True)
    meta_check = meta_sub.add_parser(
        "check", help="check a review's @@@REVIEW_META block and print its summary line",
        description="Check the @@@REVIEW_META block that opens a review and print its summary line. "
                    "Exit 0 when the block is valid, whatever its verdict; 2 when it is missing or malformed.")
    meta_check.add_argument("file", metavar="FILE", help="the review (- for standard input)")


def add_hook(sub: Subparsers) -> None:
    hook = sub.add_parser(
        "hook", help="a coding agent's hook: review, then answer in the host's own contract",
        description="Read a coding agent's hook payload (JSON on standard input) and answer in the host's "
                    "contract: a stop is blocked while the gate fails (at most --max-blocks times in a row), a "
                    "git commit, git push or gh pr create is denied. Always exit 0 with the answer as JSON on "
                    "standard output; 2 only when the payload is not JSON. `review-gate hook check [HOST]` runs the "
                    "hooks of the project's settings as the host would, with sample payloads, and says whether the "
                    "gate runs and blocks: exit 0 when it does, 1 when a hook would not run or could never block, 2 "
                    "when there are no hook settings (or none for the HOST named).")
    hook.add_argument("host", choices=(*HOOK_HOSTS, "check"),
                      help="the coding agent that runs the hook; or check: prove the hooks in the project's "
                           "settings run and block (review-gate hook check [HOST])")
    hook.add_argument("target", nargs="?", choices=HOOK_HOSTS, metavar="HOST",
                      help="with check: the host whose settings to check (default: every host with settings here)")
    hook.add_argument("--max-blocks", type=int, default=3, metavar="N",
                      help="stops blocked in a row before the agent is let stop with a hand-off (default 3)")
    hook.add_argument("--budget", type=seconds, default=50, metavar="S",
                      help="seconds the whole review may take, below the host's hook timeout (default 50); "
                           "LLM reviewers run only when their deadline fits")
    hook.add_argument("--base", metavar="REF", help="compare against the merge-base with REF (default: the default "
                                                    "branch)")
    hook.add_argument("--config", metavar="DIR",
                      help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")
    hook.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that blocks (default: needs_fixes)")
    hook.add_argument("--max-chars", type=int, default=8000, metavar="N",
                      help="size limit of the report the agent is given, in characters (default 8000)")


def add_mcp(sub: Subparsers) -> None:
    mcp = sub.add_parser("mcp", help="serve the Model Context Protocol over stdio (tools: review, plan, explain, "
                                    "accept, loop_status)",
                         description="Serve review-gate's tools over the Model Context Protocol on standard input "
                                     "and output, for an MCP client such as a coding agent. Needs the mcp extra: "
                                     "pip install '.[mcp]' in a clone of review-gate (review-gate[mcp] once it is "
                                     "published on PyPI). The configuration, the repository and "
                                     "fail_on are fixed when it starts; the accept tool refuses unless started "
                                     "with --allow-accept: the client is usually the agent whose findings they are.")
    mcp.add_argument("--config", metavar="DIR",
                     help="the config directory every call uses (default: $REVIEW_GATE_CONFIG, the repository's "
                          ".review-gate/, else the built-in configuration, as found when the server starts)")
    mcp.add_argument("--allow-accept", action="store_true",
                     help="let the client record acceptances of findings (only for a client a person drives: "
                          "an agent must not waive its own findings)")
    mcp.add_argument("--allow-other-config", action="store_true",
                     help="let a call name another config directory (it decides which programs run: only for a "
                          "client a person drives)")
    mcp.add_argument("--allow-other-repo", action="store_true",
                     help="let a call review another repository (cwd) than the one the server started in")
    mcp.add_argument("--allow-weaker-fail-on", action="store_true",
                     help="let a call ask for a weaker fail_on than the configuration's")
    mcp.add_argument("--allow-offline", action="store_true",
                     help="let a review call skip the llm reviewers that can run (offline: true)")


class _Parser(argparse.ArgumentParser):
    """argparse's, with its errors in review-gate's two lines (what is wrong, then the fix), not
    the whole usage block above them: a wrong value is found at a glance, as every other error is."""

    def error(self, message: str) -> NoReturn:
        fix = f"see `{self.prog} --help` for what it takes"
        late = [word for word in message.partition("unrecognized arguments:")[2].split() if word in COMMANDS]
        if late:  # `review-gate --config DIR plan`: the options before it went to the default command, run
            fix = f"name the command first, then its options: `review-gate {late[0]} ...`"
        self.exit(2, f"{self.prog}: error: {message}\n  fix: {fix}\n")


# Each builder and the commands it adds, in the order --help lists them. A run builds only its own
# command's parser: building all of them cost every command 13-21 ms of CPU (every parser and
# argument asks gettext for argparse's words), more than many commands' own work.
_BUILDERS: tuple[tuple[Callable[[Subparsers], None], tuple[str, ...]], ...] = (
    (add_run, ("run",)), (add_plan, ("plan",)), (add_config, ("config", "init")), (add_explain, ("explain",)),
    (add_agents, ("agents",)), (add_baseline, ("baseline",)), (add_replay, ("replay",)),
    (add_state, STATE_COMMANDS), (add_ack, ("ack",)), (add_gaps, ("gaps",)), (add_meta, ("meta",)),
    (add_loop, ("loop",)), (add_hook, ("hook",)), (add_mcp, ("mcp",)), (add_sweep, ("sweep",)),
    (add_batch, ("batch",)), (add_collect, ("collect",)), (add_merge, ("merge",)), (add_rule, ("rule",)))
COMMANDS = tuple(name for _, names in _BUILDERS for name in names)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or, given ``command`` (one of COMMANDS, the first argument),
    the top level with that command's parser alone: what parses that command's arguments."""
    parser = _Parser(
        prog="review-gate",
        description="Review a diff with the agents your policies choose, and gate on severity.",
        epilog="exit codes: 0 pass / pass_with_warnings, 1 fail / needs_fixes, 2 usage, config or "
               "input error, 3 incomplete (a required reviewer produced nothing usable), 4 the loop is "
               "waiting for a person")
    parser.add_argument("--version", action="version", version=f"review-gate {__version__}")
    # every command's parser is a _Parser too (argparse makes subparsers of the parent's class)
    sub = cast("Subparsers", parser.add_subparsers(dest="command", metavar="COMMAND"))
    for add, names in _BUILDERS:
        if command is None or command in names:
            add(sub)
    return parser
