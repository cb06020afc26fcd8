"""Target kinds are records (``rewrite.ir.target.TargetKind``): each shipped kind's lazy references resolve,
a new kind is declared by one record and the pipeline, the CLI and the schedules follow it, precision is a
field of the target (in its keys), and no pass branches on a kind's name."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

from lower import compile_graph, parse_target
from lower.backend import Backend
from lower.cuda import cuda_target
from lower.schedule.gpu_recipes import gpu_schedule
from lower.schedule.recipes import cpu_recipe
from rewrite.cli import optimize as optimize_cli
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import UsageError
from rewrite.ir.target import KINDS, Target, TargetKind, compiled_kinds, kind_of, resolve
from rewrite.pipeline import default_cost_model, default_rules
from rewrite.runcheck import host_for

ROOT = Path(__file__).resolve().parents[2]
LAZY = ("host", "backend", "cost_key", "runner", "fused_runner", "batch_runner", "recipe")


@pytest.mark.parametrize("name", ["llvm", "cuda", "torch"])
def test_each_shipped_kinds_references_resolve(name):
    kind = KINDS[name]
    for field in LAZY:
        ref = getattr(kind, field)
        if ref is not None:
            assert callable(resolve(ref)) or isinstance(resolve(ref), Backend), (name, field)
    assert kind.compiled == (name != "torch") and kind.default_precision in kind.precisions
    assert kind.tolerance(kind.default_precision) > 0


def test_the_kinds_hold_what_the_pipeline_once_branched_on():
    assert compiled_kinds() == ("llvm", "cuda")
    assert KINDS["cuda"].recipe and resolve(KINDS["cuda"].recipe) is gpu_schedule
    assert resolve(KINDS["llvm"].recipe) is cpu_recipe
    assert KINDS["llvm"].threaded and not KINDS["cuda"].threaded  # a GPU's kernels do not share the host's cores
    assert KINDS["cuda"].tolerance("tf32") == 5e-3 and KINDS["cuda"].tolerance("fp32") == 1e-4
    assert KINDS["torch"].skips_families == KINDS["cuda"].skips_families == {"winograd", "blocked", "im2col"}
    assert not KINDS["llvm"].skips_families
    with pytest.raises(UsageError, match="unknown target kind 'tpu'"):
        kind_of("tpu")


def test_a_new_kind_is_one_record(monkeypatch):
    """A CPU kind declared in one record (LLVM's backend and CPU recipe, its own rules and tolerance) is
    compiled, priced, run-checked and offered by the CLI without any other change."""
    host = KINDS["llvm"].detect
    toy = TargetKind(
        name="toy",
        host=lambda threads: dataclasses.replace(host(threads), kind="toy", name="toy"),
        backend="lower.llvm:BACKEND",
        recipe="lower.schedule.recipes:cpu_recipe",
        cost_key="lower.llvm.measure:cost_key",
        runner="lower.llvm.measure:run_llvm_op",
        fused_runner="lower.llvm.measure:run_llvm_fused",
        skips_families=frozenset({"winograd"}),
        tolerances=(("fp32", 1e-3),),
    )
    monkeypatch.setitem(KINDS, "toy", toy)
    target = parse_target("toy", threads=1)
    assert target.kind == "toy" and target.kind_info is toy and "toy" in compiled_kinds()
    b = GraphBuilder("tiny")
    x = b.input("x", (4, 16))
    g = b.build([b.relu(b.matmul(x, b.weight("w", torch.randn(16, 8))))])
    cg = compile_graph(g, target)
    xs = {"x": torch.randn(4, 16)}
    torch.testing.assert_close(cg(xs)[0], g.run(xs)[0], rtol=1e-4, atol=1e-4)
    assert "winograd" not in {r.family for r in default_rules("toy")}
    assert host_for("toy", True) is not None
    model = default_cost_model(target)
    assert type(model).__name__ == "CompiledCost" and "toy|" in model.fingerprint
    assert "toy" in optimize_cli.parser("eqsat optimize").parse_args(["m", "--run", "toy"]).run


def test_precision_is_a_field_of_the_target_and_in_its_keys(monkeypatch):
    tf32, fp32 = cuda_target("sm_90", precision="tf32"), cuda_target("sm_90", precision="fp32")
    assert tf32.arch == "sm_90" and tf32.warp == 32 and not tf32.cpu and not tf32.vector_width
    assert "precision=tf32" in tf32.code_key and tf32.code_key != fp32.code_key
    monkeypatch.setenv("EQSAT_CUDA_EXACT_FP32", "1")  # what a cuda target defaults to, read when it is made
    assert cuda_target("sm_90").precision == "fp32"
    with pytest.raises(UsageError, match="precision 'tf32'"):
        Target("llvm", precision="tf32")  # the llvm kind has exact FP32 only
    assert Target("llvm").cache_key == "llvm|threads=1"  # the exact default is left out of keys


# a comparison of a kind (or a target's CPU/arch) with a literal: what a pass must ask the record instead
KIND = r"""["'](llvm|cuda|torch)["']"""
NAME_BRANCH = re.compile(
    rf"""(==|!=)\s*{KIND}|{KIND}\s*(==|!=)|\bin\s*[(\[{{][^)\]}}]*{KIND}|\.(cpu|arch)\s*(==|!=)|\bin\s+\w*KINDS\b"""
)


def test_no_pass_branches_on_a_kinds_name():
    files = [ROOT / "rewrite" / "pipeline.py", *sorted((ROOT / "rewrite" / "cli").glob("*.py"))]
    files += sorted((ROOT / "lower" / "schedule").glob("*.py"))
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in files
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if NAME_BRANCH.search(line)
    ]
    assert hits == []
