"""The model zoo: a CNN written from its paper goes through import, optimize, verify and compile;
the slow tier runs every zoo model and checks each imports, verifies and compiles within 1e-4."""

import pytest

from bench.zoo import ZOO
from bench.zoo.run import run_model

KEYS = {"model", "imported", "verified", "compiled", "max_rel_err", "ops_before", "ops_after"}
KEYS |= {"cost_before", "cost_after", "ms_eager", "ms_eqsat"}


def test_zoo_lists_the_required_models() -> None:
    for name in ("mobilenet_v2", "efficientnet_b0", "densenet121", "shufflenet_v2"):
        assert name in ZOO
    for name in (
        "gpt2",
        "bert",
        "llama",
        "vit",
        "hf_resnet",
        "swin",
        "whisper_encoder",
        "wav2vec2",
        "opt",
        "beit",
        "dinov2",
        "roberta",
    ):
        assert name in ZOO


@pytest.mark.slow  # 9 s; the zoo's other models are slow-tier too
def test_mobilenet_v2_end_to_end() -> None:
    row = run_model("mobilenet_v2", time_it=False)
    assert KEYS <= set(row)
    assert row["error"] is None, row["error"]
    assert row["imported"] and row["verified"] and row["compiled"]
    assert row["max_rel_err"] <= 1e-4
    assert row["ops_after"] <= row["ops_before"]
    assert row["cost_after"] <= row["cost_before"]


def test_a_failing_model_is_a_row() -> None:
    ZOO["_broken"] = lambda: (_ for _ in ()).throw(RuntimeError("no such model\nsecond line"))
    try:
        row = run_model("_broken", time_it=False)
    finally:
        del ZOO["_broken"]
    assert not (row["imported"] or row["verified"] or row["compiled"])
    assert row["error"] == "RuntimeError: no such model"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_every_zoo_model_imports_verifies_and_compiles(name: str) -> None:
    row = run_model(name, repeats=2)
    assert KEYS <= set(row)
    assert row["error"] is None, row["error"]
    assert row["imported"] and row["verified"] and row["compiled"] and row["max_rel_err"] <= 1e-4


def test_bench_zoo_takes_full_size_names(monkeypatch, capsys):
    """``bench zoo --models full:NAME`` runs the architecture at its deployment size; unknown names are refused."""
    from bench.zoo import run as zoo_run

    seen = []

    def fake(name, repeats=5, ilp_seconds=5.0, time_it=True):
        seen.append(name)
        row = dict.fromkeys(KEYS | {"speedup", "seconds", "error"})
        return {**row, "model": name, "imported": False, "verified": False, "compiled": False, "stage": "build"}

    monkeypatch.setattr(zoo_run, "run_model", fake)
    assert zoo_run.main(["--models", "full:bert,vit", "--no-timing"]) == 0
    assert seen == ["full:bert", "vit"]
    assert zoo_run.main(["--models", "full:nope"]) == 2
    assert "full:mobilenet_v2" in capsys.readouterr().err


@pytest.mark.slow  # builds 28 transformers models (EfficientNet's default config is B7): ~40 s
def test_every_wide_sweep_model_builds_and_runs_eagerly() -> None:
    """Each ``wide:NAME`` builder gives an eval-mode module and inputs it runs on (what ``bench e2e --models
    wide`` imports), one tensor out."""
    import torch

    from bench.zoo import zoo_builder
    from bench.zoo.wide import WIDE

    for name in WIDE:
        build = zoo_builder(f"wide:{name}")
        assert build is not None
        module, inputs = build()
        assert not any(m.training for m in module.modules()), name
        with torch.no_grad():
            out = module(*inputs)
        assert isinstance(out, torch.Tensor) and out.numel() > 0 and bool(torch.isfinite(out).all()), name
