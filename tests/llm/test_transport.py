"""The run's HTTP client (``llm/client.new_client``, ``llm/transport.py``): the certificate
store is loaded by the first https request, which is verified as httpx verifies (the
environment's certificate settings honoured), the environment's proxies carry the requests, and
a review against a plain-http endpoint loads no certificate store and not httpx's command line
(issue 33: 40-70 ms before the first request)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from tests.conftest import GitRepo, make_diff
from tests.llm.conftest import agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Step

DIFF = make_diff("app.py", ["x = 1"])


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-transport-0123456789")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.fixture
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_server(authority: trustme.CA) -> Iterator[LlmServer]:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    with LlmServer(tls=context) as running:
        yield running


def test_an_https_endpoint_is_verified_and_the_environments_certificates_are_honoured(
        cli: Any, tmp_path: Path, tls_server: LlmServer, authority: trustme.CA,
        monkeypatch: pytest.MonkeyPatch) -> None:
    tls_server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("rev", tls_server, retries=0)])
    assert tls_server.url.startswith("https://")
    # a certificate no store trusts: the connection fails, the agent with it (fail closed)
    result, report = run(cli, cfg, DIFF, "--no-state")
    assert agent_result(report, "rev")["status"] == "failed"
    assert "CERTIFICATE_VERIFY_FAILED" in (agent_result(report, "rev")["error"] or "")
    assert (result.code, report["decision"], tls_server.requests) == (3, "incomplete", [])
    # $SSL_CERT_FILE names the authority: the same review is answered
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    result, report = run(cli, cfg, DIFF, "--no-state")
    assert agent_result(report, "rev")["status"] == "completed"
    assert (result.code, len(tls_server.requests)) == (0, 1)


def test_a_certificate_file_that_cannot_be_read_fails_the_https_agents_saying_so(
        cli: Any, tmp_path: Path, server: LlmServer, tls_server: LlmServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    server.default = tls_server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("plain", server, retries=0), llm_agent("tls", tls_server, retries=0)],
                       packing="per_agent")
    result, report = run(cli, cfg, DIFF, "--no-state")
    assert agent_result(report, "plain")["status"] == "completed"  # plain http reads no certificate
    failed = agent_result(report, "tls")
    assert failed["status"] == "failed" and "$SSL_CERT_FILE" in failed["error"] and "missing.pem" in failed["error"]
    assert (result.code, report["decision"], len(tls_server.requests)) == (3, "incomplete", 0)


def test_endpoints_on_http_and_https_in_one_run_each_get_their_requests(
        cli: Any, tmp_path: Path, server: LlmServer, tls_server: LlmServer, authority: trustme.CA,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    server.default = tls_server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent(f"plain-{i}", server, retries=0) for i in range(3)]
                       + [llm_agent(f"tls-{i}", tls_server, retries=0) for i in range(3)], packing="per_agent")
    result, report = run(cli, cfg, DIFF, "--no-state")
    assert {a["id"]: a["status"] for a in report["agents"]} == {
        **{f"plain-{i}": "completed" for i in range(3)}, **{f"tls-{i}": "completed" for i in range(3)}}
    assert (result.code, len(server.requests), len(tls_server.requests)) == (0, 3, 3)


def test_the_environments_proxy_carries_the_requests(cli: Any, tmp_path: Path, server: LlmServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY names the test server, which answers as a proxy that passes the request on
    would; the endpoint's own host (.invalid) has no address: only the proxy can answer."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("rev", server, retries=0, base_url="http://model.invalid/v1")])
    result, report = run(cli, cfg, DIFF, "--no-state")
    assert agent_result(report, "rev")["status"] == "completed"
    assert (result.code, [r.path for r in server.requests]) == (0, ["http://model.invalid/v1/chat/completions"])


# main() as the console script runs it, counting the certificate stores loaded into a TLS context
_COUNTED = ("import json, ssl, sys\nsys.path.pop(0)\nloaded = []\n"
            "for name in ('load_verify_locations', 'load_default_certs', 'set_default_verify_paths'):\n"
            "    def counted(self, *args, _original=getattr(ssl.SSLContext, name), **kwargs):\n"
            "        loaded.append(1)\n"
            "        return _original(self, *args, **kwargs)\n"
            "    setattr(ssl.SSLContext, name, counted)\n"
            "from review_gate.surfaces.cli.main import main\n"
            "code = main(sys.argv[1:])\n"
            "print(json.dumps({'code': code, 'loaded': len(loaded), 'modules': sorted(sys.modules)}),\n"
            "      file=sys.stderr)\n")


def test_a_review_against_a_plain_http_endpoint_loads_no_certificates_nor_httpx_command_line(
        repo: GitRepo, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("rev", server, retries=0)])
    diff = tmp_path / "change.diff"
    diff.write_text(DIFF, encoding="utf-8")
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-c", _COUNTED, "--diff", str(diff), "--config", str(cfg), "--no-state",
                           "--format", "json", "--output", str(report)], cwd=repo.root, env=env,
                          capture_output=True, text=True, timeout=120)
    found = json.loads(done.stderr.strip().splitlines()[-1])
    assert found["code"] == 0 and len(server.requests) == 1
    assert [a["status"] for a in json.loads(report.read_text(encoding="utf-8"))["agents"]] == ["completed"]
    assert "httpx" in found["modules"]  # it did talk to the model
    assert found["loaded"] == 0  # no certificate store read for a plain-http endpoint
    assert "httpx._main" not in found["modules"]  # httpx's command line (click, rich, pygments): not used
