"""Indexing, comparison and selection ops with int64/bool values: each built and inferred, against
torch, through an egglog round-trip and compiled to LLVM; a GPT-2-style block from torch.export.

The transformers models (GPT2/BERT/LLaMA from small configs) are slow-marked at the end.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lower import compile_graph
from rewrite.egraph.limits import Limits
from rewrite.egraph.saturate import saturate
from rewrite.extract.egraph_data import read_serialized
from rewrite.frontends import FrontendError, from_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import TORCH_DTYPE
from rewrite.ir.errors import GraphError
from rewrite.ir.graph import Graph
from rewrite.pipeline import optimize
from rewrite.verification.numeric import compare, normwise_rel_err


def _embedding() -> Graph:
    b = GraphBuilder("embedding")
    table = b.weight("table", torch.randn(11, 6))
    ids = b.input("ids", (2, 5), dtype="int64")
    return b.build([b.embedding(table, ids)])


def _index_select() -> Graph:
    b = GraphBuilder("index_select")
    x = b.input("x", (4, 7, 3))
    idx = b.input("idx", (5,), dtype="int64")
    return b.build([b.index_select(x, idx, axis=1)])


def _gather() -> Graph:
    b = GraphBuilder("gather")
    x = b.input("x", (4, 7))
    idx = b.input("idx", (4, 3), dtype="int64")
    return b.build([b.gather(x, idx, axis=1)])


def _compare(op: str) -> Graph:
    b = GraphBuilder(op)
    x, y = b.input("x", (3, 1, 5)), b.input("y", (1, 4, 5))
    return b.build([b.op(op, x, y)])


def _compare_int() -> Graph:
    b = GraphBuilder("compare_int")
    i = b.input("i", (6,), dtype="int64")
    w = b.weight("k", torch.tensor([2], dtype=torch.int64))
    return b.build([b.op("lt", i, w), b.op("eq", i, w)])


def _where() -> Graph:
    b = GraphBuilder("where")
    x, y = b.input("x", (3, 5)), b.input("y", (3, 5))
    m = b.input("m", (1, 5), dtype="bool")
    return b.build([b.where(m, x, y)])


def _masked_fill() -> Graph:
    b = GraphBuilder("masked_fill")
    x = b.input("x", (2, 4, 4))
    causal = b.weight("causal", torch.ones(4, 4, dtype=torch.bool).triu(1).reshape(1, 4, 4))
    return b.build([b.softmax(b.masked_fill(x, causal, value=float("-inf")), axis=2)])


def _logical() -> Graph:
    b = GraphBuilder("logical")
    x = b.input("x", (3, 6))
    m1 = b.op("gt", x, b.weight("z", torch.zeros(1, 1)))
    m2 = b.input("m", (3, 6), dtype="bool")
    m = b.logical_or(b.logical_and(m1, b.logical_not(m2)), b.op("ne", x, x))
    return b.build([m, b.cast(m, dtype="float32"), b.cast(m, dtype="int64")])


CASES = {
    "embedding": _embedding,
    "index_select": _index_select,
    "gather": _gather,
    **{op: (lambda op=op: _compare(op)) for op in ("eq", "ne", "lt", "le", "gt", "ge")},
    "compare_int": _compare_int,
    "where": _where,
    "masked_fill": _masked_fill,
    "logical": _logical,
}

TORCH_REF = {
    "embedding": lambda g, i: [torch.nn.functional.embedding(i["ids"], g.weights["table"])],
    "index_select": lambda g, i: [torch.index_select(i["x"], 1, i["idx"])],
    "gather": lambda g, i: [torch.gather(i["x"], 1, i["idx"])],
    "where": lambda g, i: [torch.where(i["m"], i["x"], i["y"])],
    **{op: (lambda g, i, op=op: [getattr(torch, op)(i["x"], i["y"])]) for op in ("eq", "ne", "lt", "le", "gt", "ge")},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_build_infer_and_torch_reference(case):
    torch.manual_seed(0)
    g = CASES[case]()
    g.validate()
    inputs = g.random_inputs(3)
    outs = g.run(inputs)
    for t, v in zip(outs, g.outputs, strict=True):
        n = g.nodes[v.node]
        assert tuple(t.shape) == n.shapes[v.index] and t.dtype == TORCH_DTYPE[n.dtypes[v.index]]
    if case in TORCH_REF:
        for a, r in zip(outs, TORCH_REF[case](g, inputs), strict=True):
            assert torch.equal(a, r)


def test_random_int_inputs_are_valid_indices():
    g = _embedding()
    for seed in range(5):
        ids = g.random_inputs(seed)["ids"]
        assert ids.dtype == torch.int64 and 0 <= int(ids.min()) and int(ids.max()) < 11


def test_int_data_gathered_into_an_index_stays_in_the_smallest_table():
    """BERT's token-type ids: an int buffer gathered by position, then an index into a 2-row table."""
    b = GraphBuilder("token_types")
    types = b.input("types", (1, 16), dtype="int64")
    pos = b.input("pos", (1, 16), dtype="int64")
    picked = b.gather(types, pos, axis=1)
    g = b.build([b.embedding(b.weight("table", torch.randn(2, 4)), picked)])
    for seed in range(5):
        x = g.random_inputs(seed)
        assert int(x["types"].max()) < 2 and int(x["pos"].max()) < 16
        g.run(x)  # no IndexError


