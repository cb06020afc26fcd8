"""What every ATen converter shares: the table that finds it by name.  A converter is a plain function of
the :class:`~rewrite.frontends.aten_state.ImportState` it builds into (the node torch computed, the
builder, scalars, constants and axes as the converters read them); ``@converter`` enters it under its
name, ``@training_converter`` also marks it as one only the training-IR table
(``aten_training.CONVERTERS``) names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rewrite.frontends.aten_state import computed_as

F = TypeVar("F", bound=Callable[..., Any])

CONVERTER_FNS: dict[str, Callable[..., Any]] = {}  # converter name (a row's first field) -> its function
TRAINING_ONLY: set[str] = set()  # the converters of training-IR rows alone


def converter(fn: F) -> F:
    """Enter ``fn`` in :data:`CONVERTER_FNS` under its name (each name once)."""
    assert fn.__name__ not in CONVERTER_FNS, fn.__name__
    CONVERTER_FNS[fn.__name__] = fn
    return fn


def training_converter(fn: F) -> F:
    """A converter of training-IR rows alone: entered as :func:`converter` does, and marked so."""
    TRAINING_ONLY.add(fn.__name__)
    return converter(fn)


__all__ = ["CONVERTER_FNS", "TRAINING_ONLY", "computed_as", "converter", "training_converter"]
