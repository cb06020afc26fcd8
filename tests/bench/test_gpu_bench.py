"""The cuda target's wiring without a GPU: compiled costs routed to the cuda runners and keyed per GPU,
``optimize --run cuda`` pricing with them, and ``bench e2e/kernels --target cuda`` / ``python -m bench.cuda``
(argument checks, the one-line "no CUDA" errors, and the JSON they write, through fake timers with the
module and kernels on the CPU)."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

import bench.cuda as bench_cuda
from bench import e2e, e2e_cuda, kernels
from bench.gpu_timing import back_to_back_ms, interleaved_ms
from costs.compiled import CompiledCost
from costs.measured import Measurement
from lower.cuda import cuda_target
from lower.cuda.measure import cost_key
from rewrite.cli import optimize as optimize_cli
from rewrite.ir.errors import LoweringError
from rewrite.ir.target import HALF_REL_TOL, KINDS
from rewrite.pipeline import compile as compile_llvm
from rewrite.pipeline import compiled_cost, default_cost_model

FAKE_GPU = cuda_target(
    "sm_90", name="cuda-fake-h100", versions=(("driver", "13000"), ("nvrtc", "13.0")), precision="tf32"
)
HAS_CUDA = torch.cuda.is_available()


@pytest.fixture
def fake_runners(monkeypatch, tmp_path):
    """The cuda and cuda-fused runners replaced by ones that record what they were asked for (rows cached
    in an empty directory)."""
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    calls: list[tuple[str, str, str]] = []

    def runner(seconds):
        def run(key, op, attrs, in_shapes, dtype="float32", warmup=3, repeats=15):
            calls.append((key.target.kind + "-fused" * key.fused, key.cache_key, op))
            return Measurement(seconds, repeats, 0.0)

        return run

    monkeypatch.setitem(
        KINDS, "cuda", dataclasses.replace(KINDS["cuda"], runner=runner(2e-5), fused_runner=runner(1e-6))
    )
    return calls


def test_compiled_costs_on_a_cuda_target_use_the_cuda_runners_keyed_by_the_gpu(fake_runners):
    model = compiled_cost(FAKE_GPU)
    assert isinstance(model, CompiledCost) and model.target.kind == "cuda" and model.measure_missing
    key = model.fingerprint
    for part in (
        "cuda-fake-h100",
        "arch=sm_90",
        "precision=tf32",
        "driver=13000",
        "nvrtc=13.0",
        "lower=",
        "runner=cuda-1",
    ):
        assert part in key
    assert model("matmul", {}, [(64, 32), (32, 16)]) == 2e-5  # an anchor: its own kernels
    assert model("relu", {}, [(64, 16)]) == 1e-6  # injective: what it adds fused into a neighbour
    assert model("reshape", {"shape": (16, 64)}, [(64, 16)]) == 0.0  # a view: no kernel, not measured
    assert [(k, op) for k, _, op in fake_runners] == [("cuda", "matmul"), ("cuda-fused", "relu")]
    assert fake_runners[0][1] == key and fake_runners[1][1] == key + "|fused"
    # the rows are cached under the GPU's key: a second model reads them without measuring
    again = compiled_cost(FAKE_GPU, measure_missing=False)
    assert again("matmul", {}, [(64, 32), (32, 16)]) == 2e-5 and again("relu", {}, [(64, 16)]) == 1e-6
    assert len(fake_runners) == 2 and again.stats["hits"] == 2
    # another GPU (or driver) is another set of rows
    other = compiled_cost(cuda_target("sm_90", name="cuda-fake-h200", versions=FAKE_GPU.versions))
    other("matmul", {}, [(64, 32), (32, 16)])
    assert len(fake_runners) == 3 and fake_runners[2][1] != key
    # so is the other precision: TF32 and exact FP32 kernels run at different speeds
    exact = compiled_cost(dataclasses.replace(FAKE_GPU, precision="fp32"))
    exact("matmul", {}, [(64, 32), (32, 16)])
    assert len(fake_runners) == 4 and "precision" not in fake_runners[3][1] and fake_runners[3][1] != key


def test_cuda_cost_key_keeps_the_target_and_refuses_other_kinds():
    key = cost_key(FAKE_GPU)
    assert key.target == FAKE_GPU and dict(key.versions)["runner"] == "cuda-1"  # kernels compile for the target
    with pytest.raises(Exception, match="'cuda' target"):
        cost_key(e2e.parse_target("llvm"))


def test_default_cost_model_for_cuda_is_compiled_and_needs_a_device(fake_runners):
    assert isinstance(default_cost_model(FAKE_GPU), CompiledCost)
    if not HAS_CUDA:
        with pytest.raises(LoweringError, match="needs a CUDA device") as e:
            default_cost_model("cuda")
        assert "\n" not in str(e.value)


def test_optimize_run_cuda_prices_with_compiled_costs_on_the_cuda_target(monkeypatch):
    asked: list[object] = []

    class Stop(Exception):
        pass

    def fake(target, threads=None, measure_missing=True):
        asked.append(target)
        raise Stop

    monkeypatch.setattr(optimize_cli, "compiled_cost", fake)
    for argv, want in (
        (["nasrnn", "--run", "cuda"], "cuda"),
        (["nasrnn", "--run", "llvm"], "llvm"),
        (["nasrnn", "--cost", "compiled"], "llvm"),
    ):
        with pytest.raises(Stop):
            optimize_cli.main(argv)
        assert asked.pop() == want


@pytest.mark.parametrize(
    ("main", "argv", "says"),
    [
        (e2e.main, ["--target", "cuda"], "bench e2e --target cuda needs"),
        (e2e.main, ["--target", "cuda", "--peers", "ort"], "unknown peer(s) ['ort']"),
        (e2e.main, ["--target", "cuda", "--models", "nope"], "unknown model 'nope'"),
        (e2e.main, ["--target", "cuda", "--repeats", "0"], "--repeats wants a positive integer"),
        (kernels.main, ["--target", "cuda"], "bench kernels --target cuda needs"),
        (bench_cuda.main, [], "make gpu-check) needs"),
        (bench_cuda.main, ["--peers", "ort"], "unknown peer(s) ['ort']"),
    ],
)
def test_cuda_benches_refuse_in_one_line(main, argv, says, capsys):
    if HAS_CUDA and "needs" in says:
        pytest.skip("a CUDA device is visible: nothing is missing")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err


def test_interleaved_timing_alternates_the_order_and_takes_medians():
    order: list[str] = []
    ms = {"a": iter([3.0, 1.0, 2.0, 9.0]), "b": iter([5.0, 6.0, 4.0, 5.0])}

    def timer(fn):
        name = fn()
        order.append(name)
        return next(ms[name])

    a, b = interleaved_ms([lambda: "a", lambda: "b"], repeats=4, warmup=1, timer=timer)
    assert order == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert (a.median, b.median) == (2.5, 5.0) and a.quartiles == (2.0, 3.0)


def test_back_to_back_timing_runs_each_block_of_calls_under_one_timer_and_reports_per_call():
    calls: list[str] = []
    block_ms = {"a": iter([30.0, 60.0, 90.0]), "b": iter([3.0, 3.0, 3.0])}

    def timer(fn):
        before = len(calls)
        fn()
        names = set(calls[before:])
        assert len(calls) - before == 3 and len(names) == 1  # one contender's whole block per timed run
        return next(block_ms[names.pop()])

    a, b = back_to_back_ms([lambda: calls.append("a"), lambda: calls.append("b")], rounds=2, calls=3, timer=timer)
    assert a.samples == (10.0, 20.0) and b.samples == (1.0, 1.0)  # per call; the warm-up block is untimed


def _tiny():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
    return module, (torch.randn(2, 8),)


@pytest.fixture
def on_cpu(monkeypatch):
    """``--target cuda`` run on the CPU: the module and tensors stay there, 'cuda' compiles for llvm, the GPU
    target is a fake one, and every timed run takes 1 ms."""
    for mod in (e2e_cuda, kernels):
        monkeypatch.setattr(mod, "DEVICE", "cpu")
        monkeypatch.setattr(mod, "parse_target", lambda t="llvm", threads=None: FAKE_GPU)
        monkeypatch.setattr(mod, "compile", lambda g, target="llvm", threads=None: compile_llvm(g, "llvm", threads=1))
    monkeypatch.setattr(bench_cuda, "parse_target", lambda t="llvm", threads=None: FAKE_GPU)
    monkeypatch.setattr(e2e, "load_model", lambda name: _tiny())
    monkeypatch.setattr(e2e, "MODELS", {"tiny": "tests"})
    monkeypatch.setattr(bench_cuda, "MODELS", {"tiny": "tests"})
    monkeypatch.setattr(bench_cuda, "cuda_missing", lambda what: None)
    monkeypatch.setattr(kernels, "CUDA_GEMM_SIZES", (64,))
    return lambda fn: (fn(), 1.0)[1]


def test_e2e_cuda_record_has_the_target_rows_and_geomeans(on_cpu, capsys):
    record = e2e_cuda.run_cuda(["tiny"], ["eager"], repeats=3, cost="analytical", imported=True, timer=on_cpu)
    assert record["target"] == FAKE_GPU.cache_key and record["gpu"] == "cuda-fake-h100"
    assert record["settings"]["tolerance"] == e2e_cuda.TF32_TOLERANCE and record["settings"]["cost"] == "analytical"
    (row,) = record["rows"]
    assert row["model"] == "tiny" and row["error"] is None
    assert row["verified"] and row["verified_imported"] and row["max_rel_err"] < 1e-5
    assert row["ms_eqsat"] == row["ms_eager"] == row["ms_imported"] == 1.0 and row["ms_inductor"] is None
    assert row["kernels"] >= 1 and row["ops_before"] >= row["ops_after"]
    s = record["summary"]
    assert s["verified"] == s["models"] == 1 and s["geomean_speedup_vs_eager"] == 1.0
    assert s["geomean_speedup_vs_inductor"] is None and s["faster_than_eager"] == "0/1"
    json.dumps(record)  # JSON-able as written
    e2e_cuda.print_cuda_table(record["rows"], record["gpu"])
    out = capsys.readouterr().out
    assert "tiny" in out and "correct 1/1" in out and "vs eager 1.00x" in out and "inductor" not in out


def test_gpu_check_writes_one_json_with_e2e_and_kernels(on_cpu, tmp_path, capsys):
    out = tmp_path / "cuda-fake.json"
    argv = ["--models", "tiny", "--peers", "eager", "--cost", "analytical", "--repeats", "2", "--quick"]
    assert bench_cuda.main([*argv, "--out", str(out)], timer=on_cpu) == 0
    record = json.loads(out.read_text())
    assert record["target"] == FAKE_GPU.cache_key and set(record) >= {"e2e", "kernels", "seconds"}
    assert record["e2e"]["rows"][0]["verified"]
    k = record["kernels"]
    assert set(k["gemm"]) == {"tf32_64", "fp32_64", "bfloat16_64", "float16_64"}
    assert k["gemm"]["tf32_64"]["ratio_vs_cublas"] == 1.0
    assert k["gemm"]["tf32_64"]["ratio_vs_cublas_loop"] == 1.0 and k["gemm"]["tf32_64"]["ours_loop_ms"] == 1.0 / 30
    assert k["gemm"]["fp32_64"]["max_rel_err"] < 1e-5
    chain = k["elementwise_chain"]
    assert chain["ops"] == 8 and chain["kernels"] == 1 and chain["pct_of_copy"] == 100.0  # one fused kernel
    assert chain["max_rel_err"] < 1e-5 and chain["copy_gbps"] == pytest.approx(2 * 4 * chain["n"] / 1e6)
    assert set(k["summary"]) == {
        "gemm64_tf32_ratio_vs_cublas",
        "gemm64_tf32_ratio_vs_cublas_loop",
        "gemm64_fp32_ratio_vs_cublas",
        "gemm64_bfloat16_ratio_vs_cublas",
        "gemm64_float16_ratio_vs_cublas",
        "chain_pct_of_copy",
    }
    for half in ("bfloat16", "float16"):  # half operands, float32 products and sums: as close as float32's
        assert k["gemm"][f"{half}_64"]["max_rel_err"] < 1e-5 and k["gemm"][f"{half}_64"]["ours_ms"] == 1.0
    assert f"wrote {out}" in capsys.readouterr().out


def test_e2e_cuda_in_bfloat16_checks_against_float32_and_torch_in_bfloat16(on_cpu):
    """``--dtype bfloat16``: the model and inputs converted, eqsat's error against the float32 model within twice
    torch's own bfloat16 error (or bfloat16's tolerance), both recorded."""
    record = e2e_cuda.run_cuda(["tiny"], ["eager"], repeats=2, cost="analytical", timer=on_cpu, dtype="bfloat16")
    (row,) = record["rows"]
    assert row["dtype"] == "bfloat16" and record["settings"]["dtype"] == "bfloat16"
    assert 0 < row["torch_rel_err"] < 1.6e-2 and row["verified"], row
    assert row["max_rel_err"] <= max(2 * row["torch_rel_err"], HALF_REL_TOL["bfloat16"])
    assert e2e.main(["--dtype", "float16", "--models", "tiny"]) == 2  # llvm runs float32 models
