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


def zoo_builder(name: str) -> Callable[[], tuple[nn.Module, tuple[Any, ...]]] | None:
    """The builder of a zoo model: a ``ZOO`` name, ``full:NAME`` for the architecture at deployment size
    (``bench.zoo.full``) or ``wide:NAME`` for one of the wide sweep's (``bench.zoo.wide``); None for any other
    name."""
    from bench.zoo.full import FULL  # deferred: full and wide build on this package's cnn and hf
    from bench.zoo.wide import WIDE

    if name in ZOO:
        return ZOO[name]
    if name.startswith("wide:"):
        return WIDE.get(name.removeprefix("wide:"))
    return FULL.get(name.removeprefix("full:")) if name.startswith("full:") else None


def zoo_names() -> list[str]:
    """Every name ``zoo_builder`` takes, for a usage error."""
    from bench.zoo.full import FULL
    from bench.zoo.wide import WIDE

    return [*ZOO, *(f"full:{k}" for k in FULL), *(f"wide:{k}" for k in WIDE)]


__all__ = ["ZOO", "zoo_builder", "zoo_names"]
