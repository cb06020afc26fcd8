"""``eqsat tune``: a model's kernels tuned from the command line, the table on stdout, records and trials in the
cache folder; bad arguments one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lower.tune import records
from tests.cli.test_cli_output import MODEL
from tests.misuse.test_cli import one_error, run

pytestmark = pytest.mark.cpu_form

NET = MODEL.replace(
    "torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU())",
    "torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), "
    "torch.nn.Linear(16 * 16 * 16, 64))",
).replace("torch.randn(1, 3, 6, 6)", "torch.randn(1, 3, 16, 16)")
assert NET != MODEL


@pytest.fixture
def factory(tmp_path: Path, monkeypatch) -> str:
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path / "cache"))
    records.forget()
    path = tmp_path / "net.py"
    path.write_text(NET)
    yield f"{path}:make"
    records.forget()


@pytest.mark.slow  # 5 s: an import, a search and a second run; the search itself is in tests/lower/test_tune.py
def test_tune_prints_a_table_and_logs_its_trials(capsys, factory, tmp_path):
    out_json = tmp_path / "tune.json"
    rc, out, err = run(
        capsys, "tune", factory, "--imported", "--trials", "12", "--threads", "1", "--json", str(out_json)
    )
    assert rc == 0, err
    assert "kernel" in out and "default us" in out and "12 candidates measured this run (0 before)" in out
    rep = json.loads(out_json.read_text())
    assert rep[0]["trials"] == 12 and rep[0]["threads"] == 1
    trials = (tmp_path / "cache" / "tuning" / records.TRIALS_FILE).read_text().splitlines()
    assert sum(len(json.loads(line)["trials"]) for line in trials) == 12
    # the same budget again: everything known, nothing measured
    rc, out, _ = run(capsys, "tune", factory, "--imported", "--trials", "12", "--threads", "1")
    assert rc == 0 and "0 candidates measured this run (12 before)" in out


def test_tune_refuses_bad_arguments_in_one_line(capsys, factory):
    rc, _, err = run(capsys, "tune", "no_such_model")
    assert rc == 2
    one_error(err, "no_such_model")
    rc, _, err = run(capsys, "tune", factory, "--trials", "0")
    assert rc == 2
    one_error(err, "--trials", "at least 1")


def test_model_check_takes_back_the_runs_records_when_the_model_runs_slower(monkeypatch, tmp_path):
    from lower import parse_target
    from lower.tune.search import KernelResult, TuneReport
    from lower.tune.space import tasks_of
    from rewrite.cli import tune as tune_cli
    from tests.lower.test_tune import _graph

    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path / "cache"))
    records.forget()
    g = _graph()
    t = next(t for t in tasks_of(g, parse_target("llvm", 1), "g") if t.gemm is not None and not t.gemm.direct)
    default = t.schedule()
    other = next(c for c in default.space["nc"].choices if c != default.decisions["nc"])
    records.store().add(records.Record(t.key, t.target.cache_key, t.name, {"nc": other}, 1e-4, 2e-4, 5))
    kept = KernelResult(t.name, t.key, 1, [], 2e-4, 1e-4, {"nc": other}, dict(default.decisions), status="tuned")
    report = TuneReport([kept], 5, 0, 1.0, "local", ["host"])
    monkeypatch.setattr(tune_cli, "CHECK_SLOWER", 0.0)  # never slower enough: kept
    check = tune_cli.model_check(g, 1, report)
    assert check is not None and check.reverted == 0 and check.speedup > 0
    assert records.store().get(t.key).decisions == {"nc": other}
    monkeypatch.setattr(tune_cli, "CHECK_SLOWER", 100.0)  # always slower: taken back
    check = tune_cli.model_check(g, 1, report)
    assert check is not None and check.reverted == 1 and "taken back" in check.line
    assert records.store().get(t.key).decisions == default.decisions and kept.status == "reverted"
    records.forget()
    assert records.store().get(t.key).decisions == default.decisions  # on disk too: the last line wins
    records.forget()
