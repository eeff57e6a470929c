from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict

_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole_characters(text: str) -> str:
    # JSON's "\udc80" decodes to half a surrogate pair: no character, and no UTF-8 writer
    # (the JSON report, a terminal, a file) can write it. An agent's text must not crash a run.
    return _SURROGATE.sub("\ufffd", text)


UntrustedText = Annotated[str, AfterValidator(_whole_characters)]
"""Text from an agent or a server: lone surrogates become U+FFFD."""


def _not_a_boolean(value: object) -> object:
    # Python's True == 1, so a Literal[1] alone takes JSON's true; the schemas say const 1
    if isinstance(value, bool):
        raise ValueError("1 was expected")
    return value


VersionOne = Annotated[Literal[1], BeforeValidator(_not_a_boolean)]
"""A file format's version number: 1, and not ``true``."""


class Frozen(BaseModel):
    """Base of every boundary model: immutable, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
