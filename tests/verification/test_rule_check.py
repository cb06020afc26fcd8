"""The rule checker: every shipped rule on random instances, and wrong rules caught with a counterexample."""

import pytest
import torch

from rewrite.ir.builder import GraphBuilder
from rewrite.rulelang.concrete import Env, apply_rule, eval_expr, eval_guard, match_rule
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import load_rule_file, parse_rules
from rewrite.verification.rulecheck.check import check_rule, check_rules
from rewrite.verification.rulecheck.draw import draw_envs

SHIPPED = load_rules()

# Shipped rules the checker finds unsound. Strict: when the rule is fixed the test
# XPASSes and fails, so remove the entry then.
KNOWN_UNSOUND: dict[str, str] = {}


def _shipped_params():
    for r in SHIPPED:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_UNSOUND[r.name])] if r.name in KNOWN_UNSOUND else []
        yield pytest.param(r, id=r.name, marks=marks)


@pytest.mark.parametrize("rule", list(_shipped_params()))
def test_shipped_rule_is_sound(rule):
    res = check_rule(rule)
    assert res.ok, str(res)


def test_every_shipped_direction_gets_three_distinct_draws():
    for rule in SHIPPED:
        for d in rule.directions():
            envs = draw_envs(d, 3)
            assert len(envs) == 3, d.name
            assert len({(tuple(sorted(e.shapes.items())), repr(sorted(e.attrs.items()))) for e in envs}) == 3


def test_wrong_rule_is_rejected_with_name_location_and_counterexample(tmp_path):
    path = tmp_path / "wrong.rules"
    path.write_text(
        "# distributing relu over add is wrong\nrelu-add: (relu (add ?a ?b)) => (add (relu ?a) (relu ?b))\n"
    )
    [res] = check_rules(load_rule_file(path))
    assert not res.ok
    assert res.rule == "relu-add" and res.where.endswith("wrong.rules:2")
    assert set(res.shapes) == {"a", "b"} and res.max_error > 1e-3
    assert "values differ" in res.message
    text = str(res)
    assert text.startswith("FAIL  relu-add") and "wrong.rules:2" in text and "?a=" in text


@pytest.mark.parametrize("name, rank", [("transpose-compose-3", 3), ("transpose-compose-4", 4)])
def test_transpose_compose_draws_valid_perms(name, rank):
    rule = next(r for r in SHIPPED if r.name == name)
    envs = draw_envs(rule, 6)
    assert len(envs) == 6
    for env in envs:
        assert len(env.shapes["x"]) == rank
        assert sorted(env.attrs["p"]) == list(range(rank)) and sorted(env.attrs["q"]) == list(range(rank))
    assert len({(env.attrs["p"], env.attrs["q"]) for env in envs}) > 1


@pytest.mark.parametrize(
    "src, msg",
    [
        ("r: (relu ?x) => ?x  if (= (rank ?x) 2) (= (rank ?x) 3)", "could not instantiate"),
        ("r: (relu ?x) => (transpose ?x :perm [1 0])  if (= (rank ?x) 2)", "root 1"),
        ("r: (relu ?x) => (reshape ?x :shape [(dim ?x 0)])  if (= (rank ?x) 2)", "ill-formed"),
        ("r: (relu ?x) => (slice ?x :axis 0 :start 0 :end (dim ?x (- 0 1)))", "cannot be evaluated"),
        # left-out attributes match any value, but take the default on the right
        ("r: (avgpool2d ?x :kernel ?k :stride ?s) => (avgpool2d ?x :kernel ?k :stride ?s)", "differ"),
    ],
)
def test_unsound_rules_fail_clearly(src, msg):
    res = check_rule(parse_rules(src, "bad.rules")[0])
    assert not res.ok and msg in res.message, str(res)
    assert res.where == "bad.rules:1"


