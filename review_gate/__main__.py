"""``python -m review_gate``: the command line.

``-m`` puts the current directory first on the import path, and review-gate runs inside the
repository it judges: a ``review_gate/`` there runs instead of this file (nothing here can stop
that: run ``python -I -m review_gate``, as the hooks ``init`` writes do, or the console script),
and a ``pydantic/`` or ``json.py`` at its root would be imported in place of ours. The
``review-gate-isolation.pth`` installed with the package starts such a run again with ``-P``
before it gets here (``review_gate/_isolation.py``); without it, this file does the same for a
``PYTHONPATH`` that reads from the working directory, and drops the entry ``-m`` added before
anything else is imported.
"""

from __future__ import annotations

import os
import sys

from review_gate._isolation import restart_isolated

restart_isolated(ours=True)
if sys.path and sys.path[0] in ("", os.getcwd()) and not getattr(sys.flags, "safe_path", False):
    del sys.path[0]

from review_gate.surfaces.cli.main import main  # noqa: E402 (after the import path is made safe)

raise SystemExit(main())
