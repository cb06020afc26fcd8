"""Every misuse of the public API is one line: an ``EqsatError`` naming the argument, what was given and the fix,
raised before any expensive work (issue 46)."""

import logging

import pytest
import torch

import rewrite
from rewrite import pipeline
from rewrite.ir.errors import EqsatError, FrontendError, UsageError


def _graph() -> rewrite.Graph:
    b = rewrite.GraphBuilder("tiny")
    return b.build([b.relu(b.relu(b.input("x", (2, 3))))])


def _raises(cls: type[EqsatError], call, *words: str) -> str:
    """The message of ``call()``'s ``cls``, checked to be one line holding every one of ``words``."""
    with pytest.raises(cls) as e:
        call()
    msg = str(e.value)
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


@pytest.fixture
def no_work(monkeypatch):
    """optimize must refuse before loading a rule or saturating."""

    def fail(*a, **k):
        raise AssertionError("work started before the arguments were checked")

    for name in ("saturate", "_rule_list", "default_rules", "default_cost_model"):
        monkeypatch.setattr(pipeline, name, fail)


# 1. something that is not a graph


@pytest.mark.parametrize(
    "given, words",
    [
        ("m.onnx", ["optimize: graph", "'m.onnx'", "rewrite.load", "from_onnx"]),
        (None, ["optimize: graph", "got None", "GraphBuilder", "from_torch"]),
        (torch.nn.Linear(2, 3), ["torch module Linear", "rewrite.from_torch(module, example_inputs)"]),
    ],
)
def test_optimize_of_a_non_graph_says_how_to_get_one(given, words, no_work):
    _raises(UsageError, lambda: rewrite.optimize(given), *words)


def test_an_onnx_model_proto_is_pointed_to_from_onnx():
    model = rewrite.to_onnx(_graph())
    _raises(UsageError, lambda: rewrite.optimize(model), "onnx.ModelProto", "rewrite.from_onnx(model)")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rewrite.compile(None), "compile: graph"),
        (lambda: rewrite.compile_ptx(None), "compile_ptx: graph"),
        (lambda: rewrite.to_torch(None), "to_torch: graph"),
        (lambda: rewrite.to_onnx(None), "to_onnx: graph"),
        (lambda: rewrite.save(None, "x.eqsat"), "save: graph"),
        (lambda: rewrite.verify(None, _graph()), "verify: original"),
        (lambda: rewrite.verify(_graph(), "opt.eqsat"), "verify: optimized"),
    ],
)
def test_every_entry_point_taking_a_graph_refuses_anything_else(call, name):
    _raises(UsageError, call, name, "must be a rewrite.Graph")


def test_compile_checks_its_other_arguments():
    _raises(UsageError, lambda: rewrite.compile(_graph(), threads=0), "compile: threads", "got 0")
    _raises(UsageError, lambda: rewrite.compile(_graph(), target="tpu"), "compile: target", "'tpu'", "llvm")
    _raises(UsageError, lambda: rewrite.compile_ptx(_graph(), arch=90), "compile_ptx: arch", "sm_90")


def test_verify_checks_trials_and_rtol():
    _raises(UsageError, lambda: rewrite.verify(_graph(), _graph(), trials=0), "verify: trials", "got 0")
    _raises(UsageError, lambda: rewrite.verify(_graph(), _graph(), rtol=-1.0), "verify: rtol", "got -1.0")


# 2. limits


def test_optimize_refuses_limits_that_are_not_limits(no_work):
    _raises(UsageError, lambda: rewrite.optimize(_graph(), limits=5), "optimize: limits", "got 5", "rewrite.Limits(")


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"nodes": "x"}, ["Limits: nodes must be an int", "got 'x'", "Limits(nodes=50_000)"]),
        ({"seconds": None}, ["Limits: seconds must be a number", "got None"]),
        ({"iterations": True}, ["Limits: iterations", "got True"]),
        ({"match_limit": 1.5}, ["Limits: match_limit", "got a float"]),
    ],
)
def test_limits_refuse_a_wrong_type_when_made(kw, words):
    _raises(UsageError, lambda: rewrite.Limits(**kw), *words)


def test_impossible_limits_are_refused_before_saturation(no_work):
    _raises(UsageError, lambda: rewrite.optimize(_graph(), limits=rewrite.Limits(nodes=0)), "node limit")


def test_limits_take_numpy_numbers_as_python_ones():
    np = pytest.importorskip("numpy")
    lim = rewrite.Limits(nodes=np.int64(5), seconds=np.float32(2))
    assert type(lim.nodes) is int and type(lim.seconds) is float


