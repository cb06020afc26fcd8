"""The ``eqsat`` command misused (issue 46): one line on stderr naming the argument or file and the fix, exit
code 2 for a usage error and 1 for a failure of the work, no traceback, and nothing lost after a long run."""

import json
import tempfile
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from rewrite.cli.main import main
from rewrite.cli.optimize import finite

ROOT = Path(__file__).resolve().parents[2]

MODEL = """\
import pathlib
import torch

def make():
    torch.manual_seed(0)
    pathlib.Path(__file__).with_name("loaded").touch()  # the tests see whether any work started
    return torch.nn.Sequential(torch.nn.Linear(8, 8, bias=False), torch.nn.ReLU()).eval(), (torch.randn(2, 8),)

def ident():
    return torch.nn.Identity().eval(), (torch.randn(2, 8),)

def boom():
    x = 1
    raise RuntimeError("factory exploded\\nsecond line of the message")
"""


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.py"
    path.write_text(MODEL)
    return path


def _onnx(path: Path, graph_name: str = "main_graph") -> Path:
    node = helper.make_node("Relu", ["x"], ["y"])
    g = helper.make_graph(
        [node],
        graph_name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``eqsat -q ARGV`` in this process: (exit code, stdout, stderr)."""
    rc = main(["-q", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def one_error(err: str, *words: str) -> str:
    """``err`` is one line, an error, no traceback, and says each of ``words``."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0] and "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


# ---------------------------------------------------------------- 1: a model file that does not run


def test_syntax_error_in_the_model_file_is_its_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ndef make(:\n    pass\n")
    rc, _, err = run(capsys, "optimize", f"{bad}:make")
    assert rc == 2
    one_error(err, f"{bad}:2:", "syntax error", "fix the file")


def test_a_factory_that_raises_is_its_line_and_the_first_line_of_the_exception(model, capsys):
    rc, _, err = run(capsys, "optimize", f"{model}:boom")
    assert rc == 2
    line = one_error(err, f"{model}:14:", "boom() raised RuntimeError: factory exploded")
    assert "second line" not in line


def test_a_model_file_that_raises_on_import(tmp_path, capsys):
    bad = tmp_path / "raises.py"
    bad.write_text("import torch\n\nraise ImportError('no module named foo')\n")
    rc, _, err = run(capsys, "optimize", f"{bad}:make")
    assert rc == 2
    one_error(err, f"{bad}:3:", "ImportError: no module named foo")


# ---------------------------------------------------------------- 2: output paths checked before the work


def _unwritable_folder() -> str:
    for folder in ("/sys", "/proc"):
        try:
            with tempfile.NamedTemporaryFile(dir=folder):
                pass
        except OSError:
            return folder
    pytest.skip("no folder this user cannot write to")


@pytest.mark.parametrize("command", ["optimize", "report"])
def test_an_unwritable_output_is_refused_before_any_work(model, tmp_path, capsys, command):
    folder = _unwritable_folder()
    flag = "--json" if command == "optimize" else "-o"
    rc, _, err = run(capsys, command, f"{model}:make", flag, f"{folder}/out.x")
    assert rc == 2
    one_error(err, flag, f"'{folder}'", "not writable", "choose another path")
    assert not (tmp_path / "loaded").exists()  # the model was never built


@pytest.mark.parametrize(
    ("path", "words"),
    [("nofolder/out.json", ["'nofolder'", "does not exist"]), (".", ["is a folder", "name a file"])],
)
def test_an_output_in_a_missing_folder_or_a_folder_is_refused(model, tmp_path, capsys, monkeypatch, path, words):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, "optimize", f"{model}:make", "--json", path)
    assert rc == 2
    one_error(err, "--json", *words)
    assert not (tmp_path / "loaded").exists()


# ---------------------------------------------------------------- 3: --json - is stdout


def test_json_dash_writes_pure_json_on_stdout_and_the_table_on_stderr(model, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "optimize", f"{model}:make", "--iters", "1", "--json", "-")
    assert rc == 0
    record = json.loads(out)  # nothing else on stdout
    assert record["model"] == "tiny.make" and record["ops_before"] == 2
    assert "modelled speedup" in err and "before" in err
    assert not (tmp_path / "-").exists()
    assert main(["optimize", "--help"]) == 0
    assert "'-': to stdout" in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------- 4: rule files with no rules


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_a_rule_file_with_no_rules_is_refused(model, tmp_path, capsys, text):
    empty = tmp_path / "empty.rules"
    empty.write_text(text)
    rc, _, err = run(capsys, "optimize", f"{model}:make", "--rules", str(empty))
    assert rc == 2
    one_error(err, "--rules", str(empty), "no rules")
    assert not (tmp_path / "loaded").exists()
    rc, _, err = run(capsys, "rules", "check", str(empty))
    assert rc == 2
    one_error(err, str(empty), "no rules")


# ---------------------------------------------------------------- 5: nothing to optimize


def test_a_model_without_compute_ops_says_so_and_has_no_inf(model, tmp_path, capsys):
    out_json = tmp_path / "out.json"
    rc, out, err = run(capsys, "optimize", f"{model}:ident", "--iters", "1", "--json", str(out_json))
    assert rc == 0, err
    assert "nothing to optimize: the graph has no compute ops" in out
    text = out + out_json.read_text()
    assert "inf" not in text.replace("info", "").lower() and "nan" not in text.lower()
    json.loads(out_json.read_text())


def test_json_has_null_for_inf_and_nan():
    record = {"a": float("inf"), "b": [1.0, float("nan")], "c": {"d": -float("inf")}, "e": 2}
    assert finite(record) == {"a": None, "b": [1.0, None], "c": {"d": None}, "e": 2}


# ---------------------------------------------------------------- 6: an option of the other search


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--alpha", "1.1"], ["--alpha", "--search backtrack only"]),
        (["--search", "eqsat", "--alpha", "1.1"], ["--alpha", "drop --alpha"]),
        (["--search", "backtrack", "--extractor", "greedy"], ["--extractor", "--search eqsat only"]),
        (["--search", "backtrack", "--ilp-seconds", "3"], ["--ilp-seconds", "--search eqsat only"]),
        (["--extractor", "greedy", "--ilp-seconds", "3"], ["--ilp-seconds", "--extractor ilp only"]),
    ],
)
def test_an_option_the_search_ignores_is_refused(model, tmp_path, capsys, argv, words):
    rc, _, err = run(capsys, "optimize", f"{model}:make", *argv)
    assert rc == 2
    one_error(err, *words)
    assert not (tmp_path / "loaded").exists()


