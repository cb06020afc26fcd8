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

__all__ = ["ZOO"]
