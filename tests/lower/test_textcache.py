"""A kernel's LLVM text is generated once: kept in memory and on disk under the kernel's exact contents."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from lower import filecache, parse_target
from lower.ir import Buffer, FloatImm, For, IntImm, Kernel, Store, Var
from lower.llvm import codegen, jit, textcache
from lower.runtime import compile_graph
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import CacheWarning

TARGET = parse_target("llvm", 1)


def _graph():
    b = GraphBuilder("g")
    x = b.input("x", (8, 32))
    one = b.relu(b.matmul(x, b.weight("w1", torch.randn(32, 32))))
    two = b.relu(b.matmul(x, b.weight("w2", torch.randn(32, 32))))  # a kernel like the first: one text for both
    return b.build([one, two])


def _fill(value: float, name: str = "k") -> Kernel:
    i, o = Var("i"), Buffer("o", (4,))
    return Kernel(name, [o], For(i, IntImm(4), Store(o, (i,), FloatImm(value))))


@pytest.fixture
def generated(monkeypatch, tmp_path):
    """Text generations counted, an empty cache folder, nothing in memory; kernels compiled one at a time (two
    threads asking for one text at once may both generate it: the same text, kept twice)."""
    calls = []

    def counting(kernel, target, name=None):
        calls.append(kernel.name)
        return codegen.kernel_module(kernel, target, name)

    monkeypatch.setattr(textcache, "kernel_module", counting)
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EQSAT_NO_CACHE", raising=False)
    monkeypatch.setenv("EQSAT_COMPILE_JOBS", "1")
    textcache.clear_memo()
    yield calls
    textcache.clear_memo()


def test_a_kernels_text_is_generated_once_and_read_back_from_disk(generated, tmp_path):
    g = _graph()
    feed = {"x": torch.randn(8, 32)}
    first = compile_graph(g, TARGET)
    assert first.kernels == 2 and generated == ["k0_matmul"]  # the two alike layers: one text
    made = len(generated)
    assert len(list((tmp_path / filecache.MODULES[0]).rglob("*" + filecache.MODULES[1]))) == made
    for bk in first.built:  # what is kept is what the code generator writes
        kept = textcache.module_text(bk.kernel, TARGET)
        assert kept == codegen.kernel_module(bk.kernel, TARGET, jit.PLACEHOLDER)
    assert len(generated) == made

    again = compile_graph(g, TARGET)  # this process: from memory
    assert len(generated) == made
    textcache.clear_memo()  # a new process: from disk
    disk = compile_graph(g, TARGET)
    assert len(generated) == made
    want = g.run(feed)
    for cg in (first, again, disk):
        for got, w in zip(cg(feed), want, strict=True):
            torch.testing.assert_close(got, w, rtol=1e-5, atol=1e-5)


def test_the_key_is_the_kernels_exact_contents_not_its_name(generated):
    keys = {textcache.text_key(_fill(v), TARGET) for v in (0.0, -0.0, 1.0, 1.0 + 2**-52)}
    assert len(keys) == 4  # floats to the bit
    assert textcache.text_key(_fill(1.0, "a"), TARGET) == textcache.text_key(_fill(1.0, "b"), TARGET)
    other = dataclasses.replace(TARGET, vector_width=8, name="llvm-narrow")
    assert textcache.text_key(_fill(1.0), TARGET) != textcache.text_key(_fill(1.0), other)
    # a node shared is not a node repeated (the code generator tells a reduction's accumulate by identity)
    i, o = Var("i"), Buffer("o", (4,))
    v = FloatImm(2.0)
    shared = Kernel("k", [o], For(i, IntImm(4), Store(o, (i,), v + v)))
    apart = Kernel("k", [o], For(i, IntImm(4), Store(o, (i,), FloatImm(2.0) + FloatImm(2.0))))
    assert textcache.text_key(shared, TARGET) != textcache.text_key(apart, TARGET)


def test_no_cache_generates_every_time_and_a_damaged_entry_is_made_again(generated, tmp_path, monkeypatch):
    k = _fill(3.0)
    text, _ = textcache.module_text(k, TARGET)
    assert generated == ["k"]
    (entry,) = (tmp_path / filecache.MODULES[0]).rglob("*" + filecache.MODULES[1])
    entry.write_bytes(entry.read_bytes()[:-3])
    textcache.clear_memo()
    with pytest.warns(CacheWarning, match="damaged"):
        assert textcache.module_text(k, TARGET)[0] == text
    assert generated == ["k", "k"]
    monkeypatch.setenv("EQSAT_NO_CACHE", "1")
    textcache.module_text(k, TARGET)
    textcache.module_text(k, TARGET)
    assert generated == ["k", "k", "k", "k"]


def test_a_kernel_that_cannot_be_pickled_is_generated_each_time(generated):
    class Four(int):  # a class defined in a function: pickle cannot name it
        pass

    i, o = Var("i"), Buffer("o", (4,))
    k = Kernel("odd", [o], For(i, IntImm(Four(4)), Store(o, (i,), FloatImm(1.0))))
    first = textcache.module_text(k, TARGET)
    assert textcache.module_text(k, TARGET) == first and generated == ["odd", "odd"]