def test_sampler_covers_concat_slice_reshape_pool_and_weight_order():
    src = """
concat-slice: (slice (concat ?a ?b :axis ?ax) :axis ?ax :start 0 :end ?e) => ?a  if (= ?e (dim ?a ?ax))
matmul-concat: (matmul ?x (concat ?a ?b :axis 1)) => (concat (matmul ?x ?a) (matmul ?x ?b) :axis 1)
    if (= (rank ?x) 2)
concat-concat: (matmul (concat ?a ?b :axis 1) (concat ?c ?d :axis 0)) => (add (matmul ?a ?c) (matmul ?b ?d))
    if (= (dim ?a 1) (dim ?c 0)) (= (rank ?a) 2)
slice-slice: (slice (slice ?x :axis ?a :start ?s1 :end ?e1) :axis ?a :start ?s2 :end ?e2)
    => (slice ?x :axis ?a :start (+ ?s1 ?s2) :end (+ ?s1 ?e2))
reshape-lit: (reshape (reshape ?x :shape [6]) :shape ?s) => (reshape ?x :shape ?s)
pool-relu: (maxpool2d (relu ?x) :kernel ?k :stride ?s :padding ?p :ceil_mode ?c)
    <=> (relu (maxpool2d ?x :kernel ?k :stride ?s :padding ?p :ceil_mode ?c))
gap-smul: (global_avgpool (smul ?x :scalar ?s)) <=> (smul (global_avgpool ?x) :scalar ?s)
ln: (relu (layernorm ?x ?g ?b :eps ?e)) => (relu (layernorm ?x ?g ?b :eps ?e))
reverse-order: (matmul ?x ?w2), (matmul ?x ?w1) => (matmul ?x ?w2), (matmul ?x ?w1)
    if (< (wlast ?w1) (wfirst ?w2)) (< (wfirst ?w2) (wlast ?w2))
"""
    results = check_rules(parse_rules(src, "extra.rules"))
    assert all(r.ok and r.draws >= 3 for r in results), "\n".join(map(str, results))


def test_evaluation_follows_egglog():
    env = Env(shapes={"x": (2, 3, 4)}, attrs={"p": (2, 0, 1)})

    def guard(text):
        return parse_rules(f"r: (transpose ?x :perm ?p) => ?x  if {text}")[0].guards[0]

    for holds in (
        "(= (/ (- 0 7) 2) (- 0 3))",
        "(= (/ 7 (- 0 2)) (- 0 3))",  # i64 division truncates
        "(= (dim ?x -1) 4)",
        "(= (at ?p 0) 2)",
        "(= (shape ?x) [2 3 4])",
        "(= (rank ?x) 3)",
    ):
        assert eval_expr(guard(holds), env) is True, holds
    # a failing egglog primitive makes a guard not hold: computed negative index, out of range, /0, no weight
    for undefined in (
        "(= (dim ?x (- 0 1)) 4)",
        "(= (dim ?x 3) 1)",
        "(= (at ?p 3) 1)",
        "(= (/ 1 0) 0)",
        "(= (wfirst ?x) 0)",
    ):
        assert not eval_guard(guard(undefined), env), undefined


def test_concrete_match_and_apply():
    b = GraphBuilder()
    x = b.input("x", (4, 8))
    w1, w2 = b.weight("w1", torch.randn(8, 3)), b.weight("w2", torch.randn(8, 5))
    y1, y2 = b.matmul(x, w1), b.matmul(x, w2)
    g = b.build([b.relu(b.relu(y1)), y2])
    merge = next(r for r in SHIPPED if r.name == "merge-matmul-shared-lhs")
    env = match_rule(merge, [y1, y2], g)
    assert env is not None and env.weights == {"w1", "w2"} and env.shapes["w2"] == (8, 5)
    assert match_rule(merge, [y2, y1], g) is None  # the guards keep one canonical order
    new = GraphBuilder()
    env.values = {name: new.input(name, env.shapes[name]) for name in env.shapes}
    outs = apply_rule(merge, env, new)
    assert [new.shape(v) for v in outs] == [(4, 3), (4, 5)]
    relu = parse_rules("relu-idem: (relu (relu ?x)) => (relu ?x)")[0]
    assert match_rule(relu, [g.outputs[0]], g).values["x"] == y1
