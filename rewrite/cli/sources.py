"""What a graph argument names: a built-in model, ``FILE.py:FACTORY``, an ``.onnx`` file or a saved graph.

A torch model comes with its module and example inputs (``--run`` checks against them); a graph
read from a file gets a torch module built from the graph itself (``to_torch``) and random inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx

from bench.models import MODELS, load_spec
from rewrite.frontends import from_torch, to_torch
from rewrite.frontends.onnx import load
from rewrite.ir.errors import UsageError
from rewrite.ir.graph import Graph

FILE_SUFFIXES = (".onnx", ".eqsat")


@dataclass
class Source:
    name: str
    graph: Graph
    module: Any
    inputs: tuple[Any, ...]


# graph names exporters write when the user named nothing: such a graph is named after its file instead
DEFAULT_GRAPH_NAMES = frozenset({"", "main_graph", "torch_jit", "torch-jit-export", "graph", "onnx", "model"})


def check_model_file(spec: str) -> None:
    """Refuse, as a usage error (exit 2), a graph file that is missing, a folder, unreadable or empty:
    before the ONNX loader sees it (which would say 'no outputs' for an empty file)."""
    p = Path(spec)
    if p.is_dir():
        raise UsageError(f"'{spec}' is a folder, not a model file: give FILE.onnx or FILE.eqsat")
    if not p.is_file():
        raise UsageError(f"model file '{spec}' does not exist: check the path")
    try:
        with open(p, "rb") as f:
            empty = not f.read(1)
    except OSError as e:
        raise UsageError(f"model file '{spec}' cannot be read ({e.strerror or type(e).__name__})") from None
    if empty:
        raise UsageError(f"model file '{spec}' is empty (0 bytes): export the model again")


def check_model_spec(spec: str) -> None:
    """The checks of a MODEL argument that need no import (a file that is missing, a folder, empty; an unknown
    name): run before any work, so a typo costs nothing."""
    if spec in MODELS:
        return
    if spec.endswith(FILE_SUFFIXES) and ":" not in spec:
        check_model_file(spec)
        return
    path, sep, _ = spec.rpartition(":")
    if sep and Path(path).is_file():
        return
    load_spec(spec)  # raises the UsageError that names what is wrong (it imports nothing for these)


def onnx_output_names(spec: str) -> list[str] | None:
    """The graph output names of an ONNX file ``spec`` (read without its weights' external data), so an
    optimized model written back keeps them; ``None`` for any other source (its outputs were never named)."""
    if spec in MODELS or ":" in spec or not spec.lower().endswith(".onnx"):
        return None
    try:
        model = onnx.load(spec, load_external_data=False)
    except Exception:  # protobuf parse errors have no common base class; the import already read this file
        return None
    return [vi.name for vi in model.graph.output]


def read_source(spec: str, dims: Mapping[str, Sequence[int]] | None = None) -> Source:
    """Load ``spec``; errors are ``UsageError``/``FrontendError`` lines naming the file or model.  ``dims``
    (``--shape``): the sizes of an ONNX file's open dimensions (``from_onnx``); a model built here has none."""
    if spec not in MODELS and spec.endswith(FILE_SUFFIXES) and ":" not in spec:
        check_model_file(spec)
        graph = load(spec, dims)
        if graph.name.strip() in DEFAULT_GRAPH_NAMES:
            graph.name = Path(spec).stem
        inputs = tuple(graph.random_inputs().values())
        return Source(graph.name, graph, to_torch(graph), inputs)
    if dims:
        raise UsageError(
            f"--shape {', '.join(sorted(dims))}: '{spec}' is built with its example inputs' shapes; --shape sizes "
            "an ONNX file's open dimensions"
        )
    name, module, inputs = load_spec(spec)
    # the CLI built the module and never changes it: the graph shares its weights (one copy in memory)
    return Source(name, from_torch(module, inputs, name=name, share_weights=True), module, inputs)
