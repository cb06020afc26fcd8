"""What ILP extraction returns: the selection, how it was found (enums), the model's size.

>>> IlpStatus.TIME_LIMIT.value, IlpSource.GREEDY.value
('time_limit', 'greedy')
>>> IlpStatus("optimal") is IlpStatus.OPTIMAL
True
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only named in annotations: ``child`` imports this module without torch (see there)
    from rewrite.extract.egraph_data import ENode


class IlpStatus(StrEnum):
    """How the solve ended (egg's ``StopReason`` style: a closed set, not free text)."""

    OPTIMAL = "optimal"  # proved optimal, within the relative gap asked for
    TIME_LIMIT = "time_limit"  # stopped by the time limit with an incumbent
    FALLBACK = "fallback"  # the solver gave nothing usable: the greedy selection is returned


class IlpSource(StrEnum):
    """Which selection was returned."""

    ILP = "ilp"
    GREEDY = "greedy"


STATUSES = tuple(s.value for s in IlpStatus)


@dataclass(frozen=True)
class ModelSizes:
    """The e-graph before pruning, and the 0-1 program built from what survived it."""

    classes: int  # e-classes of the serialized e-graph
    enodes: int
    free_classes: int  # fixed to a zero-cost e-node before the model is built
    ilp_classes: int  # e-classes left to decide
    ilp_enodes: int  # binary columns
    dominated: int  # e-nodes dropped because another e-node of their class is never worse
    cyclic_classes: int  # e-classes in an SCC of size > 1: each has an order column
    sccs: int  # SCCs of size > 1
    mandatory_classes: int  # e-classes every selection must pick
    strengthened: int  # (e-node, needed class) pairs added by the must-need sets
    rows: int
    cols: int
    parts: int = 1  # independent programs the columns fall into (solved one by one)
    largest_part: int = 0  # columns of the largest


@dataclass
class IlpResult:
    """``objective`` is the returned selection's DAG cost, ``bound`` a proved lower bound on the optimum
    (None if unknown), ``gap`` = (objective - bound) / objective; ``message`` says why the solver's answer
    was not used when ``status`` is ``FALLBACK``.
    """

    selection: dict[str, ENode]
    status: IlpStatus
    objective: float
    bound: float | None
    gap: float | None
    seconds: float
    source: IlpSource
    greedy_objective: float | None = None
    sizes: ModelSizes | None = None
    message: str = ""
