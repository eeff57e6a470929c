"""Private keys under a test class's data folders are test keys (every case the precision replay
found): listed as warnings. The same key anywhere else stays critical."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import make_diff

KEY = ["-----BEGIN " + "RSA PRIVATE KEY" + "-----", "MIIEowIBAAKCAQEA" + "x7Kq" * 12,
       "-----END " + "RSA PRIVATE KEY" + "-----"]


def _key_findings(cli: Any, path: str) -> list[dict[str, Any]]:
    result = cli("--diff", "-", "--format", "json", "--offline", "--no-state", stdin=make_diff(path, KEY).encode())
    assert result.code in (0, 1), result.err
    return [f for f in result.json()["findings"] if f["rule_id"] == "sec-private-key-01"]


# (a new file elsewhere, such as pkg/tls/testdata/key.pem, takes the class only once the base holds
# that directory: judging/path_classes, issue 29)
@pytest.mark.parametrize("path", ["test/unit/data/server.key", "tests/integration/data/client.pem",
                                  "tests/ssl/certs/ca.key"])
def test_a_key_in_test_data_is_a_listed_warning(cli: Any, path: str) -> None:
    found = _key_findings(cli, path)
    assert [f["severity"] for f in found] == ["warning"], found


@pytest.mark.parametrize("path", ["deploy/server.key", "config/data/prod.pem", "src/test_helpers/key.pem"])
def test_a_key_elsewhere_stays_critical(cli: Any, path: str) -> None:
    found = _key_findings(cli, path)
    assert [f["severity"] for f in found] == ["critical"], found