def test_dtype_rules_refuse_mixing():
    b = GraphBuilder("bad")
    x = b.input("x", (3,))
    i = b.input("i", (3,), dtype="int64")
    with pytest.raises(GraphError, match="add"):
        b.add(x, i)  # no implicit int -> float
    with pytest.raises(GraphError, match="embedding"):
        b.embedding(x, x)  # float indices
    with pytest.raises(GraphError):
        b.weight("h", torch.zeros(3, dtype=torch.float16).view(torch.int16))


@pytest.mark.parametrize("case", sorted(CASES))
def test_egglog_round_trip_shapes(case):
    torch.manual_seed(0)
    g = CASES[case]()
    sat = saturate(g, [], Limits(iterations=0))
    raw = sat.serialized()
    data = read_serialized(raw)
    let_class = {info["let"]: cid for cid, info in raw["class_data"].items() if "let" in info}
    assert not data.dropped
    for v, name in sat.encoding.lets.items():
        assert data.shapes[let_class[name]] == g.shape_of(v), (case, v)


@pytest.mark.parametrize("case", ["embedding", "gather", "masked_fill", "logical", "where"])
def test_optimize_with_the_rule_library_verifies(case):
    torch.manual_seed(0)
    g = CASES[case]()
    r = optimize(g, limits=Limits(iterations=4, nodes=4000, seconds=10), ilp_seconds=2)
    assert r.stats.verified is True
    inputs = g.random_inputs(1)
    for a, b in zip(g.run(inputs), r.graph.run(inputs), strict=True):
        assert compare(a, b).close


@pytest.mark.parametrize("case", sorted(CASES))
def test_llvm_compile_matches_torch(case):
    torch.manual_seed(0)
    g = CASES[case]()
    cg = compile_graph(g)
    inputs = g.random_inputs(5)
    got, ref = cg(inputs), g.run(inputs)
    for a, b in zip(got, ref, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.is_floating_point():
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert torch.equal(a, b)


def test_compiled_graph_checks_input_dtypes():
    cg = compile_graph(_embedding())
    with pytest.raises(Exception, match="ids"):
        cg({"ids": torch.zeros(2, 5, dtype=torch.int32)})


# ------------------------------------------------------------------ from torch.export


class _Block(nn.Module):
    """Token + position embeddings, one causal attention head with a masked_fill, tanh-gelu MLP."""

    def __init__(self, vocab: int = 50, d: int = 16, t: int = 8) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.ones(t, t, dtype=torch.bool).triu(1))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        _, t = ids.shape
        pos = torch.arange(t, dtype=torch.long)
        x = self.tok(ids) + self.pos(pos)
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        att = att.masked_fill(self.mask[:t, :t], float("-inf")).softmax(-1)
        x = x + self.proj(att @ v)
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def test_gpt2_style_block_imports_optimizes_verifies_and_compiles():
    torch.manual_seed(0)
    m = _Block().eval()
    ids = torch.randint(0, 50, (2, 8))
    g = from_torch(m, (ids,))
    assert g.inputs[0].dtype == "int64"
    ops = {n.op for n in g}  # torch.export decomposes masked_fill into where(mask, fill, x)
    assert {"embedding", "softmax"} <= ops and ops & {"masked_fill", "where"}
    ref = m(ids)
    assert compare(ref, g.run([ids])[0]).close
    r = optimize(g, limits=Limits(iterations=4, nodes=20000, seconds=20), ilp_seconds=5)
    assert r.stats.verified is True
    got = compile_graph(r.graph)([ids])[0]
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)


