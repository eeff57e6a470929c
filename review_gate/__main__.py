from __future__ import annotations

from review_gate.surfaces.cli.main import main

raise SystemExit(main())
