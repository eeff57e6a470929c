"""The scale tests use the llm test server of tests/llm."""

from __future__ import annotations

from tests.llm.conftest import server

__all__ = ["server"]
