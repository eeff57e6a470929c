"""`python -m review_gate` run in the repository under review imports nothing from it: `-m` puts the
current directory first on the import path, so a change adding `pydantic/` at its root had its code
run in place of the library (in CI, with the job's secrets)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from review_gate import __version__


def test_python_m_review_gate_never_imports_the_working_directorys_modules(tmp_path: Path) -> None:
    for name in ("pydantic", "anyio", "rich"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f'raise SystemExit("the change\'s {name} ran")\n')
    (tmp_path / "json.py").write_text('raise SystemExit("the change\'s json ran")\n')
    for args in (["--version"], ["config", "validate"]):  # the second loads pydantic, rich, json
        result = subprocess.run([sys.executable, "-m", "review_gate", *args], cwd=tmp_path, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0 and "ran" not in result.stderr, result.stderr
        assert __version__ in result.stdout or "config OK" in result.stdout
