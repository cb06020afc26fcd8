"""The model zoo: real architectures through eqsat, one row per model.

``ZOO`` maps a name to a builder returning ``(module, example inputs)``: four CNNs written
here from their papers (:mod:`bench.zoo.cnn`) and eight ``transformers`` models built from
tiny configs (:mod:`bench.zoo.hf`).  :mod:`bench.zoo.run` imports, optimizes, verifies,
compiles and times each (``eqsat bench zoo``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from torch import nn

from bench.zoo import cnn, hf

ZOO: dict[str, Callable[[], tuple[nn.Module, tuple[Any, ...]]]] = {
    **{name: partial(cnn.build, name) for name in cnn.CNNS},
    **hf.HF,
}


def zoo_groups() -> dict[str, dict[str, Callable[[], tuple[nn.Module, tuple[Any, ...]]]]]:
    """The zoo's named groups, whose models are ``GROUP:NAME``: ``full`` (the zoo's architectures at deployment
    size, ``bench.zoo.full``) and ``wide`` (the wide sweep of other architectures, ``bench.zoo.wide``)."""
    from bench.zoo.full import FULL  # deferred: full and wide build on this package's cnn and hf
    from bench.zoo.wide import WIDE

    return {"full": FULL, "wide": WIDE}


def zoo_builder(name: str) -> Callable[[], tuple[nn.Module, tuple[Any, ...]]] | None:
    """The builder of a zoo model: a ``ZOO`` name or a group's ``GROUP:NAME`` (``zoo_groups``); None for any other
    name."""
    if name in ZOO:
        return ZOO[name]
    group, sep, rest = name.partition(":")
    return zoo_groups().get(group, {}).get(rest) if sep else None


def zoo_names() -> list[str]:
    """Every name ``zoo_builder`` takes, for a usage error."""
    return [*ZOO, *(f"{group}:{k}" for group, models in zoo_groups().items() for k in models)]


__all__ = ["ZOO", "zoo_builder", "zoo_groups", "zoo_names"]
