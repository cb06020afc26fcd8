"""The bench scripts run and write what they promise (numbers themselves are for bench/, not tests)."""

import json

import numpy as np
import pytest
import torch

from bench.e2e import print_table
from bench.tensat_table import COLUMNS
from rewrite.cli import main


@pytest.mark.slow
def test_tensat_table_json_and_markdown(tmp_path, capsys):
    out, md = tmp_path / "t.json", tmp_path / "t.md"
    assert (
        main(
            [
                "bench",
                "--models",
                "nasrnn",
                "--repeats",
                "1",
                "--ilp-seconds",
                "5",
                "--json",
                str(out),
                "--markdown",
                str(md),
            ]
        )
        == 0
    )
    rows = json.loads(out.read_text())
    assert len(rows) == 1 and set(COLUMNS) <= set(rows[0])
    r = rows[0]
    assert r["verified"] is True and r["cost_after_ilp"] <= r["cost_after_greedy"] <= r["cost_before"]
    assert "| nasrnn |" in md.read_text()


@pytest.mark.slow
def test_fidelity_script(tmp_path, capsys):
    out = tmp_path / "f.json"
    assert (
        main(["bench", "fidelity", "--models", "nasrnn", "--per-model", "4", "--repeats", "2", "--json", str(out)]) == 0
    )
    data = json.loads(out.read_text())
    assert {"spearman", "median_rel_err", "candidates"} <= set(data) and data["candidates"] >= 2
    assert main(["bench", "--models", "nope"]) == 2