# 3. optimize's other arguments, refused up front


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"ilp_seconds": -1}, ["optimize: ilp_seconds", "> 0", "got -1"]),
        ({"ilp_seconds": "10"}, ["optimize: ilp_seconds", "got '10'"]),
        ({"extractor": "fast"}, ["unknown extractor 'fast'", "greedy, ilp"]),
        ({"search": "taso"}, ["unknown search 'taso'", "eqsat, backtrack"]),
        ({"alpha": 0.5}, ["optimize: alpha", ">= 1.0", "got 0.5"]),
        ({"max_expansions": -1}, ["optimize: max_expansions", "got -1"]),
        ({"target": "tpu"}, ["optimize: target", "'tpu'", "'llvm'"]),
        ({"target": 5}, ["optimize: target", "kind name", "got 5"]),
        ({"cost_model": 3}, ["optimize: cost_model", "callable", "got 3"]),
        ({"on_iteration": 3}, ["optimize: on_iteration", "callable"]),
        ({"check": "yes"}, ["optimize: check", "True or False", "got 'yes'"]),
        ({"run_check": "no"}, ["optimize: run_check", "None", "got 'no'"]),
    ],
)
def test_optimize_refuses_bad_arguments_before_any_work(kw, words, no_work):
    _raises(UsageError, lambda: rewrite.optimize(_graph(), **kw), *words)


# 4. rules as one string


def test_a_rule_family_name_alone_is_a_list_of_one(monkeypatch):
    seen = []

    def stop(graph, rules, *a, **k):
        seen.append(sorted(r.name for r in rules))
        raise KeyboardInterrupt  # stop before saturating

    monkeypatch.setattr(pipeline, "saturate", stop)
    for rules in ("algebra", ["algebra"]):
        with pytest.raises(KeyboardInterrupt):
            rewrite.optimize(_graph(), rules=rules, extractor="greedy")
    assert seen[0] == seen[1] and seen[0]


def test_optimize_with_rules_given_as_one_string_runs():
    res = rewrite.optimize(_graph(), rules="algebra", extractor="greedy")
    assert res.stats.verified


@pytest.mark.parametrize("rules", [5, ["algebra", 5]])
def test_rules_of_another_kind_are_refused(rules, no_work):
    _raises(UsageError, lambda: rewrite.optimize(_graph(), rules=rules), "optimize: rules", "'algebra'")


# 5. model files that cannot be read


@pytest.mark.parametrize("load", [rewrite.from_onnx, rewrite.load])
def test_a_model_path_that_is_no_path(load):
    _raises(UsageError, lambda: load(42), f"{load.__name__}: ", "got 42", ".onnx")


@pytest.mark.parametrize("load", [rewrite.from_onnx, rewrite.load])
def test_a_folder_as_a_model_path(load, tmp_path):
    folder = tmp_path / "model.onnx"
    folder.mkdir()
    _raises(FrontendError, lambda: load(folder), "is a folder", str(folder))


@pytest.mark.parametrize("load", [rewrite.from_onnx, rewrite.load])
def test_an_empty_model_file(load, tmp_path):
    empty = tmp_path / "m.onnx"
    empty.write_bytes(b"")
    _raises(FrontendError, lambda: load(empty), "empty (0 bytes)", "not an ONNX model")


def test_a_model_with_no_graph_is_not_an_onnx_model():
    onnx = pytest.importorskip("onnx")
    _raises(FrontendError, lambda: rewrite.from_onnx(onnx.ModelProto()), "no graph outputs", "not an ONNX model")


# 6. writing into a folder that does not exist


@pytest.mark.parametrize(
    "write, name", [(rewrite.to_onnx, "x.onnx"), (rewrite.save, "x.eqsat")], ids=["to_onnx", "save"]
)
def test_writing_into_a_missing_folder(write, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    msg = _raises(UsageError, lambda: write(_graph(), f"missing_dir/{name}"), "folder 'missing_dir' does not exist")
    assert msg.startswith(f"{write.__name__}: ") and not (tmp_path / "missing_dir").exists()


# 7. save with an .onnx name


def test_save_refuses_an_onnx_path_and_to_onnx_writes_what_onnxruntime_runs(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    g = _graph()
    path = tmp_path / "opt.onnx"
    _raises(
        UsageError, lambda: rewrite.save(g, path), "save: ", "onnxruntime cannot load", "rewrite.to_onnx(", ".eqsat"
    )
    assert not path.exists()
    rewrite.to_onnx(g, path)
    x = torch.randn(2, 3)
    (y,) = ort.InferenceSession(str(path)).run(None, {"x": x.numpy()})
    assert torch.allclose(torch.from_numpy(y), torch.relu(x))
    rewrite.save(g, tmp_path / "opt.eqsat")
    assert [n.op for n in rewrite.load(tmp_path / "opt.eqsat")] == [n.op for n in g]


# 8. from_torch


class _Mismatch(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def test_a_failed_capture_is_one_line_and_torch_says_nothing(capfd):
    fake = logging.getLogger("torch._subclasses.fake_tensor")
    level = fake.level
    _raises(FrontendError, lambda: rewrite.from_torch(_Mismatch(), (torch.randn(2, 5),)), "could not capture _Mismatch")
    out, err = capfd.readouterr()
    assert out == "" and err == "", err
    assert fake.level == level  # the logger is as it was


@pytest.mark.parametrize(
    "args, words",
    [
        ((None, (torch.randn(2, 3),)), ["nn.Module", "NoneType"]),
        ((_Mismatch(), None), ["example_inputs", "from_torch(module, (x,))"]),
        ((_Mismatch(), (torch.randn(2, 3),), [1]), ["kwargs", "list"]),
    ],
)
def test_from_torch_checks_its_arguments(args, words):
    _raises(FrontendError, lambda: rewrite.from_torch(*args), *words)
