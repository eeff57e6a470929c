"""Agent kind ``command``: any local program, run as an argv list in its own process group.

It gets the unified diff of its scope on stdin (``input: stdin``) or as a file path appended to
its argv (``input: file``), and ``REVIEW_GATE_FILES`` in its environment. Exit 0 with findings
JSON, SARIF, a ``@@@REVIEW_META`` review (see ``parse.review_meta_findings``) or dimension
verdicts (``review_gate.judging.dimensions``) on stdout is success; exit 75 (EX_TEMPFAIL) is a
transient fault worth a retry; any other exit is a failure carrying the tail of stderr. When it
ends (exit, deadline, cancellation) its process group is killed, and so is every process
carrying its mark (``strays``), even one that called setsid(): a hung program or a daemon it
started cannot outlive the run. The mark is the environment
variable ``REVIEW_GATE_AGENT_MARK``. With a configuration from outside the working tree, what
it runs is the configuration's copy, never the change's (``program``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, Process

from review_gate.agents import base, program, strays
from review_gate.agents.base import RAW_LIMIT, AgentContext, AgentOutput, AgentSpec, AgentTask, cap_raw
from review_gate.agents.parse import parse_dimensions, parse_findings, parse_sarif, review_meta_findings
from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.models import CommandAgent, DimensionMapping

needs_network = False
unavailable = base.always_available
estimate = base.SPENDS_NOTHING
pack_key = base.never_packed
review_pack = base.NO_PACKS

EX_TEMPFAIL = 75
STDERR_TAIL = 2000


async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
    assert isinstance(spec, CommandAgent)
    diff = "".join(f.patch for f in task.files).encode("utf-8", "surrogateescape")
    cwd = task.repo_root if spec.cwd == "repo" else task.config_dir
    try:  # the configuration's copy of what it names, never the change's (checked before the run, too)
        argv = program.resolve(spec, root=task.repo_root, config_dir=task.config_dir).argv
    except program.Refused as refused:
        raise AgentFault(refused.message) from None
    mark = strays.new_mark()
    async with _scratch([f.path for f in task.files], diff if spec.input == "file" else None) as (listing, path):
        env = {**os.environ, **listing, strays.MARK_VAR: mark}
        argv = list(argv)
        if path is not None:
            argv.append(str(path))
        stdout, stderr, code = await _run(argv, diff if spec.input == "stdin" else b"", cwd, env,
                                          spec.max_output_bytes, mark)
    if code == EX_TEMPFAIL:
        raise TransientAgentFault(f"exited {code} (temporary failure){_tail(stderr)}")
    if code != 0:
        reason = f"killed by signal {-code}" if code < 0 else f"exited {code}"
        raise AgentFault(f"{argv[0]} {reason}{_tail(stderr)}")
    text = stdout.decode("utf-8", "replace")
    raw = raw_answer(stdout)
    if spec.output == "sarif":
        return AgentOutput(findings=parse_sarif(text, task.repo_root), raw=raw)
    if spec.output == "review_meta":
        return AgentOutput(findings=review_meta_findings(text, spec.id), raw=raw)
    if spec.output == "dimensions":
        return AgentOutput(findings=parse_dimensions(text, spec.dimensions or DimensionMapping()), raw=raw)
    return AgentOutput(findings=parse_findings(text), raw=raw)


@contextlib.asynccontextmanager
async def _scratch(paths: list[str], diff: bytes | None) -> AsyncIterator[tuple[dict[str, str], Path | None]]:
    """The program's file list (``files_env``) and, for ``input: file``, its diff, in a temporary
    directory. A diff to write is written, and the directory removed, in a worker thread: twenty
    agents writing a large diff in the event loop one after another were most of what dispatch
    added to the programs' own time. A list of paths alone is made in the event loop: twenty
    thread hops at once waited on each other for 15-40 ms before the first program started,
    where making the twenty small files takes about 2 ms."""
    def make() -> tuple[Path, dict[str, str], Path | None]:
        tmp = Path(tempfile.mkdtemp(prefix="review-gate-"))
        listing = files_env(paths, tmp)
        if diff is None:
            return tmp, listing, None
        (tmp / "scope.diff").write_bytes(diff)
        return tmp, listing, tmp / "scope.diff"

    tmp, listing, path = make() if diff is None else await anyio.to_thread.run_sync(make)
    try:
        yield listing, path
    finally:
        if diff is None:
            shutil.rmtree(tmp, True)
        else:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(shutil.rmtree, tmp, True)


async def run_program(argv: list[str], stdin: bytes, *, cwd: str | None, env: Mapping[str, str] | None = None,
                      limit: int = 10_000_000, mark: str | None = None) -> tuple[bytes, bytes, int]:
    """Run a program as an agent is run, for other callers (the coder/reviewer loop): in its own
    process group with a mark in its environment (``mark``, default a fresh one; ``env``,
    default ours), ``stdin`` fed, stdout capped at ``limit`` bytes; when it ends, or the caller
    is cancelled (a deadline), its group and every process carrying the mark are killed. On
    Linux it also dies with this process, even by SIGKILL (``orphan_guard``). Returns (stdout,
    stderr tail, exit code, negative for a signal); AgentFault when it cannot start or prints
    too much."""
    mark = mark or strays.new_mark()
    full = {**(os.environ if env is None else env), strays.MARK_VAR: mark}
    _check_program(argv[0], cwd, full)
    return await _run(orphan_guard(argv), stdin, cwd, full, limit, mark)


# Run before the program (in its own process, then exec'd away): PR_SET_PDEATHSIG makes the
# kernel SIGKILL it when the process that started it dies, SIGKILL included, which no cleanup
# of ours survives to do. A preexec_fn would do the same in the child of fork(), but it is not
# safe in a process with threads (the run's worker threads), and anyio does not take one. The
# check of the parent after the call closes the window where it died before the call.
_GUARD = (
    "import ctypes, os, sys\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)\n"  # PR_SET_PDEATHSIG, SIGKILL
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(137)\n"
    "try:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot start {sys.argv[2]}: {exc.strerror}\\n')\n"
    "    os._exit(127)\n"
)


def orphan_guard(argv: list[str]) -> list[str]:
    """``argv`` behind the guard that makes it die with this process (Linux; elsewhere as it is).
    Only the program itself: what it starts is found by its mark (``strays``) when the session
    is resumed."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-S", "-c", _GUARD, str(os.getpid()), *argv]


