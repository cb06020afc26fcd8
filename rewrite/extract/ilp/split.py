"""Independent parts of the 0-1 program: columns that share no row, solved as separate programs.

The objective is a sum over columns, so when the columns fall into groups that no row connects, the
optimum is the sum of each group's optimum, and each group's proved bound adds up to a bound of the
whole.  Branch and bound is superlinear in the size of what it branches over: eight programs of 100
columns close in milliseconds where one of 800 columns (bert) takes seconds of cuts and restarts.

    >>> # rows: 0 = x0 + x1 <= 1, 1 = x2 = 1  (nonzeros as row, column pairs)
    >>> [(p.cols.tolist(), p.rows.tolist()) for p in components(3, 2, [0, 0, 1], [0, 1, 2])]
    [([2], [1]), ([0, 1], [0])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Part:
    """One independent program: its columns and rows (indices into the whole model's)."""

    cols: np.ndarray
    rows: np.ndarray


def components(ncols: int, nrows: int, nz_row: Sequence[int], nz_col: Sequence[int]) -> list[Part]:
    """The connected parts of the column-row incidence (nonzeros given as row and column lists), smallest
    first: they are solved in this order, so the big part, which may need the time limit, goes last."""
    rows = np.asarray(nz_row, dtype=np.int64)
    cols = np.asarray(nz_col, dtype=np.int64)
    row_first = np.full(nrows, -1, dtype=np.int64)  # a column of each row; every column of a row joins it
    row_first[rows[::-1]] = cols[::-1]  # (the first nonzero's, as the last write wins)
    root = _labels(ncols, row_first[rows], cols)
    row_root = np.where(row_first >= 0, root[np.maximum(row_first, 0)], -1)
    col_groups = groups(root)
    row_groups = groups(row_root)
    parts = [Part(cols, row_groups.get(rt, np.zeros(0, dtype=np.int64))) for rt, cols in col_groups.items()]
    parts.sort(key=lambda p: (len(p.cols), int(p.cols[0])))
    return parts


def _labels(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected components of the graph on ``0..n-1`` with edges ``a[k] - b[k]``: each vertex labelled
    with the smallest vertex of its component.  Hooking and pointer jumping in whole-array steps: each
    round hooks every edge's larger root under its smaller one, then jumps pointers until every vertex
    points at a root; rounds repeat until no edge joins two labels (O(log n) rounds in practice)."""
    label = np.arange(n, dtype=np.int64)
    while True:
        la, lb = label[a], label[b]
        differ = la != lb
        if not differ.any():
            return label
        lo, hi = np.minimum(la[differ], lb[differ]), np.maximum(la[differ], lb[differ])
        np.minimum.at(label, hi, lo)  # hi is a root (labels are roots after the jumps): hook it
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped


def groups(keys: np.ndarray) -> dict[int, np.ndarray]:
    """Indices grouped by key (ascending within a group); key -1 means "no group"."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    cuts = np.flatnonzero(np.diff(sorted_keys)) + 1
    out = {}
    for chunk in np.split(order, cuts):
        if len(chunk) and keys[chunk[0]] >= 0:
            out[int(keys[chunk[0]])] = chunk
    return out
