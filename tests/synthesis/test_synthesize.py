"""Rule synthesis (issue 48): enumeration finds the identities, the checker vets them, the prover prunes them.

Small runs (one world, two ops per graph, one process) keep these in the fast tier; the whole op set at three
ops is the slow tier's and the bench's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rewrite.ir.errors import UsageError
from rewrite.rulelang.syntax import load_rule_file, parse_rules
from rewrite.synthesis import WORLDS, parse_world, synthesize
from rewrite.synthesis.enumerate import dim_table, enumerate_world
from rewrite.synthesis.select import derivable, dtype_safe, rule_derivable
from rewrite.synthesis.space import DimExpr, Term, expand_ops
from rewrite.verification.rulecheck.check import check_rule

SHIPPED = Path(__file__).resolve().parents[2] / "rules" / "optional" / "synthesized.rules"


def _bodies(res):
    return {c.body for c in res.rules}


@pytest.fixture(scope="module")
def elementwise():
    return synthesize(["add", "mul", "relu"], max_ops=2, worlds=["ew"], workers=1)


def test_the_textbook_identities_come_out_of_enumeration(elementwise):
    bodies = _bodies(elementwise)
    assert "(add ?a ?b) => (add ?b ?a)" in bodies  # commutativity: a renaming of its reverse, written once
    assert "(mul ?a ?b) => (mul ?b ?a)" in bodies
    assert "(relu (relu ?a)) <=> (relu ?a)" in bodies
    # a square is never negative: found, not written.  One way only: the reverse would put a float relu into
    # the class of an int64 product (the checker compares float64 values; dtype_safe sees every dtype)
    assert "(relu (mul ?a ?a)) => (mul ?a ?a)" in bodies


def test_every_synthesized_rule_passes_the_checker_from_its_file(elementwise, tmp_path):
    path = tmp_path / "found.rules"
    path.write_text(elementwise.text("eqsat rules synthesize --ops add,mul,relu"))
    rules = parse_rules(path.read_text(), str(path), "found")
    assert len(rules) == len(elementwise.rules) >= 5
    for r in rules:
        assert check_rule(r).ok, r.text
    text = path.read_text()
    assert text.count("# found in ew") == len(rules)  # each rule under its provenance
    assert "(add ?b ?a)\n#   (add ?a ?b)" in text or "(add ?a ?b)\n#   (add ?b ?a)" in text


def test_no_rule_is_derivable_from_the_others(elementwise):
    rules = elementwise.rules
    for c in rules:
        others = [o.rule() for o in rules if o is not c]
        assert not derivable([c], others)[0], c.text()


@pytest.mark.slow  # a three-op enumeration: 4.5-5 s; derivability stays in the fast tier (the shipped file's sample)
def test_a_rule_the_others_derive_is_dropped():
    # associativity of add and mul comes out of a three-op enumeration in a rotated form; distributivity too.
    # Each candidate the kept rules derive is gone, so the file keeps one form of each law
    res = synthesize(["add", "mul"], max_ops=3, worlds=["ew"], workers=1)
    assert len(res.rules) <= 12
    assert any("(add (mul ?a ?b) (mul ?a ?c))" in c.body for c in res.rules)
    assert res.stages[-1].into >= res.stages[-1].out


def test_a_split_of_a_concat_is_written_with_sizes_bound_by_guards():
    res = synthesize(["concat", "split"], max_ops=2, worlds=["rows"], workers=1)
    texts = [c.text() for c in res.rules]
    first = [t for t in texts if "=> ?a" in t and ":start 0" in t]
    second = [t for t in texts if "=> ?b" in t]
    assert first and second, texts
    # the second part starts where ?a ends, whatever ?b's height: no guard ties their shapes
    assert any("(= ?k0 (dim ?a 0))" in t and "(shape ?b)" not in t for t in second), second
    for c in res.rules:
        assert check_rule(c.rule()).ok, c.text()


def test_template_guards_stay_only_where_the_checker_needs_them():
    # the chain world: a@b then @c; matmul association needs no guard beyond what the left side implies
    res = synthesize(["matmul", "transpose"], max_ops=2, worlds=["chain"], workers=1)
    assoc = [c for c in res.rules if "(matmul (matmul ?a ?b) ?c)" in c.body or "(matmul ?a (matmul ?b ?c))" in c.body]
    assert assoc and all(c.guards == [] for c in assoc), [c.text() for c in assoc]


def test_an_op_without_hand_written_rules_gets_its_identities():
    # maximum appears in no shipped rule file
    res = synthesize(["maximum", "relu", "add"], max_ops=2, worlds=["ew"], workers=1)
    bodies = _bodies(res)
    assert "(maximum ?a ?b) => (maximum ?b ?a)" in bodies
    assert any(b.startswith("(maximum ?a ?a) => ?a") for b in bodies), bodies
    assert any("relu" in b and "maximum" in b for b in bodies), bodies
    for c in res.rules:
        assert check_rule(c.rule()).ok, c.text()


def test_pointwise_kernels_commute_with_average_pooling_under_a_1x1_guard():
    # the rule that made DenseNet's transitions pool before their 1x1 convolution (4x fewer pixels): found in
    # the pointwise world, written with the kernel's 1x1 as guards (a 3x3 kernel does not commute), checked
    res = synthesize(["conv2d", "avgpool2d", "maxpool2d"], max_ops=2, worlds=["pointwise"], workers=1)
    swaps = [c for c in res.rules if "(avgpool2d (conv2d ?a ?b" in c.body and "(conv2d (avgpool2d ?a" in c.body]
    assert swaps, [c.text() for c in res.rules]
    for c in swaps:
        assert "if (= (dim ?b 2) 1) (= (dim ?b 3) 1)" in c.text(), c.text()
        assert check_rule(c.rule()).ok, c.text()
    assert not any("(maxpool2d (conv2d" in c.body or "(conv2d (maxpool2d" in c.body for c in res.rules)


def test_a_rule_that_changes_a_dtype_is_not_written_that_way():
    a = Term.leaf("a")
    square = Term.apply("mul", [a, a], {})
    relu = Term.apply("relu", [square], {})
    assert dtype_safe(relu, square, {}, {})  # a relu only ever holds a float
    assert not dtype_safe(square, relu, {}, {})  # an int64 square is no relu's input
    twice = Term.apply("transpose", [Term.apply("transpose", [a], {"perm": (1, 0)})], {"perm": (1, 0)})
    assert dtype_safe(twice, a, {}, {})


def test_an_identity_that_fails_at_zero_is_not_found():
    # b / b is 1 wherever b is not 0: random normal inputs alone would group (mul ?a (div ?b ?b)) with ?a, and
    # the checker's random inputs would pass it; the enumeration's inputs have exact zeros
    res = synthesize(["mul", "div", "reciprocal", "exp", "sub"], max_ops=2, worlds=["ew"], workers=1)
    bodies = _bodies(res)
    assert not any("(div ?a ?a)" in b and "=> ?" in b for b in bodies), bodies
    assert not any("(exp (sub ?a ?a))" in b and "div" in b for b in bodies), bodies
    # where both sides are infinite or NaN at the same entries, the rule stands
    assert any("reciprocal" in b and "(div" in b for b in bodies), bodies


def test_worlds_and_dimension_names():
    w = parse_world("a=n,m b=m,3")
    assert w.template("b") == ("m", 3) and w.symbols() == ["n", "m"]
    insts = w.instances(4)
    assert len({tuple(sorted(i.items())) for i in insts}) == 4
    assert all(i["n"] != i["m"] for i in insts)
    table = dim_table(w, insts)
    two_n_plus_m = tuple(2 * i["n"] + i["m"] for i in insts)
    assert table[two_n_plus_m] == DimExpr.of({"n": 2, "m": 1})
    assert set(WORLDS) >= {"ew", "chain", "image", "pointwise"}


def test_enumeration_builds_larger_graphs_only_over_representatives():
    r = enumerate_world(WORLDS["ew"], ["add"], 2)
    reps = {str(g[0]) for g in r.groups}
    members = [str(t) for g in r.groups for t in g[1:]]
    assert "(add ?a ?b)" in reps and "(add ?b ?a)" in members
    assert not any("(add ?b ?a)" in m and m != "(add ?b ?a)" for m in members)  # never an argument


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ops": ["nope"]}, "unknown op 'nope'"),
        ({"ops": ["reshape"]}, "has no attribute menu"),
        ({"ops": ["add"], "max_ops": 0}, "max_ops must be 1 to 4"),
        ({"ops": ["add"], "worlds": ["mars"]}, "unknown shape world 'mars'"),
        ({"ops": ["add"], "worlds": ["a=n,-1"]}, "is not a symbol or a size"),
        ({"ops": ["add"], "minutes": 0}, "minutes must be > 0"),
    ],
)
def test_bad_requests_are_one_line_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match=message):
        synthesize(**kwargs)


def test_pooling_names_both_pooling_ops():
    assert expand_ops(["pooling", "relu"]) == ["avgpool2d", "maxpool2d", "relu"]


# ------------------------------------------------------------------ the shipped file (rules/optional/synthesized.rules)
# written by the command in its header: the ten TASO ops (pooling is two) at three ops, every default world


@pytest.mark.slow  # 157 rules through the checker (8-9 s); the file changes only when regenerated
def test_the_shipped_synthesized_file_passes_the_checker():
    rules = load_rule_file(SHIPPED)
    assert len(rules) >= 100
    assert "eqsat rules synthesize --ops matmul,add,mul,smul,relu,transpose,concat,split,conv2d,pooling" in (
        SHIPPED.read_text()
    )
    failed = [str(r) for r in (check_rule(rule) for rule in rules) if not r.ok]
    assert not failed, failed


def test_a_sample_of_the_shipped_file_is_not_derivable_from_the_rest():
    rules = load_rule_file(SHIPPED)
    sample = random.Random(48).sample(rules, 12)
    for r in sample:
        assert not rule_derivable(r, [o for o in rules if o is not r]), r.text
    # and the check can say yes: a rule the file derives (comm and the rotation of add: associativity)
    derived = parse_rules("d: (add (add ?a ?b) ?c) => (add ?c (add ?b ?a))")[0]
    assert rule_derivable(derived, rules)


@pytest.mark.slow
def test_no_rule_of_the_shipped_file_is_derivable_from_the_rest():
    rules = load_rule_file(SHIPPED)
    derived = [r.name for r in rules if rule_derivable(r, [o for o in rules if o is not r])]
    assert not derived, derived


@pytest.mark.slow
def test_a_two_process_run_over_matrices_writes_checked_underivable_rules():
    res = synthesize(
        ["matmul", "add", "relu", "transpose", "concat", "split"], max_ops=3, worlds=["ew", "chain", "fan"], workers=2
    )
    assert res.complete and len(res.rules) >= 10
    rules = [c.rule() for c in res.rules]
    for c, r in zip(res.rules, rules):
        assert check_rule(r).ok, c.text()
        assert not derivable([c], [o for o in rules if o is not r])[0], c.text()
    bodies = _bodies(res)
    assert any("(matmul (matmul ?a ?b) ?c)" in b for b in bodies)
