"""``eqsat optimize MODEL -o OUT`` (issue 45): the optimized model written as a standard ONNX model onnxruntime runs
(``.onnx``) or in eqsat's exact format (``.eqsat``), for every model source; a bad path refused before any work."""

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import rewrite
from rewrite.cli.main import main
from rewrite.cli.optimize import keep_output_names
from rewrite.verification.numeric import compare_all, verify
from tests.misuse.test_cli import _unwritable_folder, one_error, run

MODEL = """\
import pathlib
import torch

def make():
    torch.manual_seed(0)
    pathlib.Path(__file__).with_name("loaded").touch()  # the tests see whether any work started
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU()).eval()
    return net, (torch.randn(1, 3, 6, 6),)
"""


@pytest.fixture
def factory(tmp_path: Path) -> str:
    path = tmp_path / "tiny.py"
    path.write_text(MODEL)
    return f"{path}:make"


def _onnx(path: Path) -> Path:
    """Two named inputs and two named outputs: ``scores = relu(features @ w + b)``, ``maps = relu(conv(image))``."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "b")
    k = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "k")
    nodes = [
        helper.make_node("MatMul", ["features", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["scores"]),
        helper.make_node("Conv", ["image", "k"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["maps"]),
    ]
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        nodes,
        "tiny_net",
        [vi("features", TensorProto.FLOAT, [2, 8]), vi("image", TensorProto.FLOAT, [1, 3, 6, 6])],
        [vi("scores", TensorProto.FLOAT, [2, 5]), vi("maps", TensorProto.FLOAT, [1, 4, 6, 6])],
        [w, b, k],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _feeds(sess: ort.InferenceSession, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in sess.get_inputs()}


def test_onnx_output_runs_in_onnxruntime_with_the_same_names_and_results(tmp_path, capsys):
    src, out = _onnx(tmp_path / "in.onnx"), tmp_path / "out.onnx"
    rc, stdout, err = run(capsys, "optimize", str(src), "-o", str(out), "--iters", "2")
    assert rc == 0, err
    assert "modelled speedup" in stdout and str(out) not in stdout
    assert [line for line in err.splitlines() if "wrote" in line] == [f"wrote the optimized model to {out}"]
    before, after = _session(src), _session(out)
    assert [i.name for i in after.get_inputs()] == ["features", "image"]
    assert [o.name for o in after.get_outputs()] == ["scores", "maps"]
    for seed in (0, 1):
        feeds = _feeds(before, seed)
        refs = [torch.from_numpy(a) for a in before.run(None, feeds)]
        outs = [torch.from_numpy(a) for a in after.run(None, feeds)]
        cmp = compare_all(refs, outs)
        assert cmp.close, cmp.why


def test_eqsat_output_round_trips_with_load(tmp_path, capsys):
    src, out = _onnx(tmp_path / "in.onnx"), tmp_path / "out.eqsat"
    rc, _, err = run(capsys, "optimize", str(src), "-o", str(out), "--iters", "2")
    assert rc == 0, err
    assert f"wrote the optimized model to {out}" in err
    back = rewrite.load(out)
    assert [n.attrs["name"] for n in back.inputs] == ["features", "image"]
    check = verify(rewrite.from_onnx(src), back)
    assert check.ok, check.why
    again = tmp_path / "again.eqsat"
    rewrite.save(back, again)  # the exact format: written back, the same graph
    assert rewrite.load(again).pretty() == back.pretty()


@pytest.mark.parametrize("suffix", [".onnx", ".eqsat"])
@pytest.mark.parametrize("source", ["factory", "eqsat"])
def test_every_source_can_be_written(factory, tmp_path, capsys, source, suffix):
    spec = factory
    if source == "eqsat":  # a saved graph as the input
        rewrite.save(rewrite.from_onnx(_onnx(tmp_path / "in.onnx")), tmp_path / "in.eqsat")
        spec = str(tmp_path / "in.eqsat")
    out = tmp_path / f"out{suffix}"
    rc, _, err = run(capsys, "optimize", spec, "-o", str(out), "--iters", "1")
    assert rc == 0, err
    if suffix == ".eqsat":
        assert rewrite.load(out).outputs
    else:
        sess = _session(out)
        assert all(a.size for a in sess.run(None, _feeds(sess, 0)))


def test_json_dash_keeps_stdout_pure_json(tmp_path, capsys):
    src, out = _onnx(tmp_path / "in.onnx"), tmp_path / "out.onnx"
    rc, stdout, err = run(capsys, "optimize", str(src), "-o", str(out), "--iters", "1", "--json", "-")
    assert rc == 0, err
    assert json.loads(stdout)["ops_before"] >= 5  # nothing else on stdout
    assert f"wrote the optimized model to {out}" in err
    assert out.is_file()


@pytest.mark.parametrize("name", ["out.json", "out", "out.onnx.txt", "out.pt"])
def test_another_suffix_is_refused_before_any_work(factory, tmp_path, capsys, name):
    rc, out, err = run(capsys, "optimize", factory, "-o", str(tmp_path / name))
    assert rc == 2 and not out
    one_error(err, "-o/--output", name, ".onnx", ".eqsat")
    assert not (tmp_path / "loaded").exists()  # the model was never built
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("where", ["unwritable", "missing", "folder"])
def test_an_unwritable_output_is_refused_before_any_work(factory, tmp_path, capsys, where):
    path, words = {
        "unwritable": (f"{_unwritable_folder()}/out.onnx", ["not writable", "choose another path"]),
        "missing": (str(tmp_path / "nofolder" / "out.onnx"), ["does not exist"]),
        "folder": (str(tmp_path / "dir.eqsat"), ["is a folder"]),
    }[where]
    (tmp_path / "dir.eqsat").mkdir()
    rc, out, err = run(capsys, "optimize", factory, "-o", path)
    assert rc == 2 and not out
    one_error(err, "-o/--output", *words)
    assert not (tmp_path / "loaded").exists()


def test_help_names_the_option(capsys):
    assert main(["optimize", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "-o OUT, --output OUT" in text and "OUT.onnx" in text and "OUT.eqsat" in text


def test_readme_shows_the_option():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "eqsat optimize IN.onnx -o OUT.onnx" in readme


def test_an_output_name_another_value_has_keeps_its_own():
    """An ONNX output that was an input passed through cannot take the input's name in the written model."""
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["output0"]), helper.make_node("Relu", ["x"], ["output1"])],
        "g",
        [vi("x", TensorProto.FLOAT, [2])],
        [vi("output0", TensorProto.FLOAT, [2]), vi("output1", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(g)
    keep_output_names(model, ["x", "output0"])  # 'x' is the input: the first keeps 'output0', so the second can't
    assert [o.name for o in model.graph.output] == ["output0", "output1"]
    keep_output_names(model, ["a", "b", "c"])  # another count: nothing renamed
    assert [o.name for o in model.graph.output] == ["output0", "output1"]
    keep_output_names(model, ["output1", "output0"])  # swapped: both renamed at once
    assert [o.name for o in model.graph.output] == ["output1", "output0"]
    assert [n.output[0] for n in model.graph.node] == ["output1", "output0"]
    onnx.checker.check_model(model)