@pytest.mark.slow
def test_fidelity_script_compiled(tmp_path):
    out = tmp_path / "f.json"
    models = "nasrnn,shufflenet_v2"  # a benchmark model and a zoo one (bench.zoo: eqsat was not tuned for it)
    argv = ["bench", "fidelity", "--target", "llvm", "--models", models, "--per-model", "3", "--repeats", "2"]
    assert main([*argv, "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["target"] == "llvm" and data["cost_model"] == "compiled" and data["candidates"] >= 4
    for name in models.split(","):
        res = data["per_model"][name]
        assert len(res["predicted"]) == len(res["measured"]) == res["candidates"] and min(res["measured"]) > 0


def test_fidelity_names_the_models_it_knows(capsys):
    assert main(["bench", "fidelity", "--target", "llvm", "--models", "nasrnn,nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'nope'" in err and "full:mobilenet_v2" in err


def _row(model, threads, eqsat, ort, inductor, openvino=None, noopt=None):
    ms = {"eager": 10.0, "ort": ort, "openvino": openvino, "inductor": inductor, "noopt": noopt, "eqsat": eqsat}
    return {
        "model": model,
        "threads": threads,
        **{f"ms_{k}": v for k, v in ms.items()},
        **{f"iqr_{k}": None if v is None else [v, v] for k, v in ms.items()},
        "verified": True,
    }


def test_e2e_table_geomeans_and_worst_peer(capsys):
    print_table([_row("a", 1, 2.0, 4.0, None), _row("b", 1, 4.0, 2.0, 3.0)])
    out = capsys.readouterr().out
    assert "vs ort 1.00× (faster on 1/2)" in out  # geomean of 2 and 0.5
    assert "vs inductor 0.75× (faster on 0/1)" in out  # a peer missing on a model is left out, not zero
    assert "over 1.2× the best peer: b 2.00×" in out


def test_e2e_table_has_openvino_noopt_and_the_best_peer(capsys):
    """Every contender's column, each peer's ratio, best/eq (the fastest peer; eager and noopt are not peers),
    noopt/eq, and per thread count their geomeans and the models where the best peer beat eqsat."""
    rows = [
        _row("a", 1, 2.0, 4.0, 8.0, openvino=1.0, noopt=8.0),  # openvino is the best peer: best/eq 0.5
        _row("b", 1, 4.0, 16.0, 8.0, openvino=None, noopt=4.0),  # inductor is: 2.0
        _row("full:efficientnet_b0", 2, 1.0, 3.0, None, openvino=3.0, noopt=1.5),
    ]
    print_table(rows)
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split()
    for col in ("eager", "ort", "openvino", "inductor", "noopt", "eqsat"):
        assert col in head
    assert head[-6:] == ["ort/eq", "ov/eq", "ind/eq", "best/eq", "noopt/eq", "ok"]
    assert lines[1].split()[-6:] == ["2.00", "0.50", "4.00", "0.50", "4.00", "yes"]
    assert lines[2].split()[-6:] == ["4.00", "-", "2.00", "2.00", "1.00", "yes"]
    assert lines[3].startswith("full:efficientnet_b0   2 ")  # the model column as wide as the longest name
    one, one_noopt, two, two_noopt = lines[4:]
    assert "vs ort 2.83× (faster on 2/2)" in one and "vs openvino 0.50× (faster on 0/1)" in one
    assert "vs best peer 1.00× (faster on 1/2; best peer faster on 1/2)" in one
    assert "over 1.2× the best peer: a 2.00×" in one
    assert one_noopt.startswith("1 thread(s): geomean noopt/eqsat 2.00×") and "faster on 1/2" in one_noopt
    assert "vs best peer 3.00× (faster on 1/1; best peer faster on 0/1)" in two and "over 1.2×" not in two
    assert two_noopt.startswith("2 thread(s): geomean noopt/eqsat 1.50×")


def test_e2e_table_marks_rows_where_eqsat_returned_the_imported_graph(capsys):
    """Where the run check kept the imported graph, eqsat and noopt are one graph: its noopt/eq is marked."""
    kept = {**_row("a", 1, 2.0, 4.0, None, noopt=1.9), "imported_kept": True}
    print_table([kept, _row("b", 1, 2.0, 4.0, None, noopt=3.0)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-2:] == ["0.95=", "yes"] and lines[2].split()[-2:] == ["1.50", "yes"]
    assert "faster on 1/2; 1/2 the imported graph itself (=): two timings of one graph)" in lines[-1]


def test_e2e_table_leaves_out_columns_no_row_has(capsys):
    print_table([_row("a", 1, 2.0, 4.0, None)])
    out = capsys.readouterr().out
    head = out.splitlines()[0].split()
    assert "openvino" not in head and "noopt" not in head and head[-3:] == ["ort/eq", "best/eq", "ok"]
    assert "noopt/eqsat" not in out


def test_e2e_peers_and_the_full_zoo_group(monkeypatch, capsys):
    """``--peers openvino`` is a peer on llvm (tvm is not); the default times all three; ``--models full`` is
    every zoo model at deployment size, ``--models wide`` every architecture of the wide sweep."""
    from bench import e2e
    from bench.zoo.full import FULL
    from bench.zoo.wide import WIDE

    seen: list[tuple[str, list[str]]] = []

    def fake(name, threads, peers, repeats, cost):
        seen.append((name, list(peers)))
        return [dict(_row(name, threads[0], 1.0, 2.0, 2.0), notes=[])]

    monkeypatch.setattr(e2e, "run_model", fake)
    assert main(["bench", "e2e", "--models", "nasrnn", "--threads", "1", "--peers", "openvino"]) == 0
    assert main(["bench", "e2e", "--models", "nasrnn", "--threads", "1"]) == 0
    assert seen == [("nasrnn", ["openvino"]), ("nasrnn", ["eager", "ort", "openvino", "inductor"])]
    assert main(["bench", "e2e", "--peers", "openvino,tvm"]) == 2
    full = [f"full:{k}" for k in FULL]
    assert e2e.model_args("full") == full and len(full) >= 9
    assert e2e.model_args("nasrnn,full") == ["nasrnn", *full]
    wide = [f"wide:{k}" for k in WIDE]
    assert e2e.model_args("wide") == wide and len(wide) == 28
    assert e2e.model_args("wide:poolformer,full:bert") == ["wide:poolformer", "full:bert"]


def test_e2e_peer_outputs_are_checked_before_timing(capsys):
    """A peer whose outputs differ from eager's is not timed: one warning line, no column."""
    from bench import e2e

    ref = [torch.ones(3)]
    good = e2e._checked("ort", lambda: [np.ones(3, dtype=np.float32) * (1 + 1e-5)], ref)
    assert good is not None and e2e._checked("openvino", lambda: (np.full(3, 1.1, dtype=np.float32),), ref) is None
    assert e2e._checked("inductor", lambda: torch.ones(4), ref) is None
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("  openvino: differs from eager") and "not timed" in err[0]


def test_e2e_openvino_runner_matches_eager():
    """OpenVINO converted and compiled as the bench does (f32, one thread) computes what eager does."""
    pytest.importorskip("openvino")
    from bench import e2e

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    x = torch.randn(4, 16)
    run = e2e.openvino_runner(m, (x,), 1)
    assert run is not None
    (out,) = e2e._tensors(run())
    with torch.no_grad():
        torch.testing.assert_close(out, m(x), rtol=1e-5, atol=1e-5)
    assert e2e.openvino_config(3)["INFERENCE_NUM_THREADS"] == 3


def test_e2e_openvino_converts_the_onnx_export_where_its_pytorch_frontend_fails(monkeypatch, capsys):
    """A model OpenVINO's PyTorch frontend refuses (as it refuses Hugging Face GPT-2's cache) is converted from
    its ONNX export, with one line saying so, and computes what eager does; where the export fails too, the
    PyTorch frontend's error is the one raised."""
    ov = pytest.importorskip("openvino")
    from bench import e2e

    real = ov.convert_model
    seen: list[str] = []

    def pytorch_frontend_refuses(model, **kw):
        seen.append(type(model).__name__)
        if isinstance(model, torch.nn.Module):
            raise RuntimeError("OpConversionFailure: cat of a tensor list\nmore detail")
        return real(model, **kw)

    monkeypatch.setattr(ov, "convert_model", pytorch_frontend_refuses)
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    x = torch.randn(4, 16)
    run = e2e.openvino_runner(m, (x,), 1)
    assert run is not None and seen == ["Sequential", "str"]  # the module, then the ONNX file's path
    (out,) = e2e._tensors(run())
    with torch.no_grad():
        torch.testing.assert_close(out, m(x), rtol=1e-5, atol=1e-5)
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "  openvino: PyTorch frontend failed (RuntimeError: OpConversionFailure: cat of a tensor list); "
        "converted from the ONNX export"
    ]

    def no_export(*a, **kw):
        raise RuntimeError("exporter refused")

    monkeypatch.setattr(torch.onnx, "export", no_export)
    with pytest.raises(RuntimeError, match="cat of a tensor list"):
        e2e.openvino_convert(m, (x,))


def test_e2e_names_an_asked_for_peer_whose_package_is_missing(monkeypatch):
    """A peer asked for whose package is not installed gets one line naming the package and the extra that
    installs it (its column is left out, as before, but no longer silently); installed ones and inductor none."""
    import importlib.util

    from bench import e2e

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openvino" else real(name, *a))
    assert e2e.missing_peers(["eager", "ort", "openvino", "inductor"]) == [
        "bench e2e: peer openvino needs the openvino package (pip install -e '.[bench]'); its column is left out"
    ]
    assert e2e.missing_peers(["ort", "inductor"]) == []


def test_e2e_rejects_bad_arguments(capsys):
    assert main(["bench", "e2e", "--peers", "tvm"]) == 2
    assert main(["bench", "e2e", "--threads", "0"]) == 2
    assert "unknown peer" in capsys.readouterr().err


def test_e2e_times_each_model_in_its_own_process(monkeypatch, tmp_path, capsys):
    """Several models: one process each (``run_model_apart``), unless ``--in-process``; a process that writes
    no rows stops the bench with a one-line error naming the model."""
    from bench import e2e

    calls: list[tuple[str, str]] = []

    def fake(how):
        def run(name, threads, peers, repeats, cost):
            calls.append((how, name))
            return [dict(_row(name, threads[0], 1.0, 2.0, 2.0), notes=[])]

        return run

    monkeypatch.setattr(e2e, "run_model", fake("here"))
    monkeypatch.setattr(e2e, "run_model_apart", fake("apart"))
    out = tmp_path / "rows.json"
    assert main(["bench", "e2e", "--models", "nasrnn,bert", "--threads", "1", "--json", str(out)]) == 0
    assert calls == [("apart", "nasrnn"), ("apart", "bert")] and len(json.loads(out.read_text())) == 2
    calls.clear()
    assert main(["bench", "e2e", "--models", "nasrnn,bert", "--threads", "1", "--in-process"]) == 0
    assert main(["bench", "e2e", "--models", "bert", "--threads", "1"]) == 0  # one model: no second process
    assert calls == [("here", "nasrnn"), ("here", "bert"), ("here", "bert")]

    def broken(name, *a):
        raise RuntimeError(f"bench e2e: the process timing {name} wrote no rows (exit status 1)")

    monkeypatch.setattr(e2e, "run_model_apart", broken)
    capsys.readouterr()
    assert main(["bench", "e2e", "--models", "nasrnn,bert", "--threads", "1"]) == 1
    assert "the process timing nasrnn wrote no rows" in capsys.readouterr().err


@pytest.mark.slow
def test_e2e_model_in_its_own_process_reads_back_its_rows():
    from bench.e2e import run_model_apart

    (row,) = run_model_apart("nasrnn", [1], [], repeats=1)
    assert row["model"] == "nasrnn" and row["verified"] is True and row["ms_ort"] is None


@pytest.mark.slow
def test_e2e_json_schema(tmp_path):
    out = tmp_path / "e2e.json"
    assert main(["bench", "e2e", "--models", "nasrnn", "--threads", "1", "--repeats", "1", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())
    for key in ("model", "threads", "ms_eager", "ms_ort", "ms_inductor", "ms_eqsat", "verified"):
        assert key in row
    assert row["verified"] is True and row["threads"] == 1


SEARCH_KEYS = {
    "model",
    "enodes",
    "cost_before",
    "cost_eqsat_greedy",
    "cost_eqsat_ilp",
    "cost_backtrack_same_time",
    "cost_backtrack_10x",
    "ilp_gap",
    "seconds_saturate",
    "seconds_extract_ilp",
    "seconds_backtrack_to_best",
    "ms_original",
    "ms_eqsat_ilp",
    "ms_backtrack",
}


@pytest.mark.slow
def test_search_bench_json(tmp_path, capsys):
    out = tmp_path / "s.json"
    argv = ["bench", "search", "--models", "squeezenet", "--repeats", "1", "--max-seconds", "5", "--json", str(out)]
    assert main(argv) == 0
    rows = json.loads(out.read_text())
    assert len(rows) == 1 and SEARCH_KEYS <= set(rows[0])
    r = rows[0]
    assert r["verified"] is True and r["cost_eqsat_ilp"] <= r["cost_eqsat_greedy"] <= r["cost_before"]
    assert r["cost_backtrack_10x"] <= r["cost_before"] and r["published_tensat"] == 0.245
    assert "| squeezenet |" in capsys.readouterr().out


def test_e2e_takes_zoo_models_and_model_files(tmp_path):
    """Models eqsat was not tuned for are timed against the same peers: zoo names and FILE.py:FACTORY."""
    from bench import e2e

    spec = tmp_path / "mine.py"
    spec.write_text("def make():\n    raise AssertionError('not built while parsing')\n")
    rel = spec.relative_to(spec.anchor)
    got = e2e.model_args(f"nasrnn,mobilenet_v2,full:bert,/{rel}:make")
    assert got == ["nasrnn", "mobilenet_v2", "full:bert", f"{spec}:make"]
    assert e2e.short_name(got[2]) == "full:bert"
    assert e2e.short_name(got[3]) == "mine:make"
    with pytest.raises(ValueError, match="unknown model 'tvm'.*FILE.py:FACTORY"):
        e2e.model_args("tvm")


def test_full_size_zoo_builds_the_cnns_at_224():
    from bench.zoo.full import FULL

    assert {"mobilenet_v2", "efficientnet_b0", "bert", "gpt2", "llama", "vit", "convnext"} <= set(FULL)
    _, (x,) = FULL["shufflenet_v2"]()
    assert tuple(x.shape) == (1, 3, 224, 224)


def _tiny_mlp_file(tmp_path):
    spec = tmp_path / "tiny.py"
    spec.write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()\n"
        "    return m, (torch.randn(4, 16),)\n"
    )
    return f"{spec}:make"


def test_overhead_phase_splits_eqsat_stages_and_measures_only_when_cold(tmp_path, monkeypatch):
    """A cold cache measures the kernels extraction needs (and says how many, in what time); the same model on
    the filled cache measures none.  Every stage is there, and the peak memory of the process."""
    from bench import overhead

    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path / "cache"))
    spec = _tiny_mlp_file(tmp_path)
    cold = overhead.run_phase(spec, "cold", 1, [])
    warm = overhead.run_phase(spec, "warm", 1, [])
    for row in (cold, warm):
        assert all(row[k] >= 0 for k in overhead.STAGES) and row["peak_mb"] > 100
        assert row["total"] >= row["import"] + row["compile"] and row["kernels"] >= 1
    assert cold["measured_kernels"] > 0 and cold["measure"] > 0 and cold["peers"] == {}
    assert warm["measured_kernels"] == 0 and "peers" not in warm


def test_overhead_table_and_arguments(capsys):
    from bench import overhead

    stages = dict.fromkeys(overhead.STAGES, 1.0)
    cold = {"model": "m", "phase": "cold", **stages, "total": 7.0, "measured_kernels": 3, "peak_mb": 500.0}
    cold["peers"] = {"ort": {"build": 0.5}, "openvino": None, "inductor": {"build": 14.0}}
    warm = {**cold, "phase": "warm", "total": 4.0, "measured_kernels": 0}
    del warm["peers"]
    overhead.print_table([cold, warm], overhead.PEERS)
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[-4:] == ["0.50", "-", "14.00", "0.50"]  # ort, openvino (failed), inductor; 7 / 14
    assert out[2].split()[-1] == "0.29"  # warm: 4 / 14
    assert main(["bench", "overhead", "--peers", "tvm"]) == 2
    assert main(["bench", "overhead", "--threads", "0"]) == 2
    assert main(["bench", "overhead", "--models", "nope"]) == 2


@pytest.mark.slow
def test_overhead_runs_each_phase_in_a_process_of_its_own(tmp_path):
    out = tmp_path / "overhead.json"
    spec = _tiny_mlp_file(tmp_path)
    assert main(["bench", "overhead", "--models", spec, "--threads", "1", "--peers", "ort", "--json", str(out)]) == 0
    cold, warm = json.loads(out.read_text())
    assert (cold["phase"], warm["phase"]) == ("cold", "warm")
    assert cold["measured_kernels"] > 0 and warm["measured_kernels"] == 0
    assert cold["peers"]["ort"]["build"] > 0
