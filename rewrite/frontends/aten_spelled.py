"""The ATen rows the registry spells: each ``OpDef.aten`` overload becomes a row of its converter.

    >>> registry_rows()[torch.ops.aten.hardswish.default]
    ('a_unary', 'hardswish')
    >>> registry_rows()[torch.ops.aten.add.Tensor]
    ('a_arith', 'add')

The rows are derived from ``OPS`` when it changes (``registry_version``), so an op added with
``register_op`` has its row in :data:`rewrite.frontends.aten.ATEN` (and the importer's ``CONVERTERS``)
as soon as it is registered, and torch.export keeps its ``a_unary`` overload whole (:class:`KeepWhole`).
A converter reads the op and the attributes its overload implies with :func:`spelled`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from rewrite.ir.ops import OPS, AtenSpelling, OpDef, registry_version


def overload(spelling: str) -> Any:
    """``"aten.hardswish.default"`` as the torch operator overload it names (``namespace.name.overload``)."""
    ns, name, ov = spelling.split(".")
    return getattr(getattr(getattr(torch.ops, ns), name), ov)


@functools.lru_cache(maxsize=1)
def _spelled(version: int) -> dict[Any, tuple[OpDef, AtenSpelling]]:
    return {overload(s.overload): (op, s) for op in OPS.values() for s in op.aten_spellings}


def spelled(key: Any) -> tuple[OpDef, AtenSpelling]:
    """The registry op an overload spells, and its spelling (converter, implied attributes); KeyError if none."""
    return _spelled(registry_version())[key]


@functools.lru_cache(maxsize=2)
def _rows(version: int, training: bool) -> dict[Any, tuple[str, str]]:
    return {k: (s.converter, op.name) for k, (op, s) in _spelled(version).items() if training or not s.training_only}


def registry_rows(training: bool = True) -> dict[Any, tuple[str, str]]:
    """Overload → ``(converter, op)`` for every overload an ``OpDef.aten`` names, in registry order;
    ``training=False``: core ATen's alone (without the ``training_only`` spellings)."""
    return _rows(registry_version(), training)


class RowTable(Mapping[Any, tuple[str, str]]):
    """Hand-written converter rows and the registry's (``registry_rows``) as one table; the registry's are
    read at each lookup, so they follow ``register_op``.  The two never name the same overload
    (tests/ir/test_op_spellings.py).  ``training``: the table of the training-IR importer, which has the
    ``training_only`` spellings too."""

    def __init__(self, rows: Mapping[Any, tuple[str, str]], training: bool = False) -> None:
        self.rows = rows
        self.training = training

    def __getitem__(self, key: Any) -> tuple[str, str]:
        row = self.rows.get(key)
        return row if row is not None else registry_rows(self.training)[key]

    def __iter__(self) -> Iterator[Any]:
        yield from self.rows
        yield from (k for k in registry_rows(self.training) if k not in self.rows)

    def __len__(self) -> int:
        return len(self.rows) + sum(1 for k in registry_rows(self.training) if k not in self.rows)


class KeepWhole:
    """The overloads torch.export's decompositions must leave whole: every ``a_unary`` one the registry spells
    (the default table would split ``hardswish`` into clamps, ``mish`` into softplus and tanh), and ``extra``.
    The other rows' overloads are left to that table (it decomposes ``rsub``, ``floor_divide`` and
    ``masked_fill``)."""

    def __init__(self, *extra: Any) -> None:
        self.extra = extra

    def _whole(self) -> Iterator[Any]:
        return (k for k, (conv, _) in registry_rows().items() if conv == "a_unary")

    def __iter__(self) -> Iterator[Any]:
        yield from self._whole()
        yield from self.extra

    def __contains__(self, key: Any) -> bool:
        return registry_rows().get(key, ("",))[0] == "a_unary" or key in self.extra


__all__ = ["KeepWhole", "RowTable", "overload", "registry_rows", "spelled"]
