"""Each recipe's schedule is built once: kept in memory and on disk under a key of what the recipe reads."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from lower import filecache, parse_target
from lower.fusion import build_kernel, plan_fusion
from lower.schedule import cache, recipes
from rewrite.ir.builder import GraphBuilder


def _kernels(width: int = 48):
    b = GraphBuilder("g")
    x = b.input("x", (8, 32))
    y = b.relu(b.matmul(x, b.weight("w", torch.randn(32, width))))
    g = b.build([b.sigmoid(b.add(y, y))])
    consts = g.weight_values(g.live())
    fusion = plan_fusion(g, {v.node for v in consts})
    return [build_kernel(g, grp, consts, fusion.resolve, name=f"k{i}") for i, grp in enumerate(fusion.groups)]


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Recipe calls counted, an empty cache folder, nothing in memory."""
    calls = []

    def counting(*a):
        calls.append(a[0].name)
        return recipes.schedule_kernel(*a)

    monkeypatch.setattr(cache, "schedule_kernel", counting)
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EQSAT_NO_CACHE", raising=False)
    cache.clear_memo()
    yield calls
    cache.clear_memo()


def test_a_schedule_is_the_recipes_and_is_built_once(counted, tmp_path):
    target = parse_target("llvm", 1)
    built = _kernels()
    first = [cache.cached_schedule(bk.kernel, bk.gemm, bk.const_names, target) for bk in built]
    assert len(counted) == len(built) and all(s is not None for s in first)
    for bk, s in zip(built, first):
        direct = recipes.schedule_kernel(bk.kernel, bk.gemm, bk.const_names, target)
        assert s.kernel.name == bk.kernel.name and str(s.kernel) == str(direct.kernel) and s.steps == direct.steps
    assert len(list((tmp_path / "schedules").rglob("*.pkl"))) == len(built)

    # the same kernels under other names (another graph's numbering): from memory, renamed
    again = [
        cache.cached_schedule(dataclasses.replace(bk.kernel, name=f"other{i}"), bk.gemm, bk.const_names, target)
        for i, bk in enumerate(built)
    ]
    assert len(counted) == len(built)
    assert [s.kernel.name for s in again] == [f"other{i}" for i in range(len(built))]
    assert [str(s.kernel).split("(", 1)[1] for s in again] == [str(s.kernel).split("(", 1)[1] for s in first]

    # a new process (memory empty): from disk
    cache.clear_memo()
    disk = [cache.cached_schedule(bk.kernel, bk.gemm, bk.const_names, target) for bk in built]
    assert len(counted) == len(built) and [str(s.kernel) for s in disk] == [str(s.kernel) for s in first]


def test_what_the_recipe_reads_is_in_the_key(counted):
    one, two = parse_target("llvm", 1), parse_target("llvm", 2)
    (bk, *_), (wide, *_) = _kernels(48), _kernels(64)
    keys = {
        cache.schedule_key(bk.kernel, bk.gemm, bk.const_names, one),
        cache.schedule_key(bk.kernel, bk.gemm, bk.const_names, two),  # threads
        cache.schedule_key(bk.kernel, bk.gemm, set(), one),  # B not a constant: no packing at compile time
        cache.schedule_key(wide.kernel, wide.gemm, wide.const_names, one),  # shapes
    }
    assert len(keys) == 4


def test_a_damaged_entry_is_rebuilt_and_no_cache_keeps_nothing(counted, tmp_path, monkeypatch):
    target = parse_target("llvm", 1)
    bk = _kernels()[0]
    cache.cached_schedule(bk.kernel, bk.gemm, bk.const_names, target)
    (entry,) = (tmp_path / "schedules").rglob("*.pkl")
    entry.write_bytes(entry.read_bytes()[:-5])
    cache.clear_memo()
    monkeypatch.setattr(filecache, "_warned_dirs", set())
    with pytest.warns(Warning, match="damaged"):
        s = cache.cached_schedule(bk.kernel, bk.gemm, bk.const_names, target)
    assert s is not None and len(counted) == 2
    entry.unlink()
    cache.clear_memo()
    monkeypatch.setenv("EQSAT_NO_CACHE", "1")
    cache.cached_schedule(bk.kernel, bk.gemm, bk.const_names, target)
    cache.cached_schedule(bk.kernel, bk.gemm, bk.const_names, target)  # nor is anything kept in memory
    assert not list((tmp_path / "schedules").rglob("*.pkl")) and len(counted) == 4


def test_what_the_registry_tells_the_lowering_is_in_the_digest(monkeypatch):
    """An op's fusion role, cost class or packed operand decides what one kernel holds, so it keys cached
    schedules, measured costs and run checks beside ``lower``'s source (a blocked conv's packed operand once
    changed kernels under unchanged keys)."""
    from lower.measure_graphs import lower_digest
    from rewrite.ir.ops import OPS

    digest = lower_digest.__wrapped__  # uncached (once per process otherwise: the registry is whole on import)
    before = digest()
    monkeypatch.setitem(OPS, "conv2d_blocked", dataclasses.replace(OPS["conv2d_blocked"], packed_operand=0))
    assert digest() != before
    monkeypatch.undo()
    assert digest() == before
