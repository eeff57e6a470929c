"""``review-gate agents list`` and ``review-gate agents check ID``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table
from rich.text import Text

from review_gate.agents import KINDS
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import check_timeout, config_for, find_repo_root
from review_gate.text.escape import sanitize


def agents_command(args: argparse.Namespace) -> int:
    if args.agents_command == "check":
        return check_command(args)
    config = config_for(args, find_repo_root())
    rows: list[dict[str, Any]] = []
    switched = _switched(config)
    for agent in config.agents.agents:
        policies = [p.id for p in config.composition.policies if agent.id in p.dispatch]
        state = "enabled" if agent.enabled else "disabled"
        if agent.id in switched:
            state += f" by {switched[agent.id]}"
        if agent.kind not in KINDS:
            state = "unavailable kind"
        elif agent.enabled:
            reason = KINDS[agent.kind].unavailable(agent)
            if reason:
                state = f"off: {reason.removesuffix(' is not set')} not set" if reason.endswith(" is not set") \
                    else f"off: {reason}"
        rows.append({"id": agent.id, "kind": agent.kind, "state": state, "required": agent.required,
                     "timeout_s": agent.timeout_s or config.settings.timeout_s,
                     "rules": len(config.rules_for(agent.id)), "policies": policies,
                     "network": KINDS[agent.kind].needs_network if agent.kind in KINDS else None,
                     "description": agent.description, "capabilities": list(agent.capabilities)})
    if args.format == "json":
        console.out(json.dumps({"agents": rows}, indent=2))
        return 0
    from review_gate.outputs.text import print_hanging, print_trimmed

    out = console.stdout()
    if out.is_terminal and out.width < 100:
        # A narrow terminal: two lines an agent rather than a table whose columns wrap letter by letter.
        for r in rows:
            rules = f"{r['rules']} rule{'' if r['rules'] == 1 else 's'}"
            print_hanging(out, 0, Text(sanitize(r["id"]) + " ", style="bold"), Text(
                f"({r['kind']}, {'required' if r['required'] else 'optional'}, {r['timeout_s']:g}s, {rules}): "
                f"{sanitize(r['state'])}"))
            print_hanging(out, 4, Text("dispatched by ", style="dim"),
                          Text(sanitize(", ".join(r["policies"]) or "no policy"), style="dim"))
        return 0
    table = Table(box=None, pad_edge=False, show_edge=False)
    longest = max((len(sanitize(r["id"])) for r in rows), default=2)
    table.add_column("id", no_wrap=True, min_width=longest)  # ids are copied: never cut
    for column in ("kind", "state", "required", "timeout", "rules"):
        table.add_column(column, no_wrap=True)
    table.add_column("dispatched by", ratio=1)
    for r in rows:
        table.add_row(sanitize(r["id"]), r["kind"], sanitize(r["state"]), "yes" if r["required"] else "no",
                      f"{r['timeout_s']:g}s", str(r["rules"]), sanitize(", ".join(r["policies"]) or "no policy"))
    print_trimmed(out, table)
    return 0


def _switched(config: Any) -> dict[str, str]:
    """Agent id -> the layer file that last turned it on or off, for a configuration that extends
    another (``config show --origin`` has every layer's say)."""
    from pathlib import Path

    from review_gate.config.load import origins

    if config.directory is None:
        return {}
    stack, found = origins(Path(config.directory))
    if not any(layer.overlay for layer in stack):
        return {}
    out = {}
    for ident, touches in found.touches.get("review-agents.json", {}).items():
        said = [t for t in touches if t.action == "disabled" or (t.action == "changed" and "enabled" in t.fields)]
        if said:
            out[ident] = said[-1].file
    return out


def check_command(args: argparse.Namespace) -> int:
    import anyio

    from review_gate.errors import UsageError
    from review_gate.llm import client, keys
    from review_gate.models import LlmAgent

    check_timeout(args.timeout)
    config = config_for(args, find_repo_root())
    spec = config.agent(args.agent)
    if spec is None:
        known = ", ".join(a.id for a in config.agents.agents if a.kind == "llm") or "none"
        raise UsageError(f"unknown agent {args.agent!r}", fix=f"use an llm agent id from review-agents.json ({known})")
    if not isinstance(spec, LlmAgent):
        raise UsageError(f"agent {spec.id!r} is a {spec.kind} agent; check sends a request to an llm agent's API")
    reason = keys.missing_key(spec)
    if reason:
        raise UsageError(reason, fix=f"export {spec.api_key_env}=... before running review-gate")

    async def probe() -> client.CheckResult:
        async with client.new_client() as http:  # the run's client; the deadline is the check's own
            with anyio.fail_after(args.timeout):
                return await client.check(spec, http)

    try:
        result = anyio.run(probe)
    except TimeoutError:
        result = client.CheckResult(False, args.timeout, None, False, f"no answer within {args.timeout:g} s")
    # the model name and the error come from the server: escaped, like everything it says
    console.out(f"agent:      {spec.id} ({spec.provider}, {sanitize(spec.url)})")
    console.out(f"latency:    {result.latency_s * 1000:.0f} ms")
    console.out(f"model:      {sanitize(result.model or 'not reported')} (configured: {sanitize(spec.model)})")
    console.out(f"structured: {'yes' if result.structured else 'no'}")
    console.out(f"result:     {'ok' if result.ok else 'failed'}: {sanitize(result.detail)}")
    return 0 if result.ok else 1
