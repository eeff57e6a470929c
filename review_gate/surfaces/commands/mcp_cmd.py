"""``review-gate mcp``: serve review-gate's tools over the Model Context Protocol on stdio."""

from __future__ import annotations

import argparse
import importlib.util

from review_gate.errors import UsageError


def mcp_command(args: argparse.Namespace) -> int:
    # The SDK is an extra (it brings a web stack review-gate needs nowhere else).
    if importlib.util.find_spec("mcp") is None:
        raise UsageError("the MCP server needs the mcp package, which is not installed",
                         fix="pip install the mcp extra where review-gate is installed: pip install '.[mcp]' in a "
                             "clone of review-gate, or 'review-gate[mcp] @ git+URL@COMMIT' (pip install "
                             "'review-gate[mcp]' once it is published on PyPI)")
    from review_gate.surfaces.mcp import server
    from review_gate.surfaces.mcp.fixed_at_start import Fixed

    # Fixed before serving: a configuration that does not load is the person's error now, not
    # every call's later; what a call may still name is what the flags allow.
    fixed = Fixed.at_start(args.config, other_config=args.allow_other_config,
                            other_repo=args.allow_other_repo, weaker_fail_on=args.allow_weaker_fail_on,
                            offline=args.allow_offline)
    server.serve(allow_accept=args.allow_accept, fixed=fixed)
    return 0
