"""Measured costs: the SQLite cache (round trip, rebuilds, concurrent writers) and the torch target."""

import dataclasses
import multiprocessing as mp
import sqlite3

import pytest
import torch

from costs import measured
from costs.cache import CostCache, op_key
from costs.key import CostKey
from costs.measured import MeasuredCost, cached_entries, graph_configs, profile_graph, torch_target
from rewrite import GraphBuilder
from rewrite.ir.errors import UsageError
from rewrite.ir.ops import OPS
from rewrite.ir.target import KINDS, Target

FAST = {"warmup": 1, "repeats": 3}


class Counting:
    """A fake target that counts how often it is asked to measure."""

    def __init__(self) -> None:
        self.calls = 0
        self.targets = []

    def __call__(self, key, op, attrs, in_shapes, dtype="float32", warmup=5, repeats=20):
        self.calls += 1
        self.targets.append(key.target)
        return measured.Measurement(1e-6 * (1 + len(in_shapes)), repeats, 0.0)


@pytest.fixture
def counting(monkeypatch):
    fake = Counting()
    monkeypatch.setitem(KINDS, "torch", dataclasses.replace(KINDS["torch"], runner=fake))
    return fake


def _small_graph():
    torch.manual_seed(0)
    b = GraphBuilder("small")
    x = b.input("x", (4, 8))
    w = b.weight("w", torch.randn(8, 8))
    w2 = b.smul(w, scalar=0.5)  # weight-only: precomputed, never profiled
    h = b.relu(b.matmul(x, w2))
    return b.build([b.add(b.relu(b.matmul(h, w)), h)])


def test_cache_round_trip_across_instances(tmp_path, counting):
    path = tmp_path / "costs.sqlite"
    m1 = MeasuredCost(cache=path, measure_missing=True, **FAST)
    t = m1("matmul", {}, [(4, 8), (8, 8)])
    assert counting.calls == 1 and t == pytest.approx(3e-6)
    assert m1("matmul", {}, [(4, 8), (8, 8)]) == t and counting.calls == 1  # memory hit
    m2 = MeasuredCost(cache=path, measure_missing=True, **FAST)
    assert m2("matmul", {}, [(4, 8), (8, 8)]) == t
    assert counting.calls == 1 and m2.stats == {"hits": 1, "fallbacks": 0, "measured": 0}
    entries = cached_entries(path)
    assert len(entries) == 1 and entries[0]["op"] == "matmul" and entries[0]["in_shapes"] == [[4, 8], [8, 8]]
    assert "threads=" in entries[0]["target"]


def test_miss_uses_fallback_unless_measuring(tmp_path, counting):
    model = MeasuredCost(cache=tmp_path / "c.sqlite", fallback=lambda op, a, s, dtype="float32": 42.0)
    assert model("relu", {}, [(4,)]) == 42.0 and counting.calls == 0
    assert model.stats["fallbacks"] == 1 and len(model.missing) == 1
    assert model("weight", {"name": "w", "shape": (4,)}, []) == 0.0  # sources are free


def test_profile_graph_measures_each_configuration_once(tmp_path, counting):
    g = _small_graph()
    model = MeasuredCost(cache=tmp_path / "c.sqlite", **FAST)
    configs = graph_configs(g)
    assert sorted(c[0] for c in configs) == ["add", "matmul", "relu"]  # repeats merged, weight-only smul skipped
    seen = []
    assert profile_graph(g, model, on_progress=lambda d, t, k: seen.append((d, t, k))) == 3
    assert [s[:2] for s in seen] == [(1, 3), (2, 3), (3, 3)] and counting.calls == 3
    assert '"op":"matmul"' in seen[[c[0] for c in configs].index("matmul")][2]
    assert profile_graph(g, MeasuredCost(cache=tmp_path / "c.sqlite", **FAST)) == 0  # all cached
    assert counting.calls == 3
    model2 = MeasuredCost(cache=tmp_path / "c.sqlite")
    from costs.model import graph_cost

    assert graph_cost(g, model2) > 0 and model2.stats["fallbacks"] == 0


