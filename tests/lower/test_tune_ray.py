"""Tuning across a Ray cluster: a head and a worker node started on 127.0.0.1 as their own processes (one
CPU each), candidates measured on both, and the worker node killed mid-run: the run finishes on the head
node, its lost batch measured again, every record valid."""

from __future__ import annotations

import warnings

import pytest

ray = pytest.importorskip("ray")

from lower import parse_target  # noqa: E402
from lower.tune import records  # noqa: E402
from lower.tune.runners import LocalCluster, RayRunner  # noqa: E402
from lower.tune.search import TuneOptions, tune  # noqa: E402
from lower.tune.space import tasks_of  # noqa: E402
from rewrite.ir.errors import TuningWarning  # noqa: E402
from tests.lower.test_tune import _graph  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.cpu_form]


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """A head and a worker node, one CPU each, on this machine (``LocalCluster``), with a fresh cache folder."""
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path / "cache"))
    records.forget()
    with LocalCluster(nodes=2, cpus=1) as c:
        yield c
    records.forget()


def test_tunes_across_two_nodes_and_survives_losing_one(cluster):
    tasks = tasks_of(_graph(), parse_target("llvm", 1), "g")
    runner = RayRunner(threads=1, pin_cores=True)
    assert runner.slots == 2
    rep = tune(tasks, TuneOptions(trials=24, batch=4), runner)
    assert rep.trials == 24 and rep.runner == "ray"
    assert all(k.status != "failed" for k in rep.kernels)
    # the worker node killed while batches are in flight: they are measured again on the head node
    killed = []

    def kill_once(done, total, what):
        if not killed and done >= 8:
            cluster.kill_node(1)
            killed.append(done)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep2 = tune(tasks, TuneOptions(trials=24 + 32, batch=4, seed=1), runner, progress=kill_once)
    runner.close()
    assert killed
    assert rep2.trials == 32 and rep2.known == 24
    assert rep2.retried >= 1 and runner.lost >= 1
    assert any(issubclass(w.category, TuningWarning) and "was lost" in str(w.message) for w in caught)
    # every record and trial written parses back; nothing damaged
    records.forget()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = records.trial_log().load()
        recs = records.store().load()
    assert sum(len(v) for v in log.values()) == 56
    for r in recs.values():
        assert r.seconds > 0 and r.default_seconds > r.seconds


def test_cli_tunes_on_a_local_cluster_it_starts_and_stops(capsys, tmp_path, monkeypatch):
    from tests.cli.test_cli_tune import NET
    from tests.misuse.test_cli import run

    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path / "cache"))
    records.forget()
    (tmp_path / "net.py").write_text(NET)
    rc, out, err = run(capsys, "tune", f"{tmp_path / 'net.py'}:make", "--imported", "--trials", "8", "--ray", "local:2")
    assert rc == 0, err
    assert "8 candidates measured this run (0 before)" in out and "on ray" in out
    assert not ray.is_initialized()  # the cluster it started is gone
    records.forget()
