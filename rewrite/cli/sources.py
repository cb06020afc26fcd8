"""What a graph argument names: a built-in model, ``FILE.py:FACTORY``, an ``.onnx`` file or a saved graph.

A torch model comes with its module and example inputs (``--run`` checks against them); a graph
read from a file gets a torch module built from the graph itself (``to_torch``) and random inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.models import MODELS, load_spec
from rewrite.frontends import from_torch, to_torch
from rewrite.frontends.onnx import load
from rewrite.ir.graph import Graph

FILE_SUFFIXES = (".onnx", ".eqsat")


@dataclass
class Source:
    name: str
    graph: Graph
    module: Any
    inputs: tuple[Any, ...]


def read_source(spec: str) -> Source:
    """Load ``spec``; errors are ``UsageError``/``FrontendError`` lines naming the file or model."""
    if spec not in MODELS and spec.endswith(FILE_SUFFIXES) and ":" not in spec:
        graph = load(spec)
        inputs = tuple(graph.random_inputs().values())
        return Source(graph.name, graph, to_torch(graph), inputs)
    name, module, inputs = load_spec(spec)
    # the CLI built the module and never changes it: the graph shares its weights (one copy in memory)
    return Source(name, from_torch(module, inputs, name=name, share_weights=True), module, inputs)
