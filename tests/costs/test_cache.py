"""The kernel and cost caches cannot hurt the process: damaged entries are rebuilt with one warning,
an unusable folder is reported, and two processes may fill one cache at once."""

import multiprocessing
import os
import random
import warnings
from pathlib import Path

import pytest
import torch

from costs.cache import CostCache
from lower import compile_graph, filecache
from lower.llvm import driver, jit
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import CacheWarning, ConfigError, UsageError


def _graph(tag: float = 1.0):
    b = GraphBuilder("cache")
    x = b.input("x", (9, 20))
    w = b.weight("w", torch.full((20, 7), tag))
    return b.build([b.relu(b.matmul(x, w))])


def _check(cg, g) -> None:
    x = g.random_inputs(0)
    (ref,) = g.run(x)
    (out,) = cg(x)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache folder and a JIT with nothing loaded, so every kernel is read from (or written to) disk.
    The launch driver is loaded first, in the process's own JIT: the native pool's workers run its code for
    the rest of the process, so the engine holding it must outlive the test (and it is not a kernel)."""
    driver._driver()
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EQSAT_NO_CACHE", raising=False)
    monkeypatch.setattr(jit, "_jits", {})
    monkeypatch.setattr(filecache, "_warned_dirs", set())
    return tmp_path


def _entries(root: Path) -> list[Path]:
    return sorted((root / "kernels").glob("*/*.o"))


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "random":
        path.write_bytes(random.Random(0).randbytes(len(data)))
    elif how == "flipped":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    else:  # cut short (a small kernel's whole entry may be under the length named: cut it in half then)
        path.write_bytes(data[: min(int(how), len(data) // 2)])


@pytest.mark.parametrize("how", ["0", "10", "1000", "random", "flipped"])
def test_a_damaged_kernel_entry_is_rebuilt_with_one_warning(fresh_cache, monkeypatch, how):
    g = _graph()
    _check(compile_graph(g), g)
    entries = _entries(fresh_cache)
    assert entries
    for p in entries:
        _damage(p, how)
    monkeypatch.setattr(jit, "_jits", {})  # forget the loaded code: the next compile reads the disk
    before = jit.STATS.compiled
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cg = compile_graph(g)
    _check(cg, g)
    damaged = [w for w in caught if issubclass(w.category, CacheWarning)]
    assert len(damaged) == len(entries), [str(w.message) for w in caught]  # one per damaged entry
    assert all("damaged" in str(w.message) for w in damaged)
    assert jit.STATS.compiled - before == len(entries)
    assert all(filecache.unframe(p.stem, p.read_bytes()) != p.read_bytes() for p in _entries(fresh_cache))
    monkeypatch.setattr(jit, "_jits", {})  # rewritten: a third compile reads them back with no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(compile_graph(g), g)


def test_an_entry_moved_to_another_key_is_refused():
    blob = filecache.frame("a" * 64, b"object code")
    assert filecache.unframe("a" * 64, blob) == b"object code"
    assert filecache.unframe("b" * 64, blob) == "written for another key"
    assert "format" in filecache.unframe("a" * 64, blob[:8] + b"\x09" + blob[9:])


def test_a_cache_folder_that_is_a_file_costs_one_warning_not_the_compile(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.setattr(jit, "_jits", {})
    monkeypatch.setattr(filecache, "_warned_dirs", set())
    g = _graph(2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _check(compile_graph(g), g)
        monkeypatch.setattr(jit, "_jits", {})
        _check(compile_graph(g), g)
    msgs = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(msgs) == 1 and "without a disk cache" in msgs[0], msgs


def test_an_unwritable_kernel_folder_costs_one_warning(fresh_cache, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filecache.tempfile, "mkstemp", refuse)  # tests may run as root: chmod would not refuse
    g = _graph(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _check(compile_graph(g), g)
    msgs = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(msgs) == 1 and "Permission denied" in msgs[0], msgs


def test_a_cost_cache_folder_that_is_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="cost cache .*file is not a folder") as e:
        CostCache(tmp_path / "file" / "costs.sqlite")
    assert isinstance(e.value, UsageError) and "\n" not in str(e.value)


def _compile_in_child(cache: str, seed: int) -> float:
    os.environ["EQSAT_CACHE_DIR"] = cache
    g = _graph(4.0)
    cg = compile_graph(g)
    x = g.random_inputs(seed)
    return float((cg(x)[0] - g.run(x)[0]).abs().max())


@pytest.mark.slow  # two fresh interpreters compiling: 4.5 s of the fast tier's 180 s budget
def test_two_processes_compile_the_same_kernels_into_one_cache(tmp_path):
    ctx = multiprocessing.get_context("spawn")  # a forked LLVM/torch would share their threads' state
    with ctx.Pool(2) as pool:
        errs = pool.starmap(_compile_in_child, [(str(tmp_path), 0), (str(tmp_path), 1)])
    assert max(errs) < 1e-4
    entries = _entries(tmp_path)
    assert entries and all(isinstance(filecache.unframe(p.stem, p.read_bytes()), bytes) for p in entries)
    assert not list((tmp_path / "kernels").glob("*/*.tmp"))  # no temporary file left behind
