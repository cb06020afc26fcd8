"""Benchmark models for eqsat (the TASO / Tensat benchmark suite, in PyTorch), and model loading.

``MODELS`` maps a model name to the module that defines its factory (a function
of the same name returning ``(module.eval(), example_inputs)``).  Factories are
deterministic (local ``torch.Generator``, seed 0), float32, for inference, and
use only the operations supported by eqsat's graph IR.

``load_spec`` is what the ``eqsat`` command calls for its MODEL argument: a
built-in name, or ``FILE.py:FACTORY``.

This module imports no torch itself: ``eqsat --help`` lists the names without it.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

from rewrite.ir.errors import UsageError

MODELS: dict[str, str] = {
    name: f"bench.models.{name}"
    for name in ("bert", "nasrnn", "resnext50", "nasneta", "squeezenet", "vgg19", "inceptionv3", "resnet50")
}


def load(name: str) -> tuple[Any, tuple[Any, ...]]:
    """Build benchmark model ``name``: ``(module, example_inputs)``; ``UsageError`` lists the known names."""
    if name not in MODELS:
        raise UsageError(f"unknown model {name!r}", hint=f"known models: {', '.join(MODELS)}")
    factory = getattr(importlib.import_module(MODELS[name]), name)  # deferred: the model files import torch
    module, inputs = factory()
    return module, tuple(inputs)


def load_spec(spec: str) -> tuple[str, Any, tuple[Any, ...]]:
    """``(name, module, example_inputs)`` for a built-in model name or ``FILE.py:FACTORY``.

    Raises ``UsageError`` (one line, with a hint) for an unknown name, a missing file or factory,
    or a factory that does not return ``(module, example_inputs)``.
    """
    if spec in MODELS:
        module, inputs = load(spec)
        return spec, module, inputs
    path, sep, factory = spec.rpartition(":")
    if not sep:
        if spec.endswith(".py"):
            raise UsageError(
                f"model file '{spec}' needs ':FACTORY'",
                hint=f"name the function that returns (module, example_inputs): {spec}:make_model",
            )
        raise UsageError(
            f"unknown model '{spec}'", hint=f"use one of {', '.join(MODELS)}, or FILE.py:FACTORY for your own model"
        )
    if not Path(path).is_file():
        raise UsageError(f"model file '{path}' does not exist")
    if not factory.isidentifier():
        raise UsageError(f"'{factory}' in '{spec}' is not a Python function name")
    mod_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if mod_spec is None or mod_spec.loader is None:
        raise UsageError(f"'{path}' cannot be imported as a Python file")
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    fn = getattr(mod, factory, None)
    if not callable(fn):
        raise UsageError(f"'{path}' has no function '{factory}'")
    out = fn()
    if not (isinstance(out, tuple) and len(out) == 2):
        raise UsageError(f"{spec} must return (module, example_inputs), got {type(out).__name__}")
    module, inputs = out
    return Path(path).stem, module, tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)


__all__ = ["MODELS", "load", "load_spec"]
