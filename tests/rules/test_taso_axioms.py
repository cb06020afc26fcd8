"""Every operator axiom of TASO (SOSP'19) is shipped or derivable with eqsat's rules.

TASO verifies its generated substitutions against a list of operator axioms
(``verify/verify.py`` in the TASO repository: 44 axioms and 3 lemmas).  Each one
is a case here, numbered in the order of that list, with TASO's ops mapped onto
ours: ewadd/ewmul -> add/mul, scalar_mul -> smul (the scalar is an attribute, so
a product of scalars is computed when the rule fires), split_0/split_1 -> slices,
pool2d_avg/max -> avgpool2d/maxpool2d, enlarge -> a pad2d'ed kernel with the
conv's padding grown to match, conv2d ACT RELU -> relu around the conv,
"same" padding -> padding (k-1)/2, and TASO's constant tensors -> eqsat's
constant source ops (rewrite/ir/ops/sources.py): const_one -> fill with value 1,
const_imm -> eye, const_iconv -> identity_kernel, const_pool -> avg_kernel (a
dense [C, C, kh, kw] kernel, as axiom 43 types it; the pooling it equals counts
its zero padding).  A case names the rules that derive it and is proven with
exactly those (``prove_equal``); the slow test proves every case with every
shipped rule.  All 44 axioms and the 3 lemmas are derived.

The same table, with the rule for each axiom, is in rules/README.md.
"""

from dataclasses import dataclass, field

import pytest

from rewrite.egraph.limits import Limits
from rewrite.rulelang.loader import load_rules
from rewrite.verification.prove import prove_equal

ALL = load_rules()
BY_NAME = {r.name: r for r in ALL}
LIMITS = Limits(iterations=8, nodes=20_000, seconds=20)

S = (3, 4)  # an elementwise operand
IMG, K3 = (2, 4, 6, 6), (5, 4, 3, 3)  # a conv input (NCHW) and a 3x3 kernel (OIHW)
POOL = ":kernel [3 3] :stride [1 1] :padding [1 1]"  # TASO's 3x3 pool, stride 1, "same"


@dataclass(frozen=True)
class Axiom:
    number: str  # position in TASO's list ("L1".. for its lemmas)
    name: str
    lhs: str
    rhs: str
    shapes: dict[str, tuple[int, ...]]
    rules: tuple[str, ...]  # the rules that derive it; () only for a trivial one
    weights: tuple[str, ...] = ()
    status: str = "derived"  # "shipped": one rule is the axiom; "trivial": both sides are one term
    notes: dict[str, str] = field(default_factory=dict)


