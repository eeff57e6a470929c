from __future__ import annotations

from review_gate.cli import main

raise SystemExit(main())
