"""``eqsat rules synthesize`` and ``eqsat rules effect`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewrite.cli.main import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_synthesize_writes_a_file_the_checker_passes(capsys, tmp_path: Path):
    out_file = tmp_path / "found.rules"
    rc, out, err = run(
        capsys,
        "rules", "synthesize", "--ops", "add,relu", "--max-ops", "2", "--shapes", "ew", "--workers", "1",
        "-o", str(out_file), "--json", str(tmp_path / "run.json"),
    )  # fmt: skip
    assert rc == 0, err
    assert f"-> {out_file}" in out and "rules from" in out
    text = out_file.read_text()
    assert text.startswith("# Rules synthesized by eqsat")
    assert "# eqsat rules synthesize --ops add,relu --max-ops 2 --shapes ew" in text
    assert "syn-add-1: (add ?a ?b) => (add ?b ?a)" in text
    report = json.loads((tmp_path / "run.json").read_text())
    assert report["ops"] == ["add", "relu"] and report["rules"]
    rc, out, err = run(capsys, "rules", "check", str(out_file))
    assert rc == 0, out + err
    assert " 0 failed" in out


def test_synthesize_refuses_an_unknown_op_in_one_line_before_any_work(capsys, tmp_path: Path):
    out_file = tmp_path / "found.rules"
    rc, _out, err = run(capsys, "rules", "synthesize", "--ops", "add,frobnicate", "-o", str(out_file))
    assert rc == 2
    assert "unknown op 'frobnicate'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2  # the error and its hint
    assert not out_file.exists()


def test_synthesize_refuses_an_unwritable_output_before_any_work(capsys, tmp_path: Path):
    rc, _, err = run(capsys, "rules", "synthesize", "--ops", "add", "-o", str(tmp_path / "missing" / "x.rules"))
    assert rc == 2
    assert "does not exist" in err


@pytest.mark.slow
def test_effect_prints_the_cost_change_and_the_file_rules_that_fired(capsys, tmp_path: Path):
    # the shipped algebra without its relu-idem, given back through a file: the file's rule fires on squeezenet?
    # (no: squeezenet has no relu of relu); a rule that always fires on a relu model: commuting relu and concat
    rules = tmp_path / "mine.rules"
    rules.write_text("mine-relu-concat: (concat (relu ?a) (relu ?b) :axis 1) <=> (relu (concat ?a ?b :axis 1))\n")
    rc, out, err = run(
        capsys, "rules", "effect", str(rules), "--models", "squeezenet", "--json", str(tmp_path / "e.json")
    )
    assert rc == 0, err
    assert "squeezenet" in out and "with file" in out
    report = json.loads((tmp_path / "e.json").read_text())
    row = report["models"][0]
    assert row["model"] == "squeezenet" and row["cost_before"] > 0
    assert set(row["fired"]) <= {"mine-relu-concat", "mine-relu-concat:reverse"}


def test_effect_refuses_a_missing_file_and_an_unknown_family(capsys, tmp_path: Path):
    rc, _, err = run(capsys, "rules", "effect", str(tmp_path / "nope.rules"))
    assert rc == 2 and "does not exist" in err
    rules = tmp_path / "mine.rules"
    rules.write_text("r: (relu (relu ?x)) => (relu ?x)\n")
    rc, _, err = run(capsys, "rules", "effect", str(rules), "--replace", "algebrah")
    assert rc == 2 and "not a shipped family" in err


TRANSITION = """
import torch


def transition():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Conv2d(64, 32, 1, bias=False), torch.nn.AvgPool2d(2, 2))
    return m.eval(), (torch.randn(1, 64, 32, 32),)
"""


def test_effect_with_run_verifies_and_times_the_file_graph(capsys, tmp_path: Path):
    # a DenseNet transition (1x1 convolution, then a 2x2 average pool): the synthesized commutation pools first,
    # so the convolution runs over a quarter of the pixels (the shipped algebra family has the general rule,
    # avgpool-conv1x1: the file replaces that family); --run optimizes for llvm, verifies, times both
    model = tmp_path / "transition.py"
    model.write_text(TRANSITION)
    rules = tmp_path / "pw.rules"
    rules.write_text(
        "pw: (avgpool2d (conv2d ?a ?b :stride [1 1] :padding [0 0] :dilation [1 1] :groups 1) :kernel [2 2] "
        ":stride [2 2] :padding [0 0] :ceil_mode 0 :count_include_pad 1) <=> (conv2d (avgpool2d ?a :kernel [2 2] "
        ":stride [2 2] :padding [0 0] :ceil_mode 0 :count_include_pad 1) ?b :stride [1 1] :padding [0 0] "
        ":dilation [1 1] :groups 1)  if (= (dim ?b 2) 1) (= (dim ?b 3) 1)\n"
    )
    rc, out, err = run(
        capsys, "rules", "effect", str(rules), "--models", f"{model}:transition", "--replace", "algebra",
        "--run", "llvm", "--threads", "1", "--json", str(tmp_path / "e.json"),
    )  # fmt: skip
    assert rc == 0, err
    assert "compiled for llvm (1 thread(s))" in out
    row = json.loads((tmp_path / "e.json").read_text())["models"][0]
    assert row["fired"].get("pw", 0) > 0
    # priced by the compiled kernels: the file's graph is the shipped one's (the same commutation)
    assert row["cost_with_file"] < row["cost_before"] and row["cost_with_file"] <= row["cost_shipped"] * 1.000001
    assert row["cost_shipped"] < row["cost_before"]  # the shipped avgpool-conv1x1 pools first as well
    ran = row["ran"]
    assert ran["shipped_ms"] > 0 and ran["with_file_ms"] > 0 and ran["speedup"] > 0
