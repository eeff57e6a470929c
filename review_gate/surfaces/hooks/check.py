"""``review-gate hook check [HOST]``: prove that the hooks run, as the host would run them.

A hook the host cannot start (``review-gate`` not on the PATH the host has, a moved virtual
environment) exits 127, which Claude Code and Codex take as a non-blocking error: the gate never
runs and the agent is never stopped, and nothing says so. So the check reads the host's project
settings, finds review-gate's hook entries, checks that their matchers send the events they must
(Stop; PreToolUse for the shell and the edit tools), and then runs each entry's command through
the shell, as the host does, with payloads shaped as the host sends them:

- a Stop in the repository: whether the gate runs and would block the stop now;
- a ``git commit`` (Bash): whether it would be denied now;
- a write into ``.review-gate/`` (an edit tool, Claude Code only): it must be denied, whatever
  the code: a hook that lets it through does not protect the configuration.

Every problem names its fix. Nothing is changed: the payloads are answered by the hook, never
carried out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from review_gate.surfaces.hooks.base import EDIT_TOOLS, PROBE_EVENT, Host

MISSING = 127  # what a shell exits with when it cannot find the program


@dataclass(frozen=True)
class Probe:
    """One simulated event: what was sent, what came back."""

    what: str
    ran: bool
    exit_code: int | None
    answer: str  # "block", "deny", "allow", or what went wrong
    seconds: float
    problem: str | None = None


@dataclass
class Checked:
    host: str
    settings: Path
    commands: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (what is wrong, the fix)
    probes: list[Probe] = field(default_factory=list)
    reviewers: list[str] = field(default_factory=list)  # which reviewers the hook runs, as it says

    @property
    def ok(self) -> bool:
        return not self.problems


def marker(name: str) -> re.Pattern[str]:
    """What finds review-gate's hook for host ``name`` in a settings command, by any path."""
    return re.compile(r"review[-_]gate['\"]?\s+hook\s+" + re.escape(name) + r"\b")


def check(host: Host, root: Path) -> Checked:
    path = root / host.SETTINGS
    found = Checked(host.NAME, path)
    fix_init = f"run `review-gate init --hooks {host.NAME}` with the review-gate you mean to run (it writes its path)"
    settings = _settings(root, host, found)
    if settings is None:
        found.problems.append((f"{path} has no hooks of review-gate: the gate never runs for {host.NAME}", fix_init))
        return found
    for where in _disabling(root, host):
        found.problems.append((f"{where} sets \"disableAllHooks\": true: the host runs no hook, review-gate's "
                               "included", f"remove it from {where}"))
    environment = {**os.environ, **_host_env(root, host)}
    wanted = marker(host.NAME)
    entries = {event: [(group.get("matcher"), hook) for group in groups if isinstance(group, dict)
                       for hook in group.get("hooks") or [] if isinstance(hook, dict)
                       and wanted.search(str(hook.get("command")))]
               for event, groups in settings.items() if isinstance(groups, list)}
    stop = entries.get("Stop", [])
    tool = entries.get("PreToolUse", [])
    if not stop:
        found.problems.append(("no Stop hook runs review-gate: a failing change does not keep the agent working",
                               fix_init))
    if not tool:
        found.problems.append(("no PreToolUse hook runs review-gate: commits, pushes and writes into the "
                               "configuration are not gated", fix_init))
    tools = ("Bash", *EDIT_TOOLS) if host.NAME == "claude-code" else ("Bash",)
    for matcher, _ in tool:
        unmatched = [t for t in tools if not _matches(matcher, t)]
        if unmatched:
            found.problems.append((f"the PreToolUse matcher {matcher!r} does not send {', '.join(unmatched)} to "
                                   "review-gate", f"set it to {'|'.join(tools)!r}, or {fix_init}"))
    commands = list(dict.fromkeys(str(hook.get("command")) for _, hook in [*stop, *tool]))
    found.commands = commands
    for command in commands:
        for why, fix in never_blocks(command):
            found.problems.append((f"the hook command {command!r} {why}", f"{fix} in {path}, or {fix_init}"))
    for command in commands:
        if not isolated(command):
            found.problems.append((f"the hook command {command!r} runs `python -m review_gate` without -I: in the "
                                   "repository it judges, the repository's own review_gate/ would run in its place",
                                   f"add -I after the interpreter in {path}, or {fix_init}"))
    for command in commands:
        problem = _unresolved(command, root)
        if problem is not None:
            found.problems.append((problem, fix_init))
    if found.problems and any(_unresolved(c, root) for c in commands):
        return found  # running it would only say so again
    if stop:
        _probe(found, "Stop", str(stop[0][1].get("command")), _timeout(stop[0][1]), root, _stop_payload(root),
               environment)
        _settings_used(found, str(stop[0][1].get("command")), _timeout(stop[0][1]), root, path, environment)
    if tool:
        command, limit = str(tool[0][1].get("command")), _timeout(tool[0][1])
        _probe(found, "git commit (Bash)", command, limit, root,
               _tool_payload(root, "Bash", {"command": "git commit -m wip"}), environment)
        if host.NAME == "claude-code":
            target = root / ".review-gate" / "review-rules.json"
            probe = _probe(found, "an edit of .review-gate/review-rules.json (Write)", command, limit, root,
                           _tool_payload(root, "Write", {"file_path": str(target), "content": "{}"}), environment)
            if probe.ran and probe.answer != "deny":
                found.problems.append(("an agent's write into the configuration was not denied",
                                       f"check the hook's flags (--config) in {path}, or {fix_init}"))
    return found


