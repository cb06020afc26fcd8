"""The rule language: parsing, errors with file:line:col, egglog text."""

import pytest

from rewrite.egraph.rules import rule_to_egglog
from rewrite.rulelang.loader import load_rules, rule_files
from rewrite.rulelang.syntax import RuleError, parse_rules


def test_shipped_rules_parse_with_unique_names():
    rules = load_rules()
    names = [d.name for r in rules for d in r.directions()]
    assert len(names) == len(set(names))
    assert {"algebra", "layout", "multi"} <= set(rule_files())
    assert any(r.multi for r in rules)


def test_multiline_multi_pattern_and_bidirectional():
    src = """
merge: (matmul ?x ?w1), (matmul ?x ?w2)
    => (slice (matmul ?x (concat ?w1 ?w2 :axis 1)) :axis 1 :start 0 :end (dim ?w1 1)),
       (slice (matmul ?x (concat ?w1 ?w2 :axis 1)) :axis 1 :start (dim ?w1 1) :end (+ (dim ?w1 1) (dim ?w2 1)))
    if (weight ?w1) (weight ?w2)
assoc: (matmul (matmul ?a ?b) ?c) <=> (matmul ?a (matmul ?b ?c))
"""
    merge, assoc = parse_rules(src, "x.rules")
    assert merge.multi and len(merge.rhs) == 2 and merge.loc.line == 2 and merge.family == "x"
    assert [d.name for d in assoc.directions()] == ["assoc", "assoc:reverse"]
    text = rule_to_egglog(merge)
    assert "(WeightOnly v_w1)" in text and "(= s_w1 (shape v_w1))" in text and text.count("union") == 2


@pytest.mark.parametrize(
    "src, where, msg",
    [
        ("r: (foo ?a) => ?a", "2:5", "unknown op 'foo'"),
        ("r: (relu ?a ?b) => ?a", "2:5", "'relu' takes 1 input"),
        ("r: (relu ?a) => ?b", "2:17", r"right-hand variable \?b is not bound"),
        ("r: (softmax ?a :axes 1) => ?a", "2:22", "no attribute 'axes'"),
        ("r: (relu ?a) => ?a if (= (nosuch ?a) 1)", "2:27", "unknown function 'nosuch'"),
        ("r: (relu ?a) => (relu ?a", "2:17", "never closed"),
        ("r: (relu ?a) (relu ?a)", "2:1", "exactly one '=>'"),
        ("r: (split ?a :axis 0 :sizes [1 1]) => ?a", "2:5", "use slice"),
    ],
)
def test_malformed_rules_report_file_line_col(src, where, msg):
    with pytest.raises(RuleError, match=msg) as e:
        parse_rules("# header\n" + src, "bad.rules")
    assert str(e.value).startswith(f"bad.rules:{where}:")


def test_duplicate_rule_name_is_an_error():
    with pytest.raises(RuleError, match="defined twice"):
        parse_rules("a: (relu ?x) => ?x\na: (tanh ?x) => ?x", "d.rules")


def test_a_rule_feeding_a_float_op_applies_only_to_float_values():
    """add, sub and mul take int64 too; a right-hand side that gives a ?variable to a float-only op
    (pow, a scale) gets a dtype guard, so an int64 value never meets one (the dtype analysis would stop)."""
    rule = parse_rules("pow-two: (pow ?x :exponent 2.0) <=> (mul ?x ?x)")[0]
    forward, reverse = (rule_to_egglog(d) for d in rule.directions())
    assert "dtype" not in forward  # pow's input is float32 already
    assert '(= (dtype v_x) "float32")' in reverse
    idem = parse_rules("relu-idem: (relu (relu ?x)) => (relu ?x)")[0]
    assert "dtype" not in rule_to_egglog(idem.directions()[0])  # read by relu on the left: float32 already


def test_least_is_kept_apart_from_the_guards_and_compiles_to_a_min_function():
    """``(least EXPR)`` is not a guard that a concrete match can check (it compares matches): the rule keeps
    it apart, so the checker and the search, which read ``guards``, see the rule without it; egglog gets a
    function of the other variables holding the least EXPR, and the rewrite fires only where EXPR is it."""
    src = """m: (matmul ?x ?w1), (matmul ?x ?w2)
    => (matmul ?x ?w1), (matmul ?x ?w2)
    if (< (wlast ?w1) (wfirst ?w2)) (least (wfirst ?w2))"""
    (rule,) = parse_rules(src, "m.rules")
    assert [g.fn for g in rule.guards] == ["<"] and rule.least is not None and rule.least.loc.line == 3
    text = rule_to_egglog(rule)
    assert "(function least-m (T T) i64 :merge (min old new))" in text
    assert "((set (least-m v_x v_w1) least_v)) :ruleset analysis" in text
    assert "(= least_v (wfirst v_w2)) (= least_v (least-m v_x v_w1))) ((union r0" in text


@pytest.mark.parametrize(
    "src, msg",
    [
        ("r: (relu ?a) <=> (tanh ?a) if (least (rank ?a))", "use it in a '=>' rule"),
        ("r: (relu ?a) => ?a if (least (rank ?a)) (least (rank ?a))", "one \\(least ...\\) guard"),
        ("r: (relu ?a) => ?a if (least (shape ?a))", "integer EXPR"),
        ("r: (relu ?a) => ?a if (least 3)", "reads a \\?variable"),
        ("r: (relu ?a) => ?a if (least (rank ?a) 1)", "'least' takes 1 argument"),
    ],
)
def test_malformed_least(src, msg):
    with pytest.raises(RuleError, match=msg):
        parse_rules(src, "bad.rules")