def test_fingerprint_mismatch_rebuilds(tmp_path):
    path = tmp_path / "c.sqlite"
    a = CostCache(path, machine="machine-a")
    a.put("t", op_key("relu", {}, [(4,)]), "relu", 1.0, 3)
    assert len(a) == 1
    with pytest.warns(UserWarning, match="machine"):
        b = CostCache(path, machine="machine-b")
    assert len(b) == 0 and len(b.moved_aside) == 1 and b.moved_aside[0].exists()
    assert "stale-machine" in b.moved_aside[0].name
    assert len(CostCache(path, machine="machine-b")) == 0  # the new file is now trusted as is
    # the old process notices it lost the file and stops writing to it
    with pytest.warns(UserWarning, match="another machine"):
        a.put("t", op_key("relu", {}, [(8,)]), "relu", 1.0, 3)
    assert a.disabled and len(CostCache(path, machine="machine-b")) == 0


def test_wrong_schema_rebuilds(tmp_path):
    path = tmp_path / "c.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE costs (k TEXT, v REAL)")
    con.execute("INSERT INTO costs VALUES ('x', 1.0)")
    con.commit()
    con.close()
    with pytest.warns(UserWarning, match="schema"):
        c = CostCache(path)
    assert len(c) == 0 and "stale-schema" in c.moved_aside[0].name
    c.put("t", "k", "relu", 2.0, 3)
    assert c.get("t", "k") == 2.0


