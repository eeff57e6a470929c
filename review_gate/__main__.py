"""``python -m review_gate``: the command line.

``-m`` puts the current directory first on the import path, and review-gate runs inside the
repository it judges: a change that adds ``pydantic/`` or ``json.py`` at its root would be imported
in place of ours, its code run with the job's environment. The entry is dropped before anything
else is imported (the console script ``review-gate`` never has it; ``python -I -m review_gate``
neither).
"""

from __future__ import annotations

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()) and not getattr(sys.flags, "safe_path", False):
    del sys.path[0]

from review_gate.surfaces.cli.main import main  # after the import path is made safe

raise SystemExit(main())
