"""ONNX ``Attention`` (opsets 23-25) and ``RotaryEmbedding`` (opset 23) as registry ops.

Both follow onnx's reference implementation (``onnx/reference/ops/op_attention.py``,
``op_rotary_embedding.py``), which the node tests' expected outputs come from.

Attention is the torch frontend's pattern ``softmax(q @ k^T * scale + bias) @ v``: a matmul against
the transposed keys, an ``smul`` by the scale, one ``add`` of an additive bias, a softmax and a
matmul.  The bias (0 where a key may be attended, -inf where not, or a float mask's values) sums
``attn_mask``, the causal frontier, the sliding window and ``nonpad_kv_seqlen``'s padding; the
parts known at import time are summed there.  A query row whose bias is -inf everywhere (no key
attended) gives zeros, as the spec says, not softmax's NaN: a ``where`` on the probabilities, only
where such a row exists (a constant bias) or may exist (a run-time mask).  Grouped key/value heads
(GQA) are a rank-5 broadcasting matmul over the query heads of each group: reshapes only, no copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from rewrite.frontends.onnx.context import (
    Ctx,
    Refuse,
    Tensor,
    handles,
    one_output,
    only_attrs,
    onnx_dtype_name,
    opt_input,
)
from rewrite.ir.dtypes import BOOL, FLOAT32, INT64
from rewrite.ir.graph import Value

NEG_INF = float("-inf")
_ATTENTION_ATTRS = {
    "scale",
    "is_causal",
    "q_num_heads",
    "kv_num_heads",
    "softcap",
    "softmax_precision",
    "qk_matmul_output_mode",
    "left_window_size",  # opset 25
    "right_window_size",  # opset 25
}


def _float32(c: Ctx, t: Tensor, what: str) -> None:
    if c.dtype(t) != FLOAT32:
        raise Refuse(f"{what} is {c.dtype(t)}; it must be float32")


def _rs(c: Ctx, v: Value, shape: tuple[int, ...]) -> Value:
    """``v`` reshaped (no node when the shape is already ``shape``)."""
    return v if c.shape(v) == shape else c.add("reshape", [v], shape=shape)


def _full(c: Ctx, value: float, rank: int = 4) -> Value:
    """A one-element float32 constant of ``rank`` (broadcast by the elementwise op reading it)."""
    return c.value(np.full((1,) * rank, value, np.float32))


def _additive(keep: np.ndarray) -> np.ndarray:
    """A bool keep mask as the reference's bias: 0 where true, -inf where false."""
    return np.where(keep, np.float32(0), np.float32(NEG_INF)).astype(np.float32)


