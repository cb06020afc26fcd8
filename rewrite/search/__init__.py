"""Backtracking search over concrete graphs (TASO / MetaFlow style), beside equality saturation.

It uses the same parsed ``Rule`` objects as saturation (``rewrite.rulelang``), with
the same matching semantics (``rewrite.rulelang.concrete``), and prices graphs
with the same cost models (``costs``).  The entry point is ``backtrack``:

    >>> from rewrite.ir.builder import GraphBuilder
    >>> from rewrite.rulelang.loader import load_rules
    >>> b = GraphBuilder(); x = b.input("x", (8, 8))
    >>> g = b.build([b.relu(b.relu(x))])
    >>> backtrack(g, load_rules(["algebra"]), max_expansions=20).graph.summary()
    {'relu': 1}

Layout: ``matching`` (where rules match: commutative variants, multi-pattern
joins), ``apply`` (planning and building one rewrite), ``hashing`` (structural
graph hashes), ``backtracking`` (the queue, budgets and the result record).
"""

from rewrite.search.backtracking import SearchProgress, SearchResult, SearchStop, backtrack
from rewrite.search.hashing import graph_hash

__all__ = ["SearchProgress", "SearchResult", "SearchStop", "backtrack", "graph_hash"]