def _check_program(program: str, cwd: str | None, env: Mapping[str, str]) -> None:
    """The AgentFault that starting ``program`` would give, before the guard hides it."""
    if os.sep in program:
        path = Path(cwd or ".") / program
        if not path.is_file():
            raise AgentFault(f"command not found: {program}")
        if not os.access(path, os.X_OK):
            raise AgentFault(f"command is not executable: {program}")
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise AgentFault(f"command not found: {program}")


def stderr_tail(stderr: bytes) -> str:
    """``: <the end of stderr>``, or nothing when it is empty: what a failure message ends with."""
    return _tail(stderr)


def files_env(paths: list[str], tmp: Path) -> dict[str, str]:
    """The scoped paths for the program's environment. A path may hold a newline (and an
    environment variable cannot hold NUL), so ``REVIEW_GATE_FILES`` is a JSON array, and
    ``REVIEW_GATE_FILES_FILE`` names a file of the paths each ended by NUL (as ``git ls-files -z``
    writes them); a program that splits the variable on newlines gets one unusable line
    instead of a path it was never given."""
    listing = tmp / "files.nul"
    listing.write_bytes(b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths))
    return {"REVIEW_GATE_FILES": json.dumps(paths), "REVIEW_GATE_FILES_FILE": str(listing)}


def raw_answer(stdout: bytes) -> str:
    """The program's stdout as text, capped at RAW_LIMIT bytes with a closing line that says so."""
    return cap_raw(stdout, RAW_LIMIT)


def _tail(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace").strip()
    if not text:
        return ""
    return ": " + ("…" + text[-STDERR_TAIL:] if len(text) > STDERR_TAIL else text)


async def _run(argv: list[str], stdin: bytes, cwd: str | None, env: dict[str, str],
               limit: int, mark: str) -> tuple[bytes, bytes, int]:
    try:
        process = await anyio.open_process(argv, cwd=cwd, env=env, start_new_session=True)
    except FileNotFoundError as exc:
        raise AgentFault(f"command not found: {argv[0]}") from exc
    except PermissionError as exc:
        raise AgentFault(f"command is not executable: {argv[0]}") from exc
    except OSError as exc:
        raise AgentFault(f"cannot start {argv[0]}: {exc.strerror}") from exc
    out = bytearray()
    err = bytearray()
    too_much = ended = False
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_feed, process, stdin)
            group.start_soon(_drain, process.stderr, err, STDERR_TAIL * 4)

            async def read_stdout() -> None:
                nonlocal too_much
                assert process.stdout is not None
                async for chunk in process.stdout:
                    out.extend(chunk)
                    if len(out) > limit:
                        too_much = True
                        _end(process, mark)
                        return

            group.start_soon(read_stdout)
            code = await process.wait()
            # A child left behind may still hold the pipes open; with the program gone its
            # output is complete, so end what it left now rather than wait for EOF until the deadline.
            # The sweep for its marked strays runs in a worker thread: the other agents go on meanwhile.
            await anyio.to_thread.run_sync(_end, process, mark)
            ended = True
    finally:
        with anyio.CancelScope(shield=True):
            if not ended:
                await anyio.to_thread.run_sync(_end, process, mark)
            await process.aclose()
    if too_much:
        raise AgentFault(f"{argv[0]} printed more than {limit} bytes; output limit is max_output_bytes")
    return bytes(out), bytes(err), code


async def _feed(process: Process, data: bytes) -> None:
    assert process.stdin is not None
    try:
        if data:
            await process.stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
        pass  # the program did not read its input; its exit code and output decide
    finally:
        await process.stdin.aclose()


async def _drain(stream: ByteReceiveStream | None, into: bytearray, keep: int) -> None:
    if stream is None:
        return
    async for chunk in stream:
        into.extend(chunk)
        if len(into) > keep:
            del into[: len(into) - keep]


def _end(process: Process, mark: str) -> None:
    """Kill the program's process group and every process that carries its mark."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    strays.kill_marked(mark)
