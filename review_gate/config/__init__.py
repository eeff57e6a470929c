"""Finding, loading and checking the configuration (DESIGN §4)."""

from __future__ import annotations

from review_gate.config.load import CONFIG_FILES, load_config, locate_config_dir
from review_gate.config.locations import builtin_dir

__all__ = ["CONFIG_FILES", "builtin_dir", "load_config", "locate_config_dir"]
