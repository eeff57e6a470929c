"""The options several subcommands share (what to review, formats and outputs, how a review runs,
``link``) and the argparse actions that pair a repeated flag with the one before it.

Nothing heavy is imported here: ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from review_gate.outputs import FORMATS

DECISIONS = ("pass_with_warnings", "needs_fixes", "fail", "never")
FILTER_MODES = ("added", "diff_context", "file", "nofilter")
HOOK_HOSTS = ("claude-code", "codex")  # review_gate.surfaces.hooks.HOSTS, named here so that --help imports nothing


def seconds(text: str) -> float:
    """A number of seconds as typed: `1e400` is refused as written, not checked later as `inf`."""
    value = float(text)  # ValueError: argparse says "invalid seconds value: ..."
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds")
    return value


class FormatAction(argparse.Action):
    """``--format F [--output FILE]``, repeatable: each --output belongs to the --format before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        outputs: list[list[str | None]] = getattr(namespace, "outputs", None) or []
        if option_string in ("--format", "-f"):
            outputs.append([str(values), None])
        else:
            if not outputs:
                outputs.append(["text", None])
            if outputs[-1][1] is not None:
                parser.error(f"--output {values}: the format before it already has an output; "
                             "give each --format its own --output")
            outputs[-1][1] = str(values)
        namespace.outputs = outputs


class AddAgentAction(argparse.Action):
    """``--add-agent ID[:GLOB] --gap-reason TEXT``, repeatable: each --gap-reason belongs to the
    --add-agent before it; a pair left without its reason is refused by the run command."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        added: list[list[str | None]] = getattr(namespace, "add_agents", None) or []
        if option_string == "--add-agent":
            added.append([str(values), None])
        elif not added or added[-1][1] is not None:
            parser.error(f"--gap-reason {values}: give it right after the --add-agent ID it explains")
        else:
            added[-1][1] = str(values)
        namespace.add_agents = added


def input_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    group = parser.add_argument_group("what to review")
    group.add_argument("--base", metavar="REF",
                       help="compare against the merge-base with REF (default: the default branch)")
    group.add_argument("--head", metavar="REF", help="review the commits up to REF instead of the working tree")
    group.add_argument("--staged", action="store_true", help="review the staged changes against HEAD")
    group.add_argument("--diff", metavar="FILE", help="review a unified diff file (- for standard input)")
    group.add_argument("--pre-push", action="store_true",
                       help="review the range being pushed (PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF, set by pre-commit)")
    parser.add_argument("--config", metavar="DIR",
                        help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")
    if not formats:
        return
    parser.add_argument("--format", "-f", dest="outputs", action=FormatAction, choices=formats,
                        help=f"output format, repeatable: {', '.join(formats)}")
    parser.add_argument("--output", "-o", dest="outputs", action=FormatAction, metavar="FILE",
                        help="write the format before it to FILE instead of standard output")


def verbose_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="text format: the long layout (findings under severity headings, each with its agent "
                             "and fix, the agents' table, every waived finding and gap)")


def shard_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shard", metavar="K/N",
                        help="review the K-th of N balanced shares of the files (a CI matrix job); "
                             "`review-gate merge` combines the N JSON reports")


def review_flags(parser: argparse.ArgumentParser, *, outputs: bool = True) -> None:
    """The flags of how a review runs, shared by sweep and batch submit."""
    if outputs:
        parser.add_argument("--config", metavar="DIR",
                            help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")
        parser.add_argument("--format", "-f", dest="outputs", action=FormatAction, choices=tuple(FORMATS),
                            help=f"output format, repeatable: {', '.join(FORMATS)}")
        parser.add_argument("--output", "-o", dest="outputs", action=FormatAction, metavar="FILE",
                            help="write the format before it to FILE instead of standard output")
    parser.add_argument("--fail-on", choices=DECISIONS,
                        help="least severe decision that exits 1 (default: needs_fixes)")
    parser.add_argument("--filter-mode", choices=FILTER_MODES, help="which findings count (as for run)")
    parser.add_argument("--concurrency", type=int, metavar="N", help="agents running at once")
    parser.add_argument("--timeout", type=seconds, metavar="S", help="deadline of every agent, retries included")
    parser.add_argument("--packing", choices=("per_agent", "agent_packed"),
                        help="llm agents of one endpoint: each in its own requests, or packed (as for run)")
    parser.add_argument("--constitution", metavar="FILE", help="Markdown file whose Standards section LLM agents get")
    parser.add_argument("--no-cache", action="store_true", help="review every file again (the run is still recorded)")
    parser.add_argument("--bundle", metavar="DIR", help="write a replay bundle to DIR")
    parser.add_argument("--baseline", metavar="FILE", help="baseline to apply (as for run)")
    parser.add_argument("--no-baseline", action="store_true", help="apply no baseline: every finding counts")
    parser.add_argument("--max-file-bytes", type=int, metavar="N",
                        help="a swept file larger than this is not read, and a gap says so (default 2000000)")
    if outputs:
        verbose_option(parser)


def link_command(parent: argparse.ArgumentParser, dest: str, name: str, what: str, id_help: str,
                  config_help: str) -> None:
    """``PARENT link ID URL [--replace]``: the issue opened for ``what``, so that it is opened once."""
    link = parent.add_subparsers(dest=dest, metavar="ACTION").add_parser(
        "link", help=f"record the issue opened for {what}: it is never opened again")
    link.add_argument(name, metavar="ID", help=id_help)
    link.add_argument("url", metavar="URL", help="the issue's URL")
    link.add_argument("--replace", action="store_true", help=f"replace the issue {what} is linked to already")
    # SUPPRESS: the subcommand's default must not wipe a --config given before `link`
    link.add_argument("--config", metavar="DIR", default=argparse.SUPPRESS, help=config_help)
