"""The prover and the `eqsat rules check` / `eqsat rules prove` commands."""

import argparse
import json

import pytest

from rewrite.cli import main
from rewrite.cli.args import parse_shape
from rewrite.egraph.saturate import Limits
from rewrite.rulelang.syntax import RuleError
from rewrite.verification.prove import ProveError, prove_equal

ABC = {"a": (2, 3), "b": (3, 4), "c": (4, 5)}


def test_matmul_associativity_is_proven():
    r = prove_equal("(matmul ?a (matmul ?b ?c))", "(matmul (matmul ?a ?b) ?c)", ABC)
    assert r.equal and r.stop_reason == "equal" and r.iterations >= 1


def test_identical_sides_are_equal_without_rewriting():
    r = prove_equal("(relu ?a)", "(relu ?a)", {"?a": (2, 3)}, rules=[])
    assert r.equal and r.iterations == 0


def test_relu_is_not_tanh():
    r = prove_equal("(relu ?a)", "(tanh ?a)", {"a": (2, 3)}, limits=Limits(iterations=5, seconds=5))
    assert not r.equal and r.stop_reason in ("saturated", "iteration_limit")


def test_weights_enable_weight_guarded_rules():
    lhs, rhs = "(add (matmul ?x ?w1) (matmul ?y ?w2))", "(matmul (concat ?x ?y :axis 1) (concat ?w1 ?w2 :axis 0))"
    shapes = {"x": (2, 3), "w1": (3, 4), "y": (2, 5), "w2": (5, 4)}
    assert prove_equal(lhs, rhs, shapes, weights={"w1", "w2"}).equal
    assert not prove_equal(lhs, rhs, shapes).equal  # (weight ?b) does not hold for inputs


def test_shape_mismatch_is_reported_clearly():
    with pytest.raises(ProveError, match=r"^the two sides do not have the same shape: \(2, 3\) vs \(3, 2\)$"):
        prove_equal("(relu ?a)", "(transpose ?a :perm [1 0])", {"a": (2, 3)})


@pytest.mark.parametrize(
    "lhs, rhs, where, msg",
    [
        ("(relu ?a", "?a", "<lhs>:1:1", "never closed"),
        ("(relu ?a)", "(nosuch ?a)", "<rhs>:1:2", "unknown op"),
        ("(relu ?z)", "?a", "<lhs>:1:7", "has no shape"),
    ],
)
def test_parse_errors_name_the_side(lhs, rhs, where, msg):
    with pytest.raises(RuleError, match=msg) as e:
        prove_equal(lhs, rhs, {"a": (2, 3)})
    assert str(e.value).startswith(where + ":")


# ------------------------------------------------------------------ command line


def _run(argv, capsys):
    code = main(["rules", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_prove_exit_codes_and_json(capsys):
    assoc = [
        "(matmul ?a (matmul ?b ?c))",
        "(matmul (matmul ?a ?b) ?c)",
        "--shape",
        "a=2x3",
        "--shape",
        "b=3,4",
        "--shape",
        "c=4x5",
    ]
    code, out, _ = _run(["prove", *assoc, "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["equal"] is True and data["stop_reason"] == "equal"
    assert {"equal", "iterations", "stop_reason", "seconds"} <= set(data)
    code, out, _ = _run(["prove", "(relu ?a)", "(tanh ?a)", "--shape", "a=2x3", "--iters", "3"], capsys)
    assert code == 1 and "not proven" in out
    code, _, err = _run(["prove", "(relu ?a)", "(transpose ?a :perm [1 0])", "--shape", "a=2x3"], capsys)
    assert code == 2 and "the two sides do not have the same shape: (2, 3) vs (3, 2)" in err
    code, _, err = _run(["prove", "(relu ?a", "?a", "--shape", "a=2x3"], capsys)
    assert code == 2 and "<lhs>:1:1:" in err
    code, _, err = _run(["prove", "(relu ?a)", "?a", "--shape", "a=2y3"], capsys)
    assert code == 2 and "--shape" in err
    code, _, err = _run(["prove", "(relu ?a)", "?a", "--shape", "a=2x3", "--rules", "nosuch"], capsys)
    assert code == 2 and "nosuch" in err


def test_parse_shape():
    assert parse_shape("a=64x1024") == ("a", (64, 1024)) and parse_shape("?w=64,1024") == ("w", (64, 1024))
    for bad in ("a", "a=", "=3", "a=0x2", "a=2.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_shape(bad)


def test_cli_check_exit_codes(tmp_path, capsys):
    good, bad = tmp_path / "good.rules", tmp_path / "bad.rules"
    good.write_text("relu-idem: (relu (relu ?x)) => (relu ?x)\n")
    bad.write_text(
        "relu-idem2: (relu (relu ?x)) => (relu ?x)\nrelu-add: (relu (add ?a ?b)) => (add (relu ?a) (relu ?b))\n"
    )
    code, out, _ = _run(["check", str(good)], capsys)
    assert code == 0 and "ok    relu-idem" in out and "[1/1]" in out
    code, out, _ = _run(["check", str(bad)], capsys)
    assert code == 1 and "FAIL  relu-add" in out and "bad.rules:2" in out and "?a=" in out
    code, out, err = _run(["check", str(bad), "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["failed"] == ["relu-add"] and "[2/2]" in err
    code, _, err = _run(["check", str(tmp_path / "missing.rules")], capsys)
    assert code == 2 and "missing.rules" in err