def _settings(root: Path, host: Host, found: Checked) -> dict[str, Any] | None:
    """The hooks of the host's project settings (Claude Code's settings.local.json merged in)."""
    merged: dict[str, list[Any]] = {}
    names = [host.SETTINGS, *([".claude/settings.local.json"] if host.NAME == "claude-code" else [])]
    for name in names:
        path = root / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            found.problems.append((f"{path} cannot be read as JSON ({exc}): the host ignores its hooks",
                                   "fix the file, then run `review-gate hook check` again"))
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if isinstance(hooks, dict):
            for event, groups in hooks.items():
                if isinstance(groups, list):
                    merged.setdefault(event, []).extend(groups)
    has_ours = any(marker(host.NAME).search(json.dumps(groups)) for groups in merged.values())
    return merged if has_ours else None


def _claude_settings(root: Path, host: Host) -> list[Path]:
    """The settings files Claude Code reads, the later ones winning: the user's, the project's, the
    local one."""
    if host.NAME != "claude-code":
        return []
    return [Path.home() / ".claude" / "settings.json", root / ".claude" / "settings.json",
            root / ".claude" / "settings.local.json"]


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}  # a project file that cannot be read is said by _settings; the others are the user's
    return data if isinstance(data, dict) else {}


def _disabling(root: Path, host: Host) -> list[Path]:
    """The settings files that switch every hook off (Claude Code's ``disableAllHooks``)."""
    return [path for path in _claude_settings(root, host) if _read_object(path).get("disableAllHooks") is True]


def _host_env(root: Path, host: Host) -> dict[str, str]:
    """The environment the host's settings give every session (Claude Code's ``env``), which its
    hooks run with: a ``REVIEW_GATE_CONFIG`` set there decides what the hook judges with."""
    merged: dict[str, str] = {}
    for path in _claude_settings(root, host):
        given = _read_object(path).get("env")
        if isinstance(given, dict):
            merged.update({str(k): str(v) for k, v in given.items() if isinstance(v, (str, int, float, bool))})
    return merged


def _matches(matcher: object, tool: str) -> bool:
    """The hosts' matcher rule: empty or ``*`` matches every tool, else a regular expression."""
    if matcher in (None, "", "*"):
        return True
    try:
        return re.fullmatch(str(matcher), tool) is not None
    except re.error:
        return False


def _timeout(hook: dict[str, Any]) -> float:
    value = hook.get("timeout")
    return float(value) if isinstance(value, (int, float)) and value > 0 else 60.0