# ---------------------------------------------------------------- 7: missing, folder, empty model files


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("missing.py:make", ["missing.py", "does not exist"]),
        ("missing.onnx", ["missing.onnx", "does not exist"]),
        ("folder.onnx", ["folder.onnx", "is a folder"]),
        ("folder", ["folder", "is a folder"]),
        ("folder:make", ["folder", "is a folder"]),
        ("empty.onnx", ["empty.onnx", "is empty", "export the model again"]),
    ],
)
def test_a_bad_model_file_is_a_usage_error(tmp_path, capsys, monkeypatch, name, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.onnx").mkdir()
    (tmp_path / "folder").mkdir()
    (tmp_path / "empty.onnx").write_bytes(b"")
    for command in (["optimize", name], ["diff", name, name]):
        rc, _, err = run(capsys, *command)
        assert rc == 2
        one_error(err, *words)


# ---------------------------------------------------------------- 8: no arguments


@pytest.mark.parametrize("argv", [[], ["-q"]])
def test_no_command_prints_the_usage_with_the_commands(capsys, argv):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage: eqsat" in err and "commands:" in err
    assert "optimize" in err and "report" in err and "required" not in err


def test_argument_errors_are_one_line(model, capsys):
    rc, _, err = run(capsys, "optimize", f"{model}:make", "--nodes", "0")
    assert rc == 2
    one_error(err, "argument --nodes: must be at least 1, got 0", "--help")
    rc, _, err = run(capsys, "nosuchcommand")
    assert rc == 2
    one_error(err, "nosuchcommand")
    rc, _, err = run(capsys, "optimize", "nosuchmodel")
    assert rc == 2
    one_error(err, "unknown model 'nosuchmodel'", "FILE.py:FACTORY")


# ---------------------------------------------------------------- 9: model names


def test_models_are_named_after_their_factory_and_file(model, tmp_path, capsys):
    rc, out, _ = run(capsys, "optimize", f"{model}:make", "--iters", "1")
    assert rc == 0 and out.startswith("model tiny.make:")
    rc, out, _ = run(capsys, "optimize", str(_onnx(tmp_path / "relu.onnx")), "--iters", "1")
    assert rc == 0 and out.startswith("model relu:")
    rc, out, _ = run(capsys, "optimize", str(_onnx(tmp_path / "other.onnx", "my_net")), "--iters", "1")
    assert rc == 0 and out.startswith("model my_net:")  # a name the user gave is kept


# ---------------------------------------------------------------- 10: no debug output


def test_the_cost_model_counters_only_with_verbose(model, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    rc, out, err = run(capsys, "optimize", f"{model}:make", "--iters", "1", "--cost", "compiled")
    assert rc == 0, err
    assert "cost model:" not in err and "hits" not in err and "verified: yes" in out


# ---------------------------------------------------------------- 11: README


def test_readme_does_not_say_control_flow_is_not_supported():
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "control flow (Loop, If, Scan)" not in text
    assert "`--json -`" in text and "--alpha" in text