AXIOMS = [
    Axiom(
        "1",
        "ewadd is associative",
        "(add ?x (add ?y ?z))",
        "(add (add ?x ?y) ?z)",
        {"x": S, "y": S, "z": S},
        ("add-assoc",),
        status="shipped",
    ),
    Axiom("2", "ewadd is commutative", "(add ?x ?y)", "(add ?y ?x)", {"x": S, "y": S}, ("add-comm",), status="shipped"),
    Axiom(
        "3",
        "ewmul is associative",
        "(mul ?x (mul ?y ?z))",
        "(mul (mul ?x ?y) ?z)",
        {"x": S, "y": S, "z": S},
        ("mul-assoc",),
        status="shipped",
    ),
    Axiom("4", "ewmul is commutative", "(mul ?x ?y)", "(mul ?y ?x)", {"x": S, "y": S}, ("mul-comm",), status="shipped"),
    Axiom(
        "5",
        "ewmul distributes over ewadd",
        "(mul (add ?x ?y) ?z)",
        "(add (mul ?x ?z) (mul ?y ?z))",
        {"x": S, "y": S, "z": S},
        ("mul-add-distrib", "mul-comm"),
    ),
    Axiom(
        "6",
        "scalar_mul is associative",
        "(smul (smul ?x :scalar 2.0) :scalar 3.0)",
        "(smul ?x :scalar 6.0)",
        {"x": S},
        ("smul-smul",),
        status="shipped",
    ),
    Axiom(
        "7",
        "scalar_mul distributes over ewadd",
        "(smul (add ?x ?y) :scalar 2.5)",
        "(add (smul ?x :scalar 2.5) (smul ?y :scalar 2.5))",
        {"x": S, "y": S},
        ("smul-add",),
        status="shipped",
    ),
    Axiom(
        "8",
        "scalar_mul commutes with ewmul",
        "(smul (mul ?x ?y) :scalar 2.5)",
        "(mul ?x (smul ?y :scalar 2.5))",
        {"x": S, "y": S},
        ("smul-mul",),
        status="shipped",
    ),
    Axiom(
        "9",
        "scalar_mul commutes with transpose",
        "(smul (transpose ?x :perm [1 0]) :scalar 2.5)",
        "(transpose (smul ?x :scalar 2.5) :perm [1 0])",
        {"x": S},
        ("smul-transpose",),
        status="shipped",
    ),
    Axiom(
        "10",
        "scalar_mul commutes with matmul",
        "(smul (matmul ?x ?y) :scalar 2.5)",
        "(matmul ?x (smul ?y :scalar 2.5))",
        {"x": (3, 4), "y": (4, 5)},
        ("smul-matmul-r",),
        status="shipped",
    ),
    Axiom(
        "11",
        "scalar_mul and concat",
        "(smul (concat ?x ?y :axis 1) :scalar 2.5)",
        "(concat (smul ?x :scalar 2.5) (smul ?y :scalar 2.5) :axis 1)",
        {"x": (3, 4), "y": (3, 2)},
        ("smul-concat",),
        status="shipped",
    ),
    Axiom(
        "12",
        "scalar_mul moves from a conv's input to its weight",
        "(relu (conv2d (smul ?x :scalar 2.5) ?w :stride [2 2] :padding [1 1]))",
        "(relu (conv2d ?x (smul ?w :scalar 2.5) :stride [2 2] :padding [1 1]))",
        {"x": IMG, "w": K3},
        ("smul-conv-input", "smul-conv-weight"),
    ),
    Axiom(
        "13",
        "scalar_mul and conv2d",
        "(smul (conv2d ?x ?w :padding [1 1]) :scalar 2.5)",
        "(conv2d (smul ?x :scalar 2.5) ?w :padding [1 1])",
        {"x": IMG, "w": K3},
        ("smul-conv-input",),
        status="shipped",
    ),
    Axiom(
        "14",
        "relu and conv2d (ACT_RELU)",
        "(relu (conv2d ?x ?w :padding [1 1]))",
        "(relu (conv2d ?x ?w :padding [1 1]))",
        {"x": IMG, "w": K3},
        (),
        status="trivial",
        notes={"why": "ACT_RELU is a relu around the conv: both sides are one term"},
    ),
    Axiom(
        "15",
        "relu and concat",
        "(relu (concat ?x ?y :axis 0))",
        "(concat (relu ?x) (relu ?y) :axis 0)",
        {"x": (3, 4), "y": (2, 4)},
        ("relu-concat",),
        status="shipped",
    ),
    Axiom(
        "16",
        "relu and transpose commute",
        "(relu (transpose ?x :perm [1 0]))",
        "(transpose (relu ?x) :perm [1 0])",
        {"x": S},
        ("relu-transpose",),
        status="shipped",
    ),
    Axiom(
        "17",
        "conv2d is linear in its weight",
        "(conv2d ?x (add ?y ?z) :padding [1 1])",
        "(add (conv2d ?x ?y :padding [1 1]) (conv2d ?x ?z :padding [1 1]))",
        {"x": IMG, "y": K3, "z": K3},
        ("taso-conv-distrib-weight",),
        status="shipped",
    ),
    Axiom(
        "18",
        "conv2d is linear in its input",
        "(conv2d (add ?x ?y) ?z :stride [2 2])",
        "(add (conv2d ?x ?z :stride [2 2]) (conv2d ?y ?z :stride [2 2]))",
        {"x": IMG, "y": IMG, "z": K3},
        ("taso-conv-distrib-input",),
        status="shipped",
    ),
    Axiom(
        "19",
        "a sum of convs is a conv of concats",
        "(add (conv2d ?x ?y :padding [1 1]) (conv2d ?z ?w :padding [1 1]))",
        "(conv2d (concat ?x ?z :axis 1) (concat ?y ?w :axis 1) :padding [1 1])",
        {"x": IMG, "y": K3, "z": (2, 3, 6, 6), "w": (5, 3, 3, 3)},
        ("taso-add-conv-merge",),
        weights=("y", "w"),
        status="shipped",
    ),
    Axiom(
        "20",
        "a sum of matmuls is a matmul of concats",
        "(add (matmul ?x ?y) (matmul ?z ?w))",
        "(matmul (concat ?x ?z :axis 1) (concat ?y ?w :axis 0))",
        {"x": (3, 4), "y": (4, 5), "z": (3, 2), "w": (2, 5)},
        ("matmul-concat-sum",),
        weights=("y", "w"),
        status="shipped",
    ),
    Axiom(
        "21",
        "concat of ewadds",
        "(concat (add ?x ?y) (add ?z ?w) :axis 1)",
        "(add (concat ?x ?z :axis 1) (concat ?y ?w :axis 1))",
        {"x": S, "y": S, "z": (3, 2), "w": (3, 2)},
        ("add-concat",),
        status="shipped",
    ),
    Axiom(
        "22",
        "concat of ewmuls",
        "(concat (mul ?x ?y) (mul ?z ?w) :axis 0)",
        "(mul (concat ?x ?z :axis 0) (concat ?y ?w :axis 0))",
        {"x": S, "y": S, "z": (2, 4), "w": (2, 4)},
        ("mul-concat",),
        status="shipped",
    ),
    Axiom(
        "23",
        "convs sharing a weight, batch-concatenated",
        "(concat (relu (conv2d ?x ?z :padding [1 1])) (relu (conv2d ?y ?z :padding [1 1])) :axis 0)",
        "(relu (conv2d (concat ?x ?y :axis 0) ?z :padding [1 1]))",
        {"x": IMG, "y": (3, 4, 6, 6), "z": K3},
        ("taso-concat-conv-batch", "relu-concat"),
    ),
    Axiom(
        "24",
        "convs sharing an input, channel-concatenated",
        "(concat (conv2d ?x ?y :padding [1 1]) (conv2d ?x ?z :padding [1 1]) :axis 1)",
        "(conv2d ?x (concat ?y ?z :axis 0) :padding [1 1])",
        {"x": IMG, "y": K3, "z": (2, 4, 3, 3)},
        ("taso-concat-conv-shared-input",),
        status="shipped",
    ),
    Axiom(
        "25",
        "matmul is associative",
        "(matmul ?x (matmul ?y ?z))",
        "(matmul (matmul ?x ?y) ?z)",
        {"x": (2, 3), "y": (3, 4), "z": (4, 5)},
        ("matmul-assoc",),
        status="shipped",
    ),
    Axiom(
        "26",
        "split_0 of a concat",
        "(slice (concat ?x ?y :axis 1) :axis 1 :start 0 :end 3)",
        "?x",
        {"x": (2, 3), "y": (2, 4)},
        ("slice-concat-first", "slice-whole-axis"),
    ),
    Axiom(
        "27",
        "split_1 of a concat",
        "(slice (concat ?x ?y :axis 1) :axis 1 :start 3 :end 7)",
        "?y",
        {"x": (2, 3), "y": (2, 4)},
        ("slice-concat-second", "slice-whole-axis"),
    ),
    Axiom(
        "28",
        "matmul of a column concat",
        "(matmul ?x (concat ?y ?z :axis 1))",
        "(concat (matmul ?x ?y) (matmul ?x ?z) :axis 1)",
        {"x": (3, 4), "y": (4, 2), "z": (4, 5)},
        ("split-matmul-cols",),
        status="shipped",
    ),
    Axiom(
        "29",
        "matmul distributes over ewadd",
        "(matmul ?x (add ?y ?z))",
        "(add (matmul ?x ?y) (matmul ?x ?z))",
        {"x": (3, 4), "y": (4, 5), "z": (4, 5)},
        ("matmul-distrib-l",),
        status="shipped",
    ),
    Axiom(
        "30",
        "transpose is an involution",
        "(transpose (transpose ?x :perm [1 0]) :perm [1 0])",
        "?x",
        {"x": S},
        ("transpose-inv-2d",),
        status="shipped",
    ),
    Axiom(
        "31",
        "transpose of a matmul",
        "(transpose (matmul ?x ?y) :perm [1 0])",
        "(matmul (transpose ?y :perm [1 0]) (transpose ?x :perm [1 0]))",
        {"x": (3, 4), "y": (4, 5)},
        ("transpose-matmul",),
        status="shipped",
    ),
    Axiom(
        "32",
        "transpose of a row concat",
        "(transpose (concat ?x ?y :axis 0) :perm [1 0])",
        "(concat (transpose ?x :perm [1 0]) (transpose ?y :perm [1 0]) :axis 1)",
        {"x": (3, 4), "y": (2, 4)},
        ("transpose-concat-0",),
        status="shipped",
    ),
    Axiom(
        "33",
        "concat geometry (block interchange)",
        "(concat (concat ?x ?y :axis 1) (concat ?z ?w :axis 1) :axis 0)",
        "(concat (concat ?x ?z :axis 0) (concat ?y ?w :axis 0) :axis 1)",
        {"x": (2, 3), "y": (2, 4), "z": (5, 3), "w": (5, 4)},
        ("taso-concat-block-swap",),
        status="shipped",
    ),
    Axiom(
        "34",
        "transpose of an ewadd",
        "(transpose (add ?x ?y) :perm [1 0])",
        "(add (transpose ?x :perm [1 0]) (transpose ?y :perm [1 0]))",
        {"x": S, "y": S},
        ("transpose-add",),
        status="shipped",
    ),
    Axiom(
        "35",
        "transpose of an ewmul",
        "(transpose (mul ?x ?y) :perm [1 0])",
        "(mul (transpose ?x :perm [1 0]) (transpose ?y :perm [1 0]))",
        {"x": S, "y": S},
        ("transpose-mul",),
        status="shipped",
    ),
    Axiom(
        "36",
        "avg pooling and channel concat",
        f"(concat (avgpool2d ?x {POOL}) (avgpool2d ?y {POOL}) :axis 1)",
        f"(avgpool2d (concat ?x ?y :axis 1) {POOL})",
        {"x": IMG, "y": (2, 3, 6, 6)},
        ("concat-avgpool",),
        status="shipped",
    ),
    Axiom(
        "37",
        "max pooling and batch concat",
        f"(concat (maxpool2d ?x {POOL}) (maxpool2d ?y {POOL}) :axis 0)",
        f"(maxpool2d (concat ?x ?y :axis 0) {POOL})",
        {"x": IMG, "y": (3, 4, 6, 6)},
        ("concat-maxpool",),
        status="shipped",
    ),
    Axiom(
        "38",
        "max pooling and channel concat",
        f"(concat (maxpool2d ?x {POOL}) (maxpool2d ?y {POOL}) :axis 1)",
        f"(maxpool2d (concat ?x ?y :axis 1) {POOL})",
        {"x": IMG, "y": (2, 3, 6, 6)},
        ("concat-maxpool",),
        status="shipped",
    ),
    Axiom(
        "39",
        "conv2d with const_pool is avg pooling",
        "(conv2d ?x (avg_kernel :channels 4 :kernel [3 3]) :stride [2 2] :padding [1 1])",
        "(avgpool2d ?x :kernel [3 3] :stride [2 2] :padding [1 1])",
        {"x": IMG},
        ("conv-avg-kernel",),
        status="shipped",
        notes={"why": "avg pooling that counts its zero padding (count_include_pad 1), or has none"},
    ),
    Axiom(
        "40",
        "conv2d with const_iconv is the identity",
        "(conv2d ?x (identity_kernel :channels 4 :kernel [3 3]) :padding [1 1])",
        "?x",
        {"x": IMG},
        ("conv-identity-kernel",),
        status="shipped",
    ),
    Axiom(
        "41",
        "matmul with const_imm is the identity",
        "(matmul ?x (eye :n 4))",
        "?x",
        {"x": S},
        ("matmul-eye",),
        status="shipped",
    ),
    Axiom(
        "42",
        "ewmul with const_one is the identity",
        "(mul ?x (fill :shape [3 4] :value 1.0))",
        "?x",
        {"x": S},
        ("mul-fill", "smul-one"),
    ),
    Axiom(
        "43",
        "avg pooling of const_iconv is const_pool",
        f"(avgpool2d (identity_kernel :channels 4 :kernel [3 3]) {POOL})",
        "(avg_kernel :channels 4 :kernel [3 3])",
        {},
        ("avgpool-identity-kernel",),
        status="shipped",
    ),
    Axiom(
        "44a",
        "enlarge a 1x1 kernel (same padding)",
        "(conv2d ?x ?w)",
        "(conv2d ?x (pad2d ?w :pads [1 1 1 1]) :padding [1 1])",
        {"x": IMG, "w": (5, 4, 1, 1)},
        ("enlarge-conv-1x1",),
        weights=("w",),
        status="shipped",
    ),
    Axiom(
        "44b",
        "enlarge a 1x3 kernel (same padding)",
        "(conv2d ?x ?w :stride [2 2] :padding [0 1])",
        "(conv2d ?x (pad2d ?w :pads [1 1 0 0]) :stride [2 2] :padding [1 1])",
        {"x": IMG, "w": (5, 4, 1, 3)},
        ("enlarge-conv-1x3",),
        weights=("w",),
        status="shipped",
    ),
    Axiom(
        "44c",
        "enlarge a 3x1 kernel (same padding)",
        "(conv2d ?x ?w :padding [1 0])",
        "(conv2d ?x (pad2d ?w :pads [0 0 1 1]) :padding [1 1])",
        {"x": IMG, "w": (5, 4, 3, 1)},
        ("enlarge-conv-3x1",),
        weights=("w",),
        status="shipped",
    ),
    Axiom(
        "L1",
        "transpose of const_imm (lemma)",
        "(transpose (eye :n 4) :perm [1 0])",
        "(eye :n 4)",
        {},
        ("transpose-eye",),
        status="shipped",
    ),
    Axiom(
        "L2", "const_imm times x (lemma)", "(matmul (eye :n 3) ?x)", "?x", {"x": S}, ("eye-matmul",), status="shipped"
    ),
    Axiom(
        "L3",
        "avg pooling and batch concat (lemma)",
        f"(concat (avgpool2d ?x {POOL}) (avgpool2d ?y {POOL}) :axis 0)",
        f"(avgpool2d (concat ?x ?y :axis 0) {POOL})",
        {"x": IMG, "y": (3, 4, 6, 6)},
        ("concat-avgpool",),
        status="shipped",
    ),
]