def _unresolved(command: str, root: Path) -> str | None:
    """Why the command's program cannot be started, or None."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError as exc:
        return f"the hook command {command!r} cannot be read by a shell ({exc})"
    # `VAR=value cmd` runs cmd with VAR set; `exec cmd` runs cmd in the shell's place; `(cmd; ...)`
    # and `{ cmd; }` run cmd in a group
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in ("exec", "(", "{")):
        words = words[1:]
    if not words:
        return "the hook command is empty"
    program = words[0]
    if "/" in program:
        where = Path(program) if os.path.isabs(program) else root / program
        if not os.access(where, os.X_OK) or where.is_dir():
            return (f"the hook runs {program}, which does not exist here (another machine's path, or a moved "
                    f"virtual environment): the host gets exit {MISSING}, a non-blocking error, and the gate "
                    "never runs")
        return None
    if shutil.which(program) is None:
        return (f"the hook runs `{program}`, which is not on this PATH: the host gets exit {MISSING}, a "
                "non-blocking error, and the gate never runs")
    return None


def isolated(command: str) -> bool:
    """Whether a hook command that runs ``python -m review_gate`` runs it isolated (``-I``, or
    ``-P``, before ``-m``), as ``init --hooks`` writes it; any other command is not asked.

    >>> isolated("/v/bin/python -m review_gate hook claude-code"), isolated("/v/bin/python -I -m review_gate hook x")
    (False, True)
    >>> isolated("/v/bin/review-gate hook claude-code")
    True
    """
    from review_gate._isolation import module_run

    try:
        words = shlex.split(command)
    except ValueError:
        return True  # _unresolved says it cannot be read
    if not module_run(words):
        return True
    options = words[1:words.index("-m") if "-m" in words else len(words)]
    return any(w.startswith("-") and not w.startswith("--") and ("I" in w[1:] or "P" in w[1:]) and w[1] not in "XW"
               for w in options)


def never_blocks(command: str) -> list[tuple[str, str]]:
    """Why a hook command can never stop the agent, with the fix: ``--fail-on never`` (the gate
    never fails), its standard output sent elsewhere (the host reads the answer there), its exit
    code swallowed (``|| true``, ``; true``: a hook that fails, exit 2, would block).

    >>> [why for why, _ in never_blocks("rg hook claude-code --fail-on never > /dev/null 2>&1 || true")][0]
    'has --fail-on never: the gate never fails, so it never blocks a stop or denies a commit'
    >>> never_blocks("rg hook claude-code --budget 50 2>/dev/null")
    []
    >>> [why[:28] for why, _ in never_blocks("sh -c 'review-gate hook claude-code; exit 0'")]
    ['runs something after the hoo']
    """
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return []  # _unresolved says it cannot be read
    for index, token in enumerate(tokens[:-1]):  # `sh -c 'review-gate hook ...; exit 0'`: the script is the command
        if token == "-c" and index and _SHELLS.match(tokens[index - 1]) and marker_any.search(tokens[index + 1]):
            inner = never_blocks(tokens[index + 1])
            # and what follows that shell on the line: `sh -c '...' || exit 0` swallows its exit code too
            if any(t in _SEPARATORS for t in tokens[index + 2:]) and _AFTER not in inner:
                inner.append(_AFTER)
            return inner
    found = []
    for index, token in enumerate(tokens):
        option, equals, value = token.partition("=")
        if len(option) >= len("--fail") and "--fail-on".startswith(option):
            value = value if equals else (tokens[index + 1] if index + 1 < len(tokens) else "")
            if value == "never":
                found.append(("has --fail-on never: the gate never fails, so it never blocks a stop or denies a "
                              "commit", "remove `--fail-on never` from it"))
                break
    if _STDOUT_AWAY.search(command):
        found.append(("sends its standard output elsewhere: the host reads the hook's answer (block, deny) there "
                      "and gets nothing", "remove the redirection of its standard output (`> /dev/null`, `>&2`) "
                      "from it"))
    ours = next((i for i, t in enumerate(tokens) if t == "hook" and i and re.search(r"review[-_]gate", tokens[i - 1])),
                0)
    if any(token in _SEPARATORS for token in tokens[ours:]):
        found.append(_AFTER)
    return found


_SEPARATORS = ("||", ";", "|", "&")
_AFTER = ("runs something after the hook (`|| true`, `; true`, a pipe): its exit code is swallowed, and a hook "
          "that fails (exit 2, which the host takes for a block) lets the agent go on",
          "make review-gate the command's last program, with nothing after it")


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SHELLS = re.compile(r"(?:.*/)?(?:sh|bash|dash|zsh|ksh)$")
marker_any = re.compile(r"review[-_]gate['\"]?\s+hook\b")
# a redirection of standard output: `> f`, `1> f`, `>> f`, `&> f`, `>&2` (not `2> f`, `2>&1`)
_STDOUT_AWAY = re.compile(r"(?:^|\s)(?:1|&)?>")


def _stop_payload(root: Path) -> dict[str, Any]:
    return {"session_id": "review-gate-hook-check", "transcript_path": "", "cwd": str(root),
            "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False}


def _tool_payload(root: Path, tool: str, given: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": "review-gate-hook-check", "transcript_path": "", "cwd": str(root),
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": given,
            "tool_use_id": "review-gate-hook-check"}


def _probe(found: Checked, what: str, command: str, limit: float, root: Path, payload: dict[str, Any],
           environment: dict[str, str]) -> Probe:
    """Run ``command`` through the shell, as the host does, with ``payload`` on stdin."""
    started = time.monotonic()
    try:
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), cwd=root,
                              capture_output=True, timeout=limit, check=False, env=environment)
    except subprocess.TimeoutExpired:
        probe = Probe(what, False, None, f"killed after its timeout of {limit:g} s", time.monotonic() - started,
                      problem="the host kills a hook that outlives its timeout, and a killed hook blocks nothing")
        found.probes.append(probe)
        found.problems.append((f"{what}: {probe.problem}", "raise the hook's timeout above its --budget"))
        return probe
    seconds = time.monotonic() - started
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip().splitlines()
        # review-gate's own errors end with a `fix:` line: the error is the line that says what went wrong
        why = next((line.strip() for line in reversed(error) if "error:" in line), error[-1] if error else "no message")
        kind = "takes for a block" if done.returncode == 2 else "takes for a non-blocking error: nothing is gated"
        probe = Probe(what, done.returncode == 2, done.returncode, f"exit {done.returncode}: {why}", seconds,
                      problem=f"the hook exited {done.returncode}, which the host {kind}")
        found.probes.append(probe)
        # review-gate's hook answers in JSON with exit 0; its exit 2 is an error (a flag it does not know, a
        # configuration it cannot load): the host then blocks every stop with that error for a reason
        found.problems.append((f"{what}: {probe.problem} ({why})",
                               "run the command by hand to see why, or run `review-gate init --hooks` again"))
        return probe
    answer = _answer(done.stdout)
    probe = Probe(what, True, 0, answer, seconds)
    found.probes.append(probe)
    return probe


def _settings_used(found: Checked, command: str, limit: float, root: Path, settings: Path,
                   environment: dict[str, str]) -> None:
    """Ask the hook, run as the host runs it, which configuration and ``fail_on`` it judges with:
    ``"fail_on": "never"`` in that configuration (the repository's, a --config, a
    $REVIEW_GATE_CONFIG the command or the host sets) is a hook that never blocks, which the
    command's words do not show."""
    payload = {**_stop_payload(root), "hook_event_name": PROBE_EVENT}
    try:
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), cwd=root,
                              capture_output=True, timeout=limit, check=False, env=environment)
        data = json.loads(done.stdout.decode("utf-8", "replace")).get(PROBE_EVENT)
    except (subprocess.TimeoutExpired, json.JSONDecodeError, AttributeError, OSError):
        return  # the Stop probe says what is wrong with running it
    if isinstance(data, dict) and isinstance(data.get("reviewers"), list):
        found.reviewers = [str(line) for line in data["reviewers"]][:20]
    if isinstance(data, dict) and data.get("configured_fail_on", data.get("fail_on")) == "never":
        where = str(data.get("config") or "the built-in configuration")
        found.problems.append((f"the configuration the hook judges with ({where}) has fail_on never: the gate never "
                               "fails, so it never blocks a stop or denies a commit",
                               f"remove \"fail_on\": \"never\" from the gate of {where}/review-gate.json, or point "
                               f"the hook at another configuration (--config, REVIEW_GATE_CONFIG) in {settings}"))


def _answer(stdout: bytes) -> str:
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return "allow"
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return "an answer the host cannot read"
    if not isinstance(data, dict):
        return "an answer the host cannot read"
    if data.get("decision") == "block":
        return "block"
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return "deny"
    return "allow"