class _Rotary(nn.Module):
    """Tables computed from a buffer, like LLaMA's rotary embedding, with an op that has no registry
    entry (lgamma): evaluated at import."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = torch.arange(x.shape[1]).float()[:, None] @ self.inv_freq[None, :]
        emb = torch.cat((f, f), dim=-1)
        return x * emb.cos() + x * emb.lgamma()


def test_ops_without_entries_on_buffers_are_evaluated_at_import():
    m, x = _Rotary(), torch.randn(2, 5, 8)
    g = from_torch(m, (x,))
    assert "lgamma" not in {n.op for n in g}
    torch.testing.assert_close(g.run([x])[0], m(x))
    with pytest.raises(FrontendError, match="lgamma"):  # on a run-time value it still fails, by name
        from_torch(_LgammaOfInput(), (x,))


class _LgammaOfInput(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.lgamma(x)


class _Twice(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def test_float64_inputs_are_refused_by_name():
    with pytest.raises(FrontendError, match="input 'x' of dtype torch.float64"):
        from_torch(_Twice(), (torch.ones(3, dtype=torch.float64),))


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
def test_half_inputs_import_in_their_dtype(dt):
    """float16 and bfloat16 are stored dtypes: the input and output keep them, the op computes in float32
    and its result is rounded (``tests/frontends/test_half_precision.py`` has the rest)."""
    g = from_torch(_Twice(), (torch.ones(3, dtype=dt),))
    x = torch.tensor([1.0, 3.0, 1e4]).to(dt)
    assert g.run({g.inputs[0].attrs["name"]: x})[0].dtype == dt
    assert torch.equal(g.run({g.inputs[0].attrs["name"]: x})[0], x * 2)


# ------------------------------------------------------------------ transformers (slow)


def _hf(name: str):
    transformers = pytest.importorskip("transformers")
    common = dict(vocab_size=1000, hidden_size=64, num_attention_heads=4, intermediate_size=128)
    if name == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=64)
        cls = transformers.GPT2Model
    elif name.startswith("bert"):
        act = {"bert": "gelu", "bert-tanh-gelu": "gelu_pytorch_tanh"}[name]
        cfg = transformers.BertConfig(num_hidden_layers=2, max_position_embeddings=64, hidden_act=act, **common)
        cls = transformers.BertModel
    else:
        cfg = transformers.LlamaConfig(num_hidden_layers=2, num_key_value_heads=2, max_position_embeddings=64, **common)
        cls = transformers.LlamaModel
    cfg.use_cache = False
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    return cls(cfg).eval()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "bert-tanh-gelu", "bert", "llama"])
def test_transformers_small_models_import_and_compile(name):
    m = _hf(name)
    ids = torch.randint(0, 1000, (1, 16))
    ref = m(input_ids=ids)[0]
    g = from_torch(m, (ids,))
    assert g.inputs[0].dtype == "int64" and "embedding" in {n.op for n in g}
    assert compare(ref, g.run([ids])[0]).close
    got = compile_graph(g)([ids])[0]
    err = normwise_rel_err(got, ref)
    assert err <= 1e-4, err