def _id(a: Axiom) -> str:
    return f"taso-{a.number}"


def _prove(a: Axiom, rules):
    return prove_equal(a.lhs, a.rhs, a.shapes, rules=rules, limits=LIMITS, weights=a.weights)


def test_the_list_is_taso_s():
    assert len([a for a in AXIOMS if not a.number.startswith("L")]) == 46  # axioms 1-43 and 44 in three kernel shapes
    assert len({a.number.rstrip("abc") for a in AXIOMS if not a.number.startswith("L")}) == 44
    assert [a.number for a in AXIOMS if a.number.startswith("L")] == ["L1", "L2", "L3"]
    assert all(a.rules or a.status == "trivial" for a in AXIOMS)  # every one is shipped or derived


# each proof pays ~0.75 s of e-graph setup: the fast tier proves every other axiom, the slow tier the rest
@pytest.mark.parametrize(
    "axiom", [pytest.param(a, marks=pytest.mark.slow if i % 2 else ()) for i, a in enumerate(AXIOMS)], ids=_id
)
def test_axiom_is_derived_by_its_rules(axiom: Axiom):
    missing = [n for n in axiom.rules if n not in BY_NAME]
    assert not missing, f"rules {missing} are not shipped"
    r = _prove(axiom, [BY_NAME[n] for n in axiom.rules])
    assert r.equal, f"TASO axiom {axiom.number} ({axiom.name}) not derived: {r.stop_reason}"
    if axiom.status == "trivial":
        assert r.iterations == 0 and not axiom.rules


