"""Random extraction: distinct, valid candidate graphs drawn from one e-graph.

``random_select`` is the randomized sibling of ``greedy.select``: it walks down
from the roots, tries each e-class's e-nodes in a random order (or the
preferred one first, with probability ``1 - p_random``), and backtracks to the
next e-node whenever a choice would close a cycle or reach an e-class with no
usable e-node.  It is iterative, so deep e-graphs do not hit Python's
recursion limit.  ``sample_graphs`` decodes distinct selections into graphs,
which is what a cost model's ranking fidelity is measured on.

    >>> # graphs = sample_graphs(data, original, 20, seed=0)
"""

from __future__ import annotations

import random
from typing import Any

from rewrite.extract.decode import to_graph
from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.greedy import ExtractionError


def random_select(
    data: EGraphData, rng: random.Random, prefer: dict[str, ENode] | None = None, p_random: float = 1.0
) -> dict[str, ENode]:
    """A random acyclic selection reachable from the roots.

    With ``prefer`` (e.g. the greedy choice), each e-class takes its preferred e-node first with
    probability ``1 - p_random`` and a uniformly shuffled order otherwise.
    """
    done: dict[str, ENode] = {}
    on_path: set[str] = set()

    def candidates(cid: str) -> list[ENode]:
        nodes = list(data.classes.get(cid, []))
        rng.shuffle(nodes)
        if prefer is not None and cid in prefer and rng.random() >= p_random:
            p = prefer[cid]
            nodes = [p] + [n for n in nodes if n.id != p.id]
        return nodes

    for root in data.roots:
        if root in done:
            continue
        # frame: [class, candidate e-nodes, candidate index, child index]
        stack: list[list[Any]] = [[root, candidates(root), 0, 0]]
        on_path.add(root)
        while stack:
            f = stack[-1]
            cid, cands, ci, ki = f
            if ci >= len(cands):  # every e-node of this class fails here: so does the parent's candidate
                stack.pop()
                on_path.discard(cid)
                if not stack:
                    raise ExtractionError(f"no acyclic, well-formed term for output e-class {root}")
                stack[-1][2] += 1
                stack[-1][3] = 0
                continue
            n = cands[ci]
            if ki == len(n.children):
                done[cid] = n
                stack.pop()
                on_path.discard(cid)
                if stack:
                    stack[-1][3] += 1
                continue
            child = n.children[ki]
            if child in done:
                f[3] += 1
            elif child in on_path:
                f[2] += 1
                f[3] = 0
            else:
                on_path.add(child)
                stack.append([child, candidates(child), 0, 0])
    return reachable(data, done)


def reachable(data: EGraphData, sel: dict[str, ENode]) -> dict[str, ENode]:
    """The part of a selection the roots reach (abandoned candidates can leave other classes behind)."""
    out: dict[str, ENode] = {}
    stack = list(data.roots)
    while stack:
        c = stack.pop()
        if c in out:
            continue
        out[c] = sel[c]
        stack.extend(k for k in sel[c].children if k not in out)
    return out


def sample_selections(
    data: EGraphData,
    n: int,
    seed: int = 0,
    prefer: dict[str, ENode] | None = None,
    p_random: float = 1.0,
    max_tries: int | None = None,
) -> list[dict[str, ENode]]:
    """Up to ``n`` distinct random selections (fewer if the e-graph has fewer, or ``max_tries`` runs out)."""
    rng = random.Random(seed)
    seen: set[frozenset[str]] = set()
    out: list[dict[str, ENode]] = []
    for _ in range(max_tries if max_tries is not None else 20 * n):
        if len(out) >= n:
            break
        sel = random_select(data, rng, prefer, p_random)
        sig = frozenset(x.id for x in sel.values())
        if sig not in seen:
            seen.add(sig)
            out.append(sel)
    return out


def sample_graphs(
    data: EGraphData,
    original: Any,
    n: int,
    seed: int = 0,
    prefer: dict[str, ENode] | None = None,
    p_random: float = 1.0,
    max_tries: int | None = None,
) -> list[Any]:
    """Up to ``n`` distinct candidate graphs of the e-graph, decoded against ``original`` (its weights)."""
    return [to_graph(data, sel, original) for sel in sample_selections(data, n, seed, prefer, p_random, max_tries)]
