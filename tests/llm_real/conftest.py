"""A real model server for the ``llm_real`` tests: llama.cpp's llama-server with a tiny random model.

The server binary is built once per machine by ``tools/llm/build_llama_server.sh`` (CI runs it
before the tests) and cached outside the repository; the model is generated per session by
``tools/llm/make_tiny_model.py``. When the binary is missing the tests are skipped, with the
reason and the command that builds it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "tools" / "llm" / "build_llama_server.sh"
MODEL_SCRIPT = ROOT / "tools" / "llm" / "make_tiny_model.py"
ALIAS = "tiny"
CONTEXT = 8192  # the tiny vocabulary spends about a token per two or three characters of prompt
STARTUP_TIMEOUT_S = 30.0


def _cached_binary() -> Path | None:
    """The llama-server to use: $LLAMA_SERVER, else the build script's cache path.

    Resolved when this module is imported, before the autouse fixture points HOME elsewhere."""
    explicit = os.environ.get("LLAMA_SERVER")
    if explicit:
        return Path(explicit)
    try:
        out = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-path"], capture_output=True, text=True,
                             check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out) if out else None


LLAMA_SERVER = _cached_binary()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("llm-model") / "tiny.gguf"
    subprocess.run([sys.executable, str(MODEL_SCRIPT), str(path)], check=True, capture_output=True, timeout=120)
    return path


@pytest.fixture(scope="session")
def llama_server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT``) of a llama-server serving the tiny model as ``tiny``."""
    if LLAMA_SERVER is None or not LLAMA_SERVER.is_file() or not os.access(LLAMA_SERVER, os.X_OK):
        pytest.skip(f"llama-server is not built (looked for {LLAMA_SERVER}); "
                    f"build it once with: bash {BUILD_SCRIPT.relative_to(ROOT)}")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    for _attempt in range(3):  # the free port may be taken between probing and binding
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        with log.open("wb") as sink:
            # One thread that sleeps while idle (--poll 0): on a machine whose cores the other
            # test workers keep busy, two spinning threads slowed answers many times over, past
            # the agents' deadlines (a CI run lost a chunk of a 60 s review that takes 2 s idle).
            proc = subprocess.Popen(
                [str(LLAMA_SERVER), "-m", str(tiny_model), "--host", "127.0.0.1", "--port", str(port),
                 "-c", str(CONTEXT), "-t", "1", "--poll", "0", "-np", "1", "--jinja", "--alias", ALIAS],
                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        healthy = False
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    healthy = True
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        if healthy:
            break
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
            pytest.fail(f"llama-server did not answer /health within {STARTUP_TIMEOUT_S:.0f} s:\n{_tail(log)}")
    else:
        pytest.fail(f"llama-server exited at startup (code {proc.returncode}):\n{_tail(log)}")
    try:
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