@pytest.mark.slow
@pytest.mark.parametrize("axiom", [a for a in AXIOMS if a.rules], ids=_id)
def test_axiom_is_derived_by_the_shipped_rule_set(axiom: Axiom):
    assert _prove(axiom, ALL).equal


# ------------------------------------------------------------------ beyond TASO's list: where pooling is sound

K1 = (6, 4, 1, 1)  # a 1x1 kernel (OIHW) for IMG's 4 channels
BEYOND = [
    ("avg pooling is additive", f"(avgpool2d (add ?x ?y) {POOL})",
     f"(add (avgpool2d ?x {POOL}) (avgpool2d ?y {POOL}))", {"x": IMG, "y": IMG}, ("avgpool-add",)),
    ("avg pooling commutes with a scale", f"(avgpool2d (smul ?x :scalar -2.5) {POOL})",
     f"(smul (avgpool2d ?x {POOL}) :scalar -2.5)", {"x": IMG}, ("avgpool-smul",)),
    ("max pooling commutes with a positive scale", f"(maxpool2d (smul ?x :scalar 2.5) {POOL})",
     f"(smul (maxpool2d ?x {POOL}) :scalar 2.5)", {"x": IMG}, ("maxpool-smul",)),
    ("avg pooling moves before a 1x1 conv (padding counted as zeros)", f"(avgpool2d (conv2d ?x ?w) {POOL})",
     f"(conv2d (avgpool2d ?x {POOL}) ?w)", {"x": IMG, "w": K1}, ("avgpool-conv1x1",)),
    ("unpadded avg pooling moves before a 1x1 conv with a bias",
     '(avgpool2d (conv2d_bias_act ?x ?w ?b :act "none") :kernel [2 2] :stride [2 2])',
     '(conv2d_bias_act (avgpool2d ?x :kernel [2 2] :stride [2 2]) ?w ?b :act "none")',
     {"x": IMG, "w": K1, "b": (6,)}, ("avgpool-conv1x1-bias",)),
    ("global avg pooling moves before a 1x1 conv", "(global_avgpool (conv2d ?x ?w :groups 2))",
     "(conv2d (global_avgpool ?x) ?w :groups 2)", {"x": IMG, "w": (6, 2, 1, 1)}, ("global-avgpool-conv1x1",)),
]  # fmt: skip


