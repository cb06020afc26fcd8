"""rewrite.from_torch through torch.export: shapes, control flow, structured outputs, folding, errors."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from rewrite.frontends import FrontendError, capture, from_torch
from rewrite.frontends.aten import ATEN
from rewrite.ir.ops import OPS


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-5)


class _ShapeReads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        y = self.fc(x).view(B * T, C)
        if T > 2:  # Python control flow on a shape: resolved at capture
            y = torch.relu(y)
        else:
            y = torch.tanh(y)
        return y.view(B, T, C)


def test_shape_reads_and_control_flow_on_shapes():
    m = _ShapeReads().eval()
    x = torch.randn(2, 5, 8)
    g = capture(m, (x,)).graph
    assert "relu" in g.summary() and "tanh" not in g.summary()
    assert _close(g.run([x])[0], m(x))
    # linear weights arrive transposed, folded at import into one weight named after the parameter
    assert set(g.weights) == {"fc.weight_t", "fc.bias"}
    assert not [n for n in g if n.op == "transpose"]


class _Structured(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, *, scale: torch.Tensor) -> dict:
        return {"sum": x + y, "pair": (x * scale, torch.sigmoid(y))}


def test_dict_and_tuple_outputs_and_kwargs_are_flattened_and_named():
    x, y, s = torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)
    cap = capture(_Structured(), (x, y), {"scale": s})
    assert cap.input_names == ["x", "y", "scale"]
    assert cap.output_names == ["['sum']", "['pair'][0]", "['pair'][1]"]
    outs = cap.graph.run({"x": x, "y": y, "scale": s})
    ref = _Structured()(x, y, scale=s)
    back = cap.unflatten(outs)
    assert set(back) == {"sum", "pair"} and _close(back["sum"], ref["sum"])
    assert all(_close(a, b) for a, b in zip(back["pair"], ref["pair"]))


class _Causal(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qk = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        pos = torch.arange(T).float().view(1, T, 1)  # position ids, computed from a shape only
        q = self.qk(x + pos)
        return torch.softmax(q @ q.transpose(1, 2) / 8 + mask, dim=-1)


def test_causal_mask_and_positions_are_folded_into_constants():
    m = _Causal().eval()
    x = torch.randn(2, 6, 8)
    g = from_torch(m, (x,))
    # no arange/full/triu/where survives: they became weights computed by torch at import
    consts = [k for k in g.weights if k.startswith("const.")]
    assert len(consts) >= 2
    mask = next(t for k, t in g.weights.items() if k.startswith("const.") and t.shape == (6, 6))
    assert torch.equal(torch.isinf(mask), torch.ones(6, 6).triu(1).bool())
    assert set(g.summary()) <= {"add", "matmul", "transpose", "smul", "softmax", "reshape"}  # / 8: a scale
    assert _close(g.run([x])[0], m(x))


class _Embed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb(ids) * 2


def test_int64_input_ids_import_through_embedding():
    m, ids = _Embed(), torch.tensor([[1, 2, 3]])
    g = from_torch(m, (ids,))
    assert g.inputs[0].dtype == "int64" and "embedding" in {n.op for n in g}
    assert _close(g.run([ids])[0], m(ids))


class _Digamma(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x)
        return torch.digamma(y)  # the line the error must name


def test_unsupported_op_error_names_op_and_source_line():
    with pytest.raises(FrontendError) as info:
        from_torch(_Digamma(), (torch.randn(2, 3),))
    msg = str(info.value)
    assert "aten.digamma.default" in msg and "test_torch_export.py:" in msg and "torch.digamma(y)" in msg
    assert "\n" not in msg


def test_exact_gelu_is_the_erf_op():
    assert from_torch(nn.GELU(), (torch.randn(2, 3),)).summary() == {"gelu_erf": 1}
    g = from_torch(nn.GELU(approximate="tanh"), (torch.randn(2, 3),))
    assert g.summary() == {"gelu": 1}


class _DataDependent(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:  # data-dependent: export fails, and nothing else is tried
            return torch.relu(x)
        return x


def test_export_failure_names_the_module_and_exports_error_on_one_line():
    with pytest.raises(FrontendError, match=r"torch\.export could not capture _DataDependent: \w+") as e:
        from_torch(_DataDependent(), (torch.randn(2, 3),))
    assert "\n" not in str(e.value)


def test_conv_bn_pool_model_imports_and_matches():
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 2),
    ).eval()
    x = torch.randn(2, 3, 8, 8)
    g = from_torch(m, (x,))
    assert {"conv2d", "batchnorm", "maxpool2d", "global_avgpool", "matmul"} <= set(g.summary())
    assert {"1.running_mean", "1.running_var", "0.weight"} <= set(g.weights)
    assert _close(g.run([x])[0], m(x))


def test_aten_table_maps_only_to_existing_registry_ops():
    for overload, (method, produces) in ATEN.items():
        for op in produces.replace("|", ",").split(","):
            op = op.strip()
            assert op == "-" or op in OPS, (overload, op)
        assert method.startswith("a_"), overload


def test_weights_are_copies_unless_shared():
    """By default a later change to the module does not reach the graph; ``share_weights=True`` keeps the
    module's contiguous tensors themselves (one copy in memory), and a transposed one is still made whole."""
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 5)).eval()
    x = torch.randn(1, 3, 8, 8)
    copied, shared = from_torch(m, (x,)), from_torch(m, (x,), share_weights=True)
    conv_w = m[0].weight.data_ptr()
    assert all(t.data_ptr() != conv_w for t in copied.weights.values())
    assert any(t.data_ptr() == conv_w for t in shared.weights.values())
    assert all(t.is_contiguous() for t in shared.weights.values())
    before = copied.run([x])[0]
    with torch.no_grad():
        m[0].weight.mul_(2.0)
    assert torch.equal(copied.run([x])[0], before)
    assert torch.allclose(shared.run([x])[0], m(x), atol=1e-5)
