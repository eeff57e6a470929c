"""The check at each stage's boundary: what a stage receives and returns is what its model says.

A model built by ``model_construct`` or changed by ``model_copy(update=...)`` skips validation,
and a model holding it does not look again (pydantic does not revalidate instances): a
``FileChange`` with ``status="bogus"`` and ``path=123`` passed ``PRFacts(...)`` and crashed
``classify`` with an AttributeError. So every stage checks its inputs and outputs here, each
model validated again from its fields, nested models first; a failure is a ``UsageError``
naming the stage, the field and the value.

The object itself is returned: a valid model is kept as it is. A frozen model checked once
stays valid, so the same object is not checked twice (its identity is remembered while it
lives): a plan checks its facts once, not at every stage they pass.
``REVIEW_GATE_UNCHECKED=1`` turns the checks off, for ``benchmarks/speed.py`` to measure what
they cost; nothing else sets it.

>>> from review_gate.models import Commit
>>> checked("normalize", Commit(sha="a", author="b", subject="c")).sha
'a'
"""

from __future__ import annotations

import contextlib
import functools
import os
import typing
import weakref
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from review_gate.errors import UsageError

M = TypeVar("M", bound=BaseModel)
_seen: dict[int, weakref.ref[BaseModel]] = {}  # id -> the model checked, while it lives


def checked(stage: str, value: M) -> M:
    """``value`` validated again as its own model, nested models first; UsageError when invalid."""
    if os.environ.get("REVIEW_GATE_UNCHECKED") == "1":
        return value
    try:
        return _checked(value, ())
    except _Invalid as invalid:
        raise UsageError(f"stage {stage}: {type(value).__name__} is not valid: {invalid.describe()}",
                         fix="build models with their constructors (or model_validate), which check every field; "
                             "model_construct and model_copy(update=...) check nothing") from None


def checked_all(stage: str, values: Sequence[M]) -> list[M]:
    return [checked(stage, value) for value in values]


class _Invalid(Exception):
    """A nested model at ``path`` failed its check."""

    def __init__(self, path: tuple[str | int, ...], error: ValidationError) -> None:
        super().__init__(path, error)
        self.path = path
        self.error = error

    def describe(self) -> str:
        """The first error, as field path: message (the value it got)."""
        first = self.error.errors()[0]
        where = ".".join(str(part) for part in (*self.path, *first["loc"])) or "(the model)"
        got = repr(first.get("input"))[:80]
        count = self.error.error_count()
        return f"{where}: {first['msg']} (got {got})" + (f" (and {count - 1} more)" if count > 1 else "")


def _checked(value: M, path: tuple[str | int, ...]) -> M:
    known = _seen.get(id(value))
    if known is not None and known() is value:
        return value
    fields = value.__dict__
    nested = _holding_models(type(value))
    if nested:
        fields = {**fields, **{name: _nested(fields[name], (*path, name)) for name in nested if name in fields}}
    try:
        # strict: the fields a constructor stored are of their types already; anything a check
        # would have to convert was never checked (model_construct), and is refused
        type(value).model_validate(fields, strict=True)
    except ValidationError as exc:
        raise _Invalid(path, exc) from None
    _remember(value)
    return value


@functools.cache
def _holding_models(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``model`` that may hold models (``hunks: list[Hunk]``): only those are walked."""
    return tuple(name for name, info in model.model_fields.items() if _mentions_model(info.annotation))


def _mentions_model(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_mentions_model(arg) for arg in typing.get_args(annotation))


def _nested(item: Any, path: tuple[str | int, ...]) -> Any:
    if isinstance(item, BaseModel):
        return _checked(item, path)
    if isinstance(item, list) and item and isinstance(item[0], BaseModel):
        return [_nested(x, (*path, i)) for i, x in enumerate(item)]
    return item


def _remember(model: BaseModel) -> None:
    global _prune_at
    with contextlib.suppress(TypeError):  # a model that takes no weak reference is checked each time
        # no callback a reference (a run checks thousands of models): the dead are let go in bulk
        _seen[id(model)] = weakref.ref(model)
    if len(_seen) >= _prune_at:
        for key in [key for key, ref in _seen.items() if ref() is None]:
            del _seen[key]
        _prune_at = max(_PRUNE_AT, 2 * len(_seen))


_PRUNE_AT = 1 << 14
_prune_at = _PRUNE_AT


__all__ = ["checked", "checked_all"]
