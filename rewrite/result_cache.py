"""``optimize``'s answers kept on disk: the same graph, rules, limits and cost model give the same graph again
without loading, saturating or extracting (``results`` in the cache folder).

Saturation and extraction read a graph's structure, never its weights' values (``rewrite.egraph`` encodes
shapes, dtypes and weight names; ``rewrite.extract.decode`` binds the input's tensors by name).  So an entry
is keyed by the graph's text (``Graph.pretty``: ops, attributes, shapes, dtypes, wiring, weight names), the
rules (each one's patterns and guards), the limits, the extractor and its time limit, the cost model's key
(a compiled target's: its kind, threads, lowering digest and tuning records; the analytical model's: the
machine profile it prices with), every setting that changes a kernel or a price, and a digest of the source of
``rewrite``, ``costs`` and ``lower`` with the versions of egglog and HiGHS: any edit to the optimizer is another
key.  What is kept is the chosen graph's structure (or that the input was kept) and the figures of
the run that found it (saturation, extraction, costs); a later call rebinds the weights of the graph it was
given, and verifies and run-checks it as always (``stats.cached`` says the search was skipped).

Like inductor's FX graph cache, this is what makes a second ``optimize`` of a model in a new process cheap
(DenseNet-121: its load, saturation and extraction were 2.5-3.3 s of a warm optimize).  Only eqsat's own cost
models are keyed (``CompiledCost``, ``AnalyticalCost``: what a callable of the caller's prices
by cannot be known), and only saturation (``search="eqsat"``).  ``EQSAT_NO_CACHE`` or ``EQSAT_OPTIMIZE_CACHE=0``
turn it off.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import pickle
from dataclasses import dataclass, replace
from typing import Any

from costs.analytical import AnalyticalCost
from costs.compiled import CompiledCost
from lower import filecache
from lower.measure_graphs import lower_digest
from rewrite import config
from rewrite.ir.errors import EqsatError
from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.target import Target
from rewrite.results import IlpStats, SaturationStats
from rewrite.rulelang.syntax import Rule

VERSION = "optimize-result 1"  # bump when what an entry holds changes

# settings that change no price and no choice: where caches live, how many compile jobs, what is printed, the
# run check (it runs after the cached part, on every call), the tests' own
_OPERATIONAL = frozenset(
    {
        "EQSAT_CACHE_DIR",
        "EQSAT_NO_CACHE",
        "EQSAT_COMPILE_JOBS",
        "EQSAT_RUN_CHECK",
        "EQSAT_DEBUG",
        "EQSAT_TRACE",
        "EQSAT_UPDATE_SNAPSHOTS",
        "EQSAT_TEST_TARGET",
        "EQSAT_OPTIMIZE_CACHE",
    }
)


@dataclass(frozen=True)
class Stored:
    """One kept answer: the chosen graph's nodes and outputs (None: the input was kept), and the figures of the
    run that chose it."""

    nodes: tuple[Node, ...] | None
    outputs: tuple[Value, ...]
    saturation: SaturationStats
    cost_before: float
    cost_after: float
    cost_extracted: float
    extracted_dag_cost: float
    dropped: int
    ilp: IlpStats | None
    trace: tuple[tuple[float, float], ...]

    def graph(self, original: Graph) -> Graph:
        """The chosen graph with ``original``'s weights bound by name (``original`` itself when it was kept)."""
        if self.nodes is None:
            return original
        g = Graph(name=original.name)
        # decoded nodes are "extracted"; an input keeps its origin, the given graph's (by name), not the first one's
        origin = {n.attrs["name"]: n.origin for n in original.inputs}
        g.nodes = {
            n.id: replace(n, origin=origin.get(n.attrs["name"], n.origin)) if n.op == "input" else n for n in self.nodes
        }
        g.weights = {n.attrs["name"]: original.weights[n.attrs["name"]] for n in self.nodes if n.op == "weight"}
        g.outputs = list(self.outputs)
        g.validate()
        return g


@functools.cache
def _source_digest() -> str:
    """The optimizer's source (``rewrite``, ``costs``; ``lower`` through ``lower_digest``) and solver versions."""
    h = hashlib.sha256(filecache.source_digest("rewrite", "costs").encode())
    for dist in ("egglog", "highspy"):
        try:
            h.update(f"{dist}={importlib.metadata.version(dist)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{dist}=none".encode())
    h.update(lower_digest().encode())
    return h.hexdigest()


def enabled() -> bool:
    return config.OPTIMIZE_CACHE.flag() and not config.NO_CACHE.flag()


def _model_key(model: object) -> str | None:
    """What a cost model prices by, or None for one this cache cannot key: only eqsat's own two models, exactly
    (a subclass or any other callable may price by anything).  A compiled model: its key (target, lowering
    digest, tuning records), the cost table it reads, whether it measures what is missing, and its fallback
    (the analytical model, or not yet built: the analytical one then)."""
    if type(model) is AnalyticalCost:
        return f"analytical {model.profile!r}"
    if type(model) is CompiledCost and (model._fallback is None or type(model._fallback) is AnalyticalCost):
        return f"compiled {model.cost_key.cache_key} {model.cache.path} measure_missing={model.measure_missing}"
    return None


def _rule_text(r: Rule) -> str:
    return repr((r.name, r.family, r.lhs, r.rhs, r.guards, r.bidirectional, r.least))


def key(
    graph: Graph,
    rules: list[Rule],
    limits: Any,
    extractor: str,
    ilp_seconds: float,
    target: str | Target,
    model: object,
) -> str | None:
    """The entry's key for these arguments, or None when they cannot be cached (another cost model)."""
    priced = _model_key(model)
    if priced is None:
        return None
    settings = sorted((name, s.describe()) for name, s in config.SETTINGS.items() if name not in _OPERATIONAL)
    parts = [
        VERSION,
        _source_digest(),
        priced,
        target.cache_key if isinstance(target, Target) else f"kind {target}",
        repr(limits),
        f"{extractor} {ilp_seconds!r}",
        repr(settings),
        *map(_rule_text, rules),
        "--- graph",
        graph.pretty(),
    ]
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def read(k: str) -> Stored | None:
    """The entry for ``k``, or None (missing, damaged: ``filecache`` warns, or of another layout)."""
    blob = filecache.read(k, filecache.RESULTS)
    if blob is None:
        return None
    try:
        stored = pickle.loads(blob)
    except Exception:  # written by another version of the classes it holds: optimize again
        return None
    return stored if isinstance(stored, Stored) else None


def lookup(k: str, graph: Graph) -> tuple[Stored, Graph] | None:
    """The entry for ``k`` and its graph bound to ``graph``'s weights, or None (no entry, or one whose graph no
    longer builds: the caller optimizes again and rewrites it)."""
    stored = read(k)
    if stored is None:
        return None
    try:
        return stored, stored.graph(graph)
    except (EqsatError, KeyError):
        return None


def write(k: str, stored: Stored) -> None:
    filecache.write(k, pickle.dumps(stored, protocol=pickle.HIGHEST_PROTOCOL), filecache.RESULTS)


__all__ = ["Stored", "enabled", "key", "lookup", "read", "write"]
