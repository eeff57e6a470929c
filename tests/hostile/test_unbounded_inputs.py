"""Inputs without end (``/dev/zero``, a runaway pipe) and inputs with nothing in them.

Each used to be read whole: ``review-gate meta check /dev/zero`` grew to 24 GB before the
kernel killed it. Now each is refused with exit 2 naming the input. The processes run with
their address space capped, so a regression fails here instead of taking the machine down.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from tests.conftest import make_diff

ADDRESS_SPACE = 3 * 1024 * 1024 * 1024  # far above what a bounded read needs, far below a whole /dev/zero


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run(argv: list[str], stdin: int | None, cwd: Path,
        pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, stdin=stdin, capture_output=True, text=True, timeout=120, cwd=cwd,
                          preexec_fn=capped, pass_fds=pass_fds, check=False)


@pytest.mark.parametrize(("args", "from_zero", "said"), [
    (["meta", "check", "/dev/zero"], False, "/dev/zero: it is a device or a socket"),
    (["meta", "check", "-"], True, "standard input is larger than 16 MiB"),
    (["merge", "/dev/zero"], False, "the report /dev/zero: it is a device or a socket"),
    (["merge", "/dev/stdin"], True, "the report /dev/stdin: it is a device or a socket"),
    (["--diff", "-", "--no-state"], True, "the diff on standard input is larger than 256 MiB"),
    (["--diff", "/dev/zero", "--no-state"], False, "the diff /dev/zero: it is a device or a socket"),
])
def test_an_endless_input_is_refused_naming_it(review_gate_bin: list[str], tmp_path: Path, args: list[str],
                                               from_zero: bool, said: str) -> None:
    with open("/dev/zero", "rb") as zero:
        done = run([*review_gate_bin, *args], zero.fileno() if from_zero else subprocess.DEVNULL, tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert said in done.stderr and "fix:" in done.stderr
    assert "internal error" not in done.stderr


def test_an_endless_pipe_is_read_up_to_the_limit_and_refused(review_gate_bin: list[str], tmp_path: Path) -> None:
    with subprocess.Popen(["yes", "+x = 1"], stdout=subprocess.PIPE) as endless:
        assert endless.stdout is not None
        try:
            done = run([*review_gate_bin, "merge", "/dev/stdin"], endless.stdout.fileno(), tmp_path)
        finally:
            endless.kill()
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the report /dev/stdin is larger than 256 MiB" in done.stderr


@pytest.mark.parametrize("empty", [b"", b"\n  \n"])
def test_an_empty_diff_is_an_error_not_a_pass(cli, empty: bytes) -> None:
    """`gh pr diff | review-gate --diff -` with a failed gh must not gate nothing and pass."""
    result = cli("--diff", "-", stdin=empty)
    assert result.code == 2, result.out
    assert "standard input is empty: there is no change to review" in result.err
    assert "PASS" not in result.out


def test_an_empty_diff_file_is_an_error(cli, tmp_path: Path) -> None:
    path = tmp_path / "pr.diff"
    path.write_bytes(b"")
    result = cli("--diff", str(path))
    assert result.code == 2 and f"the diff {path} is empty" in result.err


def test_a_diff_from_a_pipe_is_reviewed(review_gate_bin: list[str], tmp_path: Path) -> None:
    """`--diff <(git diff ...)`: the shell passes /dev/fd/N, a pipe, not a regular file."""
    read, write = os.pipe()
    os.write(write, make_diff("deploy/key.pem", ["-----BEGIN RSA PRIVATE KEY-----", "MIIE"]).encode())
    os.close(write)
    try:
        done = run([*review_gate_bin, "--diff", f"/dev/fd/{read}", "--no-state"], subprocess.DEVNULL, tmp_path,
                   pass_fds=(read,))
    finally:
        os.close(read)
    assert done.returncode == 1, done.stderr
    assert "REVIEW: FAIL" in done.stdout and "private key" in done.stdout.lower()