def test_corrupted_file_rebuilds(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database\x00" * 300)
    with pytest.warns(UserWarning, match="corrupt"):
        c = CostCache(path)
    assert c.moved_aside and c.moved_aside[0].read_bytes().startswith(b"this is not")
    c.put("t", "k", "relu", 2.0, 3)
    assert CostCache(path).get("t", "k") == 2.0
    # a database whose pages were damaged after the header
    good = tmp_path / "d.sqlite"
    d = CostCache(good)
    d.put_many([("t", f"k{i}", "relu", 1.0, 3, None) for i in range(2000)])
    con = sqlite3.connect(good)  # move everything from the WAL into the main file, then damage its pages
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    raw = bytearray(good.read_bytes())
    raw[4096 : len(raw)] = b"\xff" * (len(raw) - 4096)
    good.write_bytes(bytes(raw))
    with pytest.warns(UserWarning, match="corrupt"):
        e = CostCache(good)
    assert len(e) == 0 and e.moved_aside


def _writer(path: str, who: int, n: int, barrier) -> None:
    barrier.wait()
    c = CostCache(path)
    for i in range(n):
        c.put("t", op_key("relu", {}, [(i,)]), "relu", float(who), 3)  # both write the same keys
        c.put("t", op_key("relu", {}, [(who, i)]), "relu", float(i), 3)


@pytest.mark.parametrize("start", ["fresh", "corrupt"])
def test_concurrent_writers_do_not_corrupt(tmp_path, start):
    path = str(tmp_path / "c.sqlite")  # both processes also race to create (or rebuild) it
    if start == "corrupt":
        (tmp_path / "c.sqlite").write_bytes(b"garbage" * 1000)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(path, w, 150, barrier)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    c = CostCache(path)
    assert not c.moved_aside
    assert len(list(tmp_path.glob("c.sqlite.stale-*"))) == (1 if start == "corrupt" else 0)  # rebuilt once
    keys = {e["key"] for e in c.entries()}
    assert len(keys) == 150 + 2 * 150
    assert all(c.get("t", op_key("relu", {}, [(i,)])) in (1.0, 2.0) for i in range(150))
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_measured_times_are_sane(tmp_path, one_thread):
    model = MeasuredCost(cache=tmp_path / "c.sqlite", measure_missing=True, warmup=2, repeats=7)
    small = model("matmul", {}, [(16, 16), (16, 16)])
    big = model("matmul", {}, [(256, 256), (256, 256)])
    assert 0 < small < 1 and 0 < big < 1  # their order is a timing fact: bench/fidelity measures that
    assert model("relu", {}, [(8, 4)]) > 0
    # every op of the registry can be measured on some valid configuration
    assert model("batchnorm", {}, [(1, 4, 3, 3), (4,), (4,), (4,), (4,)]) > 0
    assert model("conv2d", {"padding": (1, 1)}, [(1, 4, 6, 6), (4, 4, 3, 3)]) > 0
    assert model.stats["measured"] == 5


def test_thread_count_is_part_of_the_fingerprint(tmp_path, counting):
    before = torch.get_num_threads()
    try:
        model = MeasuredCost(cache=tmp_path / "c.sqlite", measure_missing=True, **FAST)
        torch.set_num_threads(1)
        model("relu", {}, [(4,)])
        assert "threads=1" in model.fingerprint and counting.calls == 1
        torch.set_num_threads(2)
        model("relu", {}, [(4,)])  # another thread count: another measurement
        assert "threads=2" in model.fingerprint and counting.calls == 2
        assert {e["target"].split("|")[1] for e in cached_entries(tmp_path / "c.sqlite")} == {"threads=1", "threads=2"}
    finally:
        torch.set_num_threads(before)


def test_machine_profile_cached_per_thread_count_and_corrupt_file_remeasured(tmp_path, monkeypatch):
    import torch

    from costs import machine

    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    calls = []
    real = machine.measure
    monkeypatch.setattr(machine, "measure", lambda: calls.append(1) or real(1))
    threads = torch.get_num_threads()
    try:
        a = machine.machine_profile()
        torch.set_num_threads(1 if threads != 1 else 2)
        b = machine.machine_profile()
        torch.set_num_threads(threads)
        assert machine.machine_profile() == a and len(calls) == 2 and a.fingerprint != b.fingerprint
        (tmp_path / "machine.json").write_text("{not json")
        assert machine.machine_profile().fingerprint == a.fingerprint and len(calls) == 3
    finally:
        torch.set_num_threads(threads)


def test_rows_are_keyed_by_an_explicit_target(tmp_path, counting):
    target = torch_target(1)
    assert target.cache_key == f"torch-cpu|threads=1|torch={torch.__version__}"
    model = MeasuredCost(target, cache=tmp_path / "c.sqlite", measure_missing=True, **FAST)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # an explicit target does not follow torch's thread count
        model("relu", {}, [(4,)])
        assert model.target is target and counting.targets == [target]
        assert [e["target"] for e in cached_entries(tmp_path / "c.sqlite")] == [target.cache_key]
    finally:
        torch.set_num_threads(before)
    with pytest.raises(UsageError, match="cannot measure on target kind 'tpu'"):
        MeasuredCost(Target("tpu"), cache=tmp_path / "c.sqlite")


def test_torch_runner_times_on_the_targets_threads(monkeypatch):
    seen = []
    relu = OPS["relu"]

    def ref(xs, attrs):
        seen.append(torch.get_num_threads())
        return relu.ref(xs, attrs)

    monkeypatch.setitem(measured.OPS, "relu", dataclasses.replace(relu, ref=ref))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        measured.run_torch_op(CostKey(torch_target(1)), "relu", {}, [(4,)], warmup=1, repeats=2)
        assert seen == [1, 1, 1] and torch.get_num_threads() == 2  # measured on 1 thread, then restored
    finally:
        torch.set_num_threads(before)


def test_machine_profile_keeps_each_quantity_fastest_round(monkeypatch):
    """A round slowed by another job (here round 2's matmul, round 1's copy) must not set the peak."""
    from costs import machine

    rounds = iter([[1e-3, 4e-3, 1e-6, 1e-6, 1e-6, 1e-6, 1e-3, 1e-3], [6e-3, 1e-3, 2e-6, 1e-6, 1e-6, 1e-6, 1e-3, 1e-3]])
    monkeypatch.setattr(machine, "_round", lambda: next(rounds))
    p = machine.measure(rounds=2)
    assert p.peak_flops == 2 * 512**3 / 1e-3 and p.bandwidth == 2 * 8 * 1024 * 1024 * 4 / 1e-3
    assert p.op_overhead == 1e-6
