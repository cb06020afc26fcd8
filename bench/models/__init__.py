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

from rewrite.ir.errors import EqsatError, UsageError

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

    Raises ``UsageError`` (one line, with a hint) for an unknown name, a folder, a missing file or factory,
    a file that does not import (a syntax error: its line; an exception: the file's line and the exception's
    first line), a factory that raises (the same), or one that does not return ``(module, example_inputs)``.
    ``FILE.py:FACTORY`` is named ``spec_name(spec)``: the file's stem and the factory.
    """
    if spec in MODELS:
        module, inputs = load(spec)
        return spec, module, inputs
    path, sep, factory = spec.rpartition(":")
    if not sep:
        if Path(spec).is_dir():
            raise UsageError(f"'{spec}' is a folder, not a model: give FILE.py:FACTORY, FILE.onnx or FILE.eqsat")
        if spec.endswith(".py"):
            raise UsageError(
                f"model file '{spec}' needs ':FACTORY'",
                hint=f"name the function that returns (module, example_inputs): {spec}:make_model",
            )
        raise UsageError(
            f"unknown model '{spec}'", hint=f"use one of {', '.join(MODELS)}, or FILE.py:FACTORY for your own model"
        )
    if Path(path).is_dir():
        raise UsageError(f"'{path}' is a folder, not a model file: give FILE.py:FACTORY")
    if not Path(path).is_file():
        raise UsageError(f"model file '{path}' does not exist: check the path in '{spec}'")
    if not factory.isidentifier():
        raise UsageError(f"'{factory}' in '{spec}' is not a Python function name: give FILE.py:FACTORY")
    mod_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if mod_spec is None or mod_spec.loader is None:
        raise UsageError(f"'{path}' cannot be imported as a Python file: give FILE.py:FACTORY")
    mod = importlib.util.module_from_spec(mod_spec)
    try:
        mod_spec.loader.exec_module(mod)
    except SyntaxError as e:  # the file's own line, not the importer's frames
        raise UsageError(f"{path}:{e.lineno}: syntax error in model file: {e.msg}; fix the file") from None
    except EqsatError:
        raise
    except Exception as e:
        raise UsageError(f"{_where(e, path)}: importing the model file raised {_first_line(e)}; fix the file") from None
    fn = getattr(mod, factory, None)
    if not callable(fn):
        raise UsageError(f"'{path}' has no function '{factory}': give FILE.py:FACTORY with a function of the file")
    try:
        out = fn()
    except EqsatError:
        raise
    except Exception as e:
        raise UsageError(f"{_where(e, path)}: {factory}() raised {_first_line(e)}; fix the factory") from None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise UsageError(f"{spec} must return (module, example_inputs), got {type(out).__name__}")
    module, inputs = out
    return spec_name(spec), module, tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)


def spec_name(spec: str) -> str:
    """The name a model goes by in tables and reports: a built-in's name; ``FILE.py:FACTORY``'s file stem and
    factory (``net.make``), so two factories of one file are told apart."""
    if spec in MODELS:
        return spec
    path, _, factory = spec.rpartition(":")
    return f"{Path(path).stem}.{factory}"


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _where(e: BaseException, path: str) -> str:
    """``path:line`` of the deepest frame of the traceback that is in ``path`` (where the user's code raised)."""
    target = Path(path).resolve()
    line = None
    tb = e.__traceback__
    while tb is not None:
        try:
            if Path(tb.tb_frame.f_code.co_filename).resolve() == target:
                line = tb.tb_lineno
        except OSError:
            pass
        tb = tb.tb_next
    return f"{path}:{line}" if line is not None else path


__all__ = ["MODELS", "load", "load_spec", "spec_name"]
