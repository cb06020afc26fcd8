"""Each backend implements every math function the loop IR's ``call`` accepts (``lower.ir.MATH_FUNCS``, the
one list, and the integer ``INT_FUNCS``), and nothing else: a function added to the list without an LLVM
or CUDA implementation fails here, not in the middle of a compile."""

import pytest

from lower.cuda import tables as cuda_tables
from lower.ir import INT_FUNCS, MATH_FUNCS
from lower.ir.nodes import TRIG_FUNCS
from lower.llvm import tables as llvm_tables
from rewrite.ir.ops import OPS

# math functions a backend legitimately lacks, and why (none today)
NOT_IN_BACKEND: dict[str, dict[str, str]] = {"llvm": {}, "cuda": {}}


@pytest.mark.parametrize("backend,table", [("llvm", llvm_tables.MATH), ("cuda", cuda_tables.MATH)])
def test_backend_implements_exactly_the_math_functions(backend, table):
    wanted = set(MATH_FUNCS) | set(INT_FUNCS)
    missing = sorted(wanted - set(table) - set(NOT_IN_BACKEND[backend]))
    assert missing == [], f"{backend} has no implementation of {missing}"
    extra = sorted(set(table) - wanted)
    assert extra == [], f"{backend} implements {extra}, which lower.ir.MATH_FUNCS does not list"


def test_llvm_declares_what_its_math_functions_call():
    for fn, (_, helpers, decls) in llvm_tables.MATH.items():
        assert all(h in llvm_tables.HELPERS for h in helpers), fn
        assert all(d in llvm_tables.DECLS for d in decls), fn


def test_math_function_list_has_no_duplicates_and_trig_functions_are_registry_ops():
    assert len(set(MATH_FUNCS)) == len(MATH_FUNCS)
    assert set(TRIG_FUNCS) <= set(MATH_FUNCS) and set(TRIG_FUNCS) <= set(OPS)
