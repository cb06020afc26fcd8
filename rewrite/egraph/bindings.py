"""egglog's native bindings, loaded without the egglog package's Python layer.

eqsat drives egglog through ``egglog.bindings`` alone (text programs in, reports and JSON out).  Importing it
the usual way runs ``egglog/__init__.py`` first, which builds egglog's Python DSL and imports black and
OpenTelemetry: 0.4-0.6 s of every process's first ``optimize``, for nothing eqsat uses.  So the extension
module is loaded from the package's folder directly and entered in ``sys.modules`` as ``egglog.bindings``,
the name it was built for.  Should the egglog package be imported later (a user's own code), it finds the
same module there, and a one-shot import hook hangs it on the package as its ``bindings`` attribute, so
``egglog.bindings`` is one module however it is reached.  Any surprise falls back to the plain import.

    >>> EGraph().run_program(*EGraph().parse_program("(datatype T (A i64))")) == []
    True
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _AttachOnImport(importlib.abc.MetaPathFinder):
    """When the egglog package is imported after its bindings were loaded alone, give it the loaded module."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "egglog":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _WithBindings(spec.loader)
        return spec


class _WithBindings(importlib.abc.Loader):
    def __init__(self, real: importlib.abc.Loader) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.bindings = sys.modules["egglog.bindings"]  # type: ignore[attr-defined]
        self.real.exec_module(module)


def _load() -> ModuleType:
    if "egglog.bindings" in sys.modules:
        return sys.modules["egglog.bindings"]
    if "egglog" not in sys.modules:
        try:
            spec = importlib.util.find_spec("egglog")
            folder = Path(next(iter(spec.submodule_search_locations or ()))) if spec else None
            found = sorted(folder.glob("bindings.*")) if folder else []
            native = [p for p in found if p.suffix in (".so", ".pyd")]
            if native:
                loader = importlib.machinery.ExtensionFileLoader("egglog.bindings", str(native[0]))
                mspec = importlib.util.spec_from_file_location("egglog.bindings", native[0], loader=loader)
                if mspec is not None:
                    module = importlib.util.module_from_spec(mspec)
                    sys.modules["egglog.bindings"] = module
                    try:
                        loader.exec_module(module)
                    except BaseException:
                        del sys.modules["egglog.bindings"]
                        raise
                    sys.meta_path.insert(0, _AttachOnImport())
                    return module
        except (ImportError, OSError, StopIteration):
            pass
    import egglog.bindings as module

    return module


if TYPE_CHECKING:  # the types as egglog declares them
    from egglog.bindings import (
        Call,
        EggSmolError,
        EGraph,
        IterationReport,
        Lit,
        PanicSpan,
        PrintAllFunctionsSize,
        RunReport,
        Var,
    )
else:
    _bindings = _load()
    Call, Lit, Var, PanicSpan = _bindings.Call, _bindings.Lit, _bindings.Var, _bindings.PanicSpan
    EGraph, EggSmolError, IterationReport = _bindings.EGraph, _bindings.EggSmolError, _bindings.IterationReport
    PrintAllFunctionsSize, RunReport = _bindings.PrintAllFunctionsSize, _bindings.RunReport

__all__ = [
    "Call",
    "EGraph",
    "EggSmolError",
    "IterationReport",
    "Lit",
    "PanicSpan",
    "PrintAllFunctionsSize",
    "RunReport",
    "Var",
]