@pytest.mark.parametrize("name, lhs, rhs, shapes, rules", BEYOND, ids=[b[0] for b in BEYOND])
def test_sound_pooling_rewrites_are_derived(name, lhs, rhs, shapes, rules):
    r = prove_equal(lhs, rhs, shapes, rules=[BY_NAME[n] for n in rules], limits=LIMITS)
    assert r.equal


UNSOUND = [
    ("max pooling and a negative scale", f"(maxpool2d (smul ?x :scalar -2.5) {POOL})",
     f"(smul (maxpool2d ?x {POOL}) :scalar -2.5)", {"x": IMG}),
    ("max pooling and add", f"(maxpool2d (add ?x ?y) {POOL})",
     f"(add (maxpool2d ?x {POOL}) (maxpool2d ?y {POOL}))", {"x": IMG, "y": IMG}),
    ("avg pooling and a 3x3 conv", f"(avgpool2d (conv2d ?x ?y :padding [1 1]) {POOL})",
     f"(conv2d (avgpool2d ?x {POOL}) ?y :padding [1 1])", {"x": IMG, "y": K3}),
    ("padded avg pooling and a biased 1x1 conv", f'(avgpool2d (conv2d_bias_act ?x ?y ?b :act "none") {POOL})',
     f'(conv2d_bias_act (avgpool2d ?x {POOL}) ?y ?b :act "none")', {"x": IMG, "y": K1, "b": (6,)}),
]  # fmt: skip