# ---------------------------------------------------------------- Attention: heads
def _split_heads(c: Ctx, t: Tensor, heads: int, what: str) -> Value:
    """A 3-d [B, S, H * D] input as [B, H, S, D] (reshape, transpose), as the reference reads it."""
    b, s, hidden = c.shape(t)
    if hidden % heads:
        raise Refuse(f"{what} hidden size {hidden} is not a multiple of its {heads} heads")
    x = _rs(c, c.value(t), (b, s, heads, hidden // heads))
    return c.add("transpose", [x], perm=(0, 2, 1, 3))


def _qkv(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> tuple[Value, Value, Value]:
    """Q, K, V as [B, H, S, D] values."""
    q, k, v = (c.env[n.input[i]] for i in range(3))
    for what, t in (("Q", q), ("K", k), ("V", v)):
        _float32(c, t, what)
    ranks = tuple(len(c.shape(t)) for t in (q, k, v))
    if ranks == (3, 3, 3):
        hq, hkv = int(a.get("q_num_heads", 0)), int(a.get("kv_num_heads", 0))
        if hq <= 0 or hkv <= 0:
            raise Refuse("3-d Q, K, V need positive q_num_heads and kv_num_heads attributes")
        return _split_heads(c, q, hq, "Q"), _split_heads(c, k, hkv, "K"), _split_heads(c, v, hkv, "V")
    if ranks == (4, 4, 4):
        if "q_num_heads" in a or "kv_num_heads" in a:
            # opset 25's reference rejects them; 23/24's reference ignores them while its function body
            # reads the inputs as 3-d: no one meaning to follow
            raise Refuse("q_num_heads / kv_num_heads with 4-d Q, K, V (they belong to 3-d inputs)")
        return c.value(q), c.value(k), c.value(v)
    raise Refuse(f"Q, K, V must all be 3-d or all 4-d, got ranks {ranks}")


def _with_past(c: Ctx, n: onnx.NodeProto, k: Value, v: Value) -> tuple[Value, Value, int]:
    """K and V after the past cache (concatenated before them on the sequence axis) and its length."""
    pk_name, pv_name = opt_input(n, 4), opt_input(n, 5)
    if bool(pk_name) != bool(pv_name):
        raise Refuse("past_key and past_value must be given together")
    if not pk_name:
        return k, v, 0
    pk, pv = c.env[pk_name], c.env[pv_name]
    _float32(c, pk, "past_key")
    _float32(c, pv, "past_value")
    b, h, _, d = c.shape(k)
    dv = c.shape(v)[3]
    ps = c.shape(pk)
    if len(ps) != 4 or (ps[0], ps[1], ps[3]) != (b, h, d) or c.shape(pv) != (b, h, ps[2], dv):
        raise Refuse(
            f"past_key {list(ps)} / past_value {list(c.shape(pv))} must be [{b}, {h}, P, {d}] / [{b}, {h}, P, {dv}]"
        )
    k = c.add("concat", [c.value(pk), k], axis=2)
    v = c.add("concat", [c.value(pv), v], axis=2)
    return k, v, ps[2]


# ---------------------------------------------------------------- Attention: the bias
def _mask(c: Ctx, t: Tensor, shape: tuple[int, int, int, int]) -> np.ndarray | Value:
    """``attn_mask`` as a rank-4 additive float32 bias over the whole key length ``shape[3]``: a bool mask is
    0 where true and -inf where false; a shorter last axis is padded with -inf (the reference pads it,
    never broadcasts it)."""
    dt, ms = c.dtype(t), c.shape(t)
    if dt not in (BOOL, FLOAT32):
        raise Refuse(f"attn_mask is {dt}; it must be bool or float32")
    s = shape[3]
    m4 = (1,) * (4 - len(ms)) + ms
    if not 0 < len(ms) <= 4 or m4[3] > s or any(m not in (1, w) for m, w in zip(m4[:3], shape[:3])):
        raise Refuse(f"attn_mask of shape {list(ms)} does not broadcast to {list(shape)}")
    pad = s - m4[3]
    if isinstance(t, np.ndarray):
        m = _additive(t) if dt == BOOL else t
        m = m.reshape(m4)
        if pad:
            m = np.concatenate([m, np.full(m4[:3] + (pad,), NEG_INF, np.float32)], axis=3)
        return m
    v = c.value(c.rank_up(t, 4))
    if dt == BOOL:
        v = c.add("where", [v, _full(c, 0.0), _full(c, NEG_INF)])
    if pad:
        v = c.add("concat", [v, c.value(np.full(m4[:3] + (pad,), NEG_INF, np.float32))], axis=3)
    return v


def _frontier(lq: int, s: int, causal: bool, left: int, right: int, padded: bool) -> tuple[np.ndarray | None, ...]:
    """Int64 bounds ``lo``, ``hi`` ([1, 1, lq, s], None when unbounded) such that query i may attend key j iff
    ``lo <= n <= hi``, with n the count of keys before the query block's end (the offset + lq).

    With the reference's offset o = n - lq: causal j <= i + o; window i + o - j <= left and
    j - i - o <= right; padding (``nonpad_kv_seqlen``) j < n.  Each is one bound on n, so a run-time
    n costs two comparisons however many constraints there are.
    """
    i = np.arange(lq, dtype=np.int64).reshape(lq, 1)
    j = np.arange(s, dtype=np.int64).reshape(1, s)
    d = j - i + lq
    los = [d] if causal else []
    if right >= 0:
        los.append(d - right)
    if padded:
        los.append(np.broadcast_to(j + 1, (lq, s)))
    lo = np.maximum.reduce(los).reshape(1, 1, lq, s) if los else None
    hi = (d + left).reshape(1, 1, lq, s) if left >= 0 else None
    return lo, hi


def _structure(
    c: Ctx, n: onnx.NodeProto, a: dict[str, Any], b: int, lq: int, s: int, past: int
) -> np.ndarray | Value | None:
    """The causal, window and padding constraints as a rank-4 additive bias (None when there are none)."""
    causal = int(a.get("is_causal", 0))
    left, right = int(a.get("left_window_size", -1)), int(a.get("right_window_size", -1))
    if causal not in (0, 1) or left < -1 or right < -1:
        raise Refuse(f"is_causal={causal}, left_window_size={left}, right_window_size={right} out of range")
    nonpad_name = opt_input(n, 6)
    if nonpad_name and past:
        raise Refuse("nonpad_kv_seqlen cannot be combined with past_key / past_value")
    lo, hi = _frontier(lq, s, bool(causal), left, right, bool(nonpad_name))
    if lo is None and hi is None:
        return None
    # n per batch: nonpad_kv_seqlen, else the past length + lq (the same for every batch)
    t = c.env[nonpad_name] if nonpad_name else np.array([past + lq], np.int64)
    if nonpad_name and (c.dtype(t) != INT64 or c.shape(t) != (b,)):
        raise Refuse(f"nonpad_kv_seqlen must be int64 of shape [{b}], got {c.dtype(t)} {list(c.shape(t))}")
    if isinstance(t, np.ndarray):
        nb = t.reshape(-1, 1, 1, 1)
        keep = np.ones((len(t), 1, lq, s), bool)
        if lo is not None:
            keep &= lo <= nb
        if hi is not None:
            keep &= nb <= hi
        return _additive(keep)
    nv = _rs(c, t, (b, 1, 1, 1))
    tests = [c.add("le", [c.value(lo), nv])] if lo is not None else []
    if hi is not None:
        tests.append(c.add("le", [nv, c.value(hi)]))
    ok = tests[0] if len(tests) == 1 else c.add("logical_and", tests)
    return c.add("where", [ok, _full(c, 0.0), _full(c, NEG_INF)])


def _bias(
    c: Ctx, n: onnx.NodeProto, a: dict[str, Any], shape: tuple[int, int, int, int], past: int
) -> tuple[Value | None, Value | None]:
    """The additive bias over the [B, H, L, S] scores (None: none) and where it masks a row fully: a bool
    [.., L, 1] value (None: no such row can occur)."""
    b, _, lq, s = shape
    mask_name = opt_input(n, 3)
    parts = [_mask(c, c.env[mask_name], shape)] if mask_name else []
    structure = _structure(c, n, a, b, lq, s, past)
    if structure is not None:
        parts.append(structure)
    const: np.ndarray | None = None
    for p in parts:  # summed as the reference sums them: each part is finite or -inf, so the order is exact
        if isinstance(p, np.ndarray):
            const = p if const is None else const + p
    live = [p for p in parts if isinstance(p, Value)]
    if const is not None and const.any():
        live.append(c.value(np.ascontiguousarray(const, np.float32)))
        if len(live) == 1:  # known at import time: so are its fully masked rows
            rows = np.isneginf(const.max(axis=3, keepdims=True))
            return live[0], c.value(rows) if rows.any() else None
    if not live:
        return None, None
    bias = live[0]
    for p in live[1:]:
        bias = c.add("add", [bias, p])
    top = c.add("reduce_max", [bias], axes=(3,), keepdim=1)
    return bias, c.add("eq", [top, _full(c, NEG_INF)])


# ---------------------------------------------------------------- Attention
def _scores(c: Ctx, q: Value, k: Value, scale: float, softcap: float) -> Value:
    """q @ k^T * scale [B, Hq, L, S], soft-capped; grouped heads as a rank-5 matmul per key/value head."""
    b, hq, lq, d = c.shape(q)
    _, hk, s, _ = c.shape(k)
    kt = c.add("transpose", [k], perm=(0, 1, 3, 2))
    if hq == hk:
        raw = c.add("matmul", [q, kt])
    else:  # query head h reads key head h // g (the reference repeats each key head g times)
        g = hq // hk
        raw = c.add("matmul", [_rs(c, q, (b, hk, g, lq, d)), _rs(c, kt, (b, hk, 1, d, s))])
        raw = _rs(c, raw, (b, hq, lq, s))
    scores = c.add("smul", [raw], scalar=scale)
    if softcap > 0:  # softcap * tanh(scores / softcap), before the bias as the reference
        scores = c.add("smul", [c.add("tanh", [c.add("smul", [scores], scalar=1.0 / softcap)])], scalar=softcap)
    return scores


def _weighted(c: Ctx, p: Value, v: Value) -> Value:
    """p @ v [B, Hq, L, Dv], grouped heads as in ``_scores``."""
    b, hq, lq, s = c.shape(p)
    _, hk, _, dv = c.shape(v)
    if hq == hk:
        return c.add("matmul", [p, v])
    g = hq // hk
    y = c.add("matmul", [_rs(c, p, (b, hk, g, lq, s)), _rs(c, v, (b, hk, 1, s, dv))])
    return _rs(c, y, (b, hq, lq, dv))


@handles("Attention")
def _attention(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Outputs Y, present_key, present_value, qk_matmul_output (only the requested ones are built)."""
    only_attrs(a, _ATTENTION_ATTRS)
    want = [i < len(n.output) and bool(n.output[i]) for i in range(4)]
    precision = int(a.get("softmax_precision", onnx.TensorProto.FLOAT))
    if precision != onnx.TensorProto.FLOAT:
        raise Refuse(f"softmax_precision {onnx_dtype_name(precision)}: eqsat's softmax is float32")
    mode = int(a.get("qk_matmul_output_mode", 0))
    softcap = float(a.get("softcap", 0.0))
    if mode not in (0, 1, 2, 3):
        raise Refuse(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    if softcap < 0:
        raise Refuse(f"softcap {softcap} is negative")
    if want[3] and mode == 0 and softcap > 0:
        # the spec's mode 0 is the raw product, the reference's (and so the node tests') the soft-capped one
        raise Refuse("qk_matmul_output_mode 0 with softcap: the spec and its reference disagree on the output")
    q, k, v = _qkv(c, n, a)
    b, hq, lq, d = c.shape(q)
    bk, hk, sk, dk = c.shape(k)
    bv, hv, sv, dv = c.shape(v)
    if (bk, bv) != (b, b) or hv != hk or sv != sk or dk != d:
        raise Refuse(f"Q {[b, hq, lq, d]}, K {[bk, hk, sk, dk]}, V {[bv, hv, sv, dv]} do not fit (as [B, H, S, D])")
    if hq % hk:
        raise Refuse(f"{hq} query heads are not a multiple of {hk} key/value heads")
    k, v, past = _with_past(c, n, k, v)
    s = sk + past
    scale = float(a.get("scale", 1.0 / np.sqrt(d)))
    if scale < 0:
        raise Refuse(f"scale {scale} is negative (the reference scales Q and K by its square root)")
    scores = _scores(c, q, k, scale, softcap)
    bias, rows = _bias(c, n, a, (b, hq, lq, s), past)
    logits = scores if bias is None else c.add("add", [scores, bias])
    p = c.add("softmax", [logits], axis=3)
    if rows is not None:  # no key attended: zeros (the reference's guard), not softmax's NaN
        p = c.add("where", [rows, _full(c, 0.0), p])
    y = _weighted(c, p, v)
    if len(c.shape(c.env[n.input[0]])) == 3:
        y = _rs(c, c.add("transpose", [y], perm=(0, 2, 1, 3)), (b, lq, hq * dv))
    outs: list[Tensor] = [y, y, y, y]  # an unrequested output ('' name) is never bound
    if want[1]:
        outs[1] = k if past else c.identity(k)
    if want[2]:
        outs[2] = v if past else c.identity(v)
    if want[3]:  # modes 0 and 1 differ only with a softcap, refused above for mode 0
        outs[3] = {0: scores, 1: scores, 2: logits, 3: p}[mode]
    return outs


# ---------------------------------------------------------------- RotaryEmbedding
def _cache(c: Ctx, t: Tensor, ids: Tensor | None, b: int, s: int, r: int, what: str) -> Tensor:
    """A cos / sin cache as [b' , s', r] rows per (batch, position): itself without position_ids, else its
    rows picked by them (at import time when both are constant, else an embedding)."""
    _float32(c, t, what)
    ts = c.shape(t)
    if ids is None:
        if len(ts) != 3 or ts[2] != r or ts[0] not in (1, b) or ts[1] not in (1, s):
            raise Refuse(f"{what} of shape {list(ts)} must be [batch, sequence, {r}] without position_ids")
        return t
    if len(ts) != 2 or ts[1] != r:
        raise Refuse(f"{what} of shape {list(ts)} must be [max_position, {r}] with position_ids")
    if isinstance(ids, np.ndarray) and (ids.min() < 0 or ids.max() >= ts[0]):
        raise Refuse(f"position_ids outside [0, {ts[0]}), the rows of {what}")
    if isinstance(t, np.ndarray) and isinstance(ids, np.ndarray):
        return t[ids]
    return c.add("embedding", [c.value(t), c.value(ids)])


def _position_ids(c: Ctx, n: onnx.NodeProto, b: int, s: int) -> Tensor | None:
    name = opt_input(n, 3)
    if not name:
        return None
    ids = c.env[name]
    ds = c.shape(ids)
    if c.dtype(ids) != INT64 or len(ds) != 2 or ds[0] not in (1, b) or ds[1] not in (1, s):
        raise Refuse(f"position_ids must be int64 [batch, sequence] = [{b}, {s}], got {c.dtype(ids)} {list(ds)}")
    return ids


@handles("RotaryEmbedding")
def _rotary(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Rotate pairs of features by the cached angles: (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2), pairs
    being the two halves of the rotated features or (``interleaved``) neighbours; features past
    ``rotary_embedding_dim`` pass through.  Computed in the input's own layout (no transpose): a 4-d
    input is [B, H, S, D], a 3-d one [B, S, H * D] seen as [B, S, H, D]."""
    only_attrs(a, {"interleaved", "rotary_embedding_dim", "num_heads"})
    one_output(n)
    x = c.env[n.input[0]]
    _float32(c, x, "input")
    xs = c.shape(x)
    heads = int(a.get("num_heads", 0))
    interleaved = int(a.get("interleaved", 0))
    if interleaved not in (0, 1):
        raise Refuse(f"interleaved={interleaved} is not 0 or 1")
    if len(xs) == 4:
        b, h, s, d = xs
        if heads and heads != h:
            raise Refuse(f"num_heads {heads} differs from the input's {h} heads")
        x4 = c.value(x)
    elif len(xs) == 3:
        b, s, hidden = xs
        if heads <= 0 or hidden % heads:
            raise Refuse(f"a 3-d input needs num_heads dividing its hidden size {hidden}, got {heads}")
        h, d = heads, hidden // heads
        x4 = _rs(c, c.value(x), (b, s, h, d))
    else:
        raise Refuse(f"input of shape {list(xs)}: it takes [B, H, S, D] or [B, S, hidden]")
    rd = int(a.get("rotary_embedding_dim", 0)) or d
    if rd % 2 or not 0 < rd <= d:
        raise Refuse(f"rotary_embedding_dim {rd} must be even and at most the head size {d}")
    r = rd // 2
    ids = _position_ids(c, n, b, s)
    angles = []
    for i, what in ((1, "cos_cache"), (2, "sin_cache")):
        t = _cache(c, c.env[n.input[i]], ids, b, s, r, what)
        tb, ts, _ = c.shape(t)
        shape = (tb, 1, ts, r) if len(xs) == 4 else (tb, ts, 1, r)
        angles.append(c.value(c.reshape(t, shape + ((1,) if interleaved else ()))))
    cos, sin = angles
    x4s = c.shape(x4)
    rot = x4 if rd == d else c.add("slice", [x4], axis=3, start=0, end=rd)
    if interleaved:  # neighbours (x[2i], x[2i + 1]) as [.., r, 2]
        pairs = _rs(c, rot, x4s[:3] + (r, 2))
        x1, x2 = (c.add("slice", [pairs], axis=4, start=i, end=i + 1) for i in (0, 1))
    else:
        x1, x2 = (c.add("slice", [rot], axis=3, start=i * r, end=(i + 1) * r) for i in (0, 1))
    real = c.add("sub", [c.add("mul", [cos, x1]), c.add("mul", [sin, x2])])
    imag = c.add("add", [c.add("mul", [sin, x1]), c.add("mul", [cos, x2])])
    if interleaved:
        out = _rs(c, c.add("concat", [real, imag], axis=4), x4s[:3] + (rd,))
    else:
        out = c.add("concat", [real, imag], axis=3)
    if rd < d:
        out = c.add("concat", [out, c.add("slice", [x4], axis=3, start=rd, end=d)], axis=3)
    return [_rs(c, out, xs)]