@pytest.mark.parametrize("name, lhs, rhs, shapes", UNSOUND, ids=[u[0] for u in UNSOUND])
def test_unsound_pooling_rewrites_are_not_derived(name, lhs, rhs, shapes):
    r = prove_equal(lhs, rhs, shapes, rules=ALL, limits=Limits(iterations=4, nodes=20_000, seconds=20))
    assert not r.equal


# ------------------------------------------------------------------ the splits (rules/split.rules) on their own

SPLITS = [
    ("split-matmul-rows", "(matmul (concat ?x ?y :axis 0) ?z)", "(concat (matmul ?x ?z) (matmul ?y ?z) :axis 0)",
     {"x": (3, 4), "y": (2, 4), "z": (4, 5)}),
    ("split-conv-batch", "(conv2d (concat ?x ?y :axis 0) ?z :padding [1 1])",
     "(concat (conv2d ?x ?z :padding [1 1]) (conv2d ?y ?z :padding [1 1]) :axis 0)",
     {"x": IMG, "y": (3, 4, 6, 6), "z": K3}),
    ("split-conv-out", "(conv2d ?x (concat ?y ?z :axis 0) :stride [2 2])",
     "(concat (conv2d ?x ?y :stride [2 2]) (conv2d ?x ?z :stride [2 2]) :axis 1)",
     {"x": IMG, "y": K3, "z": (2, 4, 3, 3)}),
    ("slice-matmul-cols", "(slice (matmul ?x ?y) :axis 1 :start 1 :end 3)",
     "(matmul ?x (slice ?y :axis 1 :start 1 :end 3))", {"x": (3, 4), "y": (4, 5)}),
    ("slice-conv-out", "(slice (conv2d ?x ?y :padding [1 1]) :axis 1 :start 2 :end 5)",
     "(conv2d ?x (slice ?y :axis 0 :start 2 :end 5) :padding [1 1])", {"x": IMG, "y": K3}),
]  # fmt: skip


@pytest.mark.parametrize("rule, lhs, rhs, shapes", SPLITS, ids=[s[0] for s in SPLITS])
def test_each_split_derives_its_equation(rule, lhs, rhs, shapes):
    assert BY_NAME[rule].family == "split"
    assert prove_equal(lhs, rhs, shapes, rules=[BY_NAME[rule]], limits=LIMITS).equal
