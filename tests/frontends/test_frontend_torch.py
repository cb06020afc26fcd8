"""``from_torch`` (torch.export) on small modules: every mapping against torch's own output, weights, and
the errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rewrite.frontends import FrontendError, capture, from_torch
from rewrite.ir.graph import Graph


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def check(module: nn.Module, *inputs: torch.Tensor, summary: dict[str, int] | None = None) -> Graph:
    """Import, then compare Graph.run with the module on the same inputs."""
    module.eval()
    g = from_torch(module, inputs)
    g.validate()
    out = g.run([x.clone() for x in inputs])
    with torch.no_grad():
        ref = module(*[x.clone() for x in inputs])
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    assert len(out) == len(refs)
    for a, b in zip(out, refs):
        assert a.shape == b.shape
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-5), (a - b).abs().max()
    if summary is not None:
        assert g.summary() == summary
    return g


class _FnModule(nn.Module):
    def __init__(self, fn, children: dict[str, nn.Module]) -> None:
        super().__init__()
        self.fn = fn
        for k, v in children.items():
            self.add_module(k, v)


def Fn(fn, **children: nn.Module) -> nn.Module:
    """A module whose forward is ``fn(self, <fn's arguments>)``, traced through (export records fn's ops);
    forward's arguments (the graph's input names) are fn's."""
    args = ", ".join(fn.__code__.co_varnames[1 : fn.__code__.co_argcount])
    ns: dict = {}
    exec(f"def forward(self, {args}):\n    return self.fn(self, {args})", ns)
    return type("Fn", (_FnModule,), {"forward": ns["forward"]})(fn, children)


def weights_of(g: Graph) -> dict[str, tuple[int, ...]]:
    return {n.attrs["name"]: n.shape for n in g.weight_nodes}


# ---------------------------------------------------------------- linear
def test_linear_is_pretransposed_matmul_plus_bias():
    lin = nn.Linear(6, 4)
    g = check(
        Fn(lambda s, x: s.fc(x), fc=lin), torch.randn(3, 6), summary={"add": 1, "matmul": 1}
    )  # the bias reshape is weight-only: not counted
    assert weights_of(g) == {"fc.weight_t": (6, 4), "fc.bias": (4,)}
    assert torch.equal(g.weights["fc.weight_t"], lin.weight.detach().t())
    assert "transpose" not in g.summary()


def test_linear_3d_input_is_one_2d_matmul():
    g = check(
        Fn(lambda s, x: s.fc(x), fc=nn.Linear(6, 4)),
        torch.randn(2, 3, 6),
        summary={"add": 1, "matmul": 1, "reshape": 2},
    )
    shapes = sorted(n.shape for n in g if n.op == "reshape")
    assert shapes == [(1, 4), (2, 3, 4), (6, 6)]  # the bias aligned once; the input flattened and back


def test_linear_1d_input_without_bias_and_functional_linear():
    check(Fn(lambda s, x: s.fc(x), fc=nn.Linear(6, 4, bias=False)), torch.randn(6), summary={"matmul": 1, "reshape": 2})

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4, 6))

        def forward(self, x):
            return F.linear(x, self.w)

    g = check(M(), torch.randn(5, 6), summary={"matmul": 1})
    assert weights_of(g) == {"w_t": (6, 4)}


# ---------------------------------------------------------------- conv
def test_conv2d_stride_padding_dilation_groups_bias():
    convs = nn.Sequential(
        nn.Conv2d(4, 8, 3, stride=2, padding=1),
        nn.Conv2d(8, 8, (3, 1), stride=(1, 2), padding=(2, 0), dilation=(2, 1), groups=4, bias=False),
        nn.Conv2d(8, 6, 1, groups=2),
    )
    g = check(convs, torch.randn(2, 4, 11, 13), summary={"add": 2, "conv2d": 3})
    conv = [n for n in g if n.op == "conv2d"]
    assert conv[0].attrs == {"stride": (2, 2), "padding": (1, 1), "dilation": (1, 1), "groups": 1}
    assert conv[1].attrs == {"stride": (1, 2), "padding": (2, 0), "dilation": (2, 1), "groups": 4}
    assert sorted(n.shape for n in g if n.op == "reshape") == [(1, 6, 1, 1), (1, 8, 1, 1)]
    assert "0.weight" in g.weights and "2.bias" in g.weights


def test_conv2d_string_padding_and_padding_mode():
    """Decomposed to core ATen: ``padding="same"`` is explicit padding, ``reflect`` an index_select per axis."""
    x = torch.randn(1, 3, 8, 8)
    same = check(
        Fn(lambda s, x: s.conv(x), conv=nn.Conv2d(3, 3, 3, padding="same")), x, summary={"add": 1, "conv2d": 1}
    )
    assert next(n for n in same if n.op == "conv2d").attrs["padding"] == (1, 1)
    reflect = Fn(lambda s, x: s.conv(x), conv=nn.Conv2d(3, 3, 3, padding=1, padding_mode="reflect"))
    check(reflect, x, summary={"add": 1, "conv2d": 1, "index_select": 2})


# ---------------------------------------------------------------- normalization
def _randomize_bn(bn: nn.BatchNorm2d) -> nn.BatchNorm2d:
    with torch.no_grad():
        bn.running_mean.normal_()
        bn.running_var.uniform_(0.5, 2.0)
        if bn.affine:
            bn.weight.normal_()
            bn.bias.normal_()
    return bn


def test_batchnorm_eval_and_without_affine():
    m = nn.Sequential(_randomize_bn(nn.BatchNorm2d(5, eps=1e-3)), _randomize_bn(nn.BatchNorm2d(5, affine=False)))
    g = check(m, torch.randn(2, 5, 4, 4), summary={"batchnorm": 2})
    bn = [n for n in g if n.op == "batchnorm"]
    assert bn[0].attrs["eps"] == pytest.approx(1e-3)
    assert torch.equal(g.weights["const.ones"], torch.ones(5)) and torch.equal(g.weights["const.zeros"], torch.zeros(5))
    assert {"0.running_mean", "0.running_var", "0.weight", "0.bias"} <= set(g.weights)


def test_batchnorm_in_training_mode_is_rejected_before_running():
    bn = nn.BatchNorm2d(3)
    m = Fn(lambda s, x: s.bn(x), bn=bn)
    before = bn.running_mean.clone()
    with pytest.raises(
        FrontendError,
        match=r"'aten\._native_batch_norm_legit_functional\.default'.*module 'bn'.*training mode: call module\.eval",
    ):
        from_torch(m.train(), (torch.randn(2, 3, 4, 4) + 5,))
    assert torch.equal(bn.running_mean, before)  # not updated by capture


def test_layernorm_over_the_last_dim_or_several():
    ln = nn.LayerNorm(8, eps=1e-6)
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    check(nn.Sequential(ln, nn.LayerNorm(8, elementwise_affine=False)), torch.randn(2, 3, 8), summary={"layernorm": 2})
    check(Fn(lambda s, x: F.layer_norm(x, (8,))), torch.randn(3, 8), summary={"layernorm": 1})
    two = nn.LayerNorm((3, 8))  # over the last two dimensions: one layernorm over them flattened
    with torch.no_grad():
        two.weight.normal_()
    check(Fn(lambda s, x: s.ln(x), ln=two), torch.randn(2, 3, 8), summary={"layernorm": 1, "reshape": 2})


# ---------------------------------------------------------------- activations
def test_activation_modules():
    m = nn.Sequential(
        nn.ReLU(), nn.Linear(5, 5), nn.Sigmoid(), nn.Linear(5, 5), nn.Tanh(), nn.GELU(approximate="tanh"), nn.SiLU()
    )
    check(
        m,
        torch.randn(4, 5) * 3,
        summary={"add": 2, "gelu": 1, "matmul": 2, "relu": 1, "sigmoid": 1, "silu": 1, "tanh": 1},
    )


def test_activation_functions_and_methods():
    def f(s, x):
        a = torch.relu(x) + F.relu(x) + x.relu()
        b = torch.sigmoid(x) + x.sigmoid()
        c = torch.tanh(x) * x.tanh()
        return a, b, c, F.gelu(x, approximate="tanh"), torch.exp(x), x.exp()

    check(
        Fn(f), torch.randn(3, 4), summary={"add": 3, "exp": 2, "gelu": 1, "mul": 1, "relu": 3, "sigmoid": 2, "tanh": 2}
    )


def test_exact_gelu_is_the_erf_op():
    assert from_torch(Fn(lambda s, x: s.act(x), act=nn.GELU()).eval(), (torch.randn(3),)).summary() == {"gelu_erf": 1}
    assert from_torch(Fn(lambda s, x: F.gelu(x)), (torch.randn(3),)).summary() == {"gelu_erf": 1}


def test_inplace_ops_and_their_aliases_are_functionalized():
    check(
        nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True)),
        torch.randn(2, 4),
        summary={"add": 1, "matmul": 1, "relu": 1},
    )

    def overwrite_then_read(s, x):
        y = x * 2.0
        z = s.act(y)  # overwrites y: the later read of y sees relu(y)
        return z + y

    check(
        Fn(overwrite_then_read, act=nn.ReLU(inplace=True)), torch.randn(3, 4), summary={"add": 1, "relu": 1, "smul": 1}
    )

    def methods(s, x):
        y = x.clone()
        y.add_(1.0)
        y.mul_(x)
        return y

    check(Fn(methods), torch.randn(3, 4), summary={"add": 1, "mul": 1})

    def alias_then_overwrite(s, x):
        y = x * 2.0
        z = s.act(y)  # z is y
        y.add_(1.0)  # so this changes z too
        return z

    check(Fn(alias_then_overwrite, act=nn.ReLU(inplace=True)), torch.randn(3), summary={"add": 1, "relu": 1, "smul": 1})

    def view_then_overwrite(s, x):
        y = x * 2.0
        v = y.view(-1)
        s.act(y)  # also changes v
        return v

    check(Fn(view_then_overwrite, act=nn.ReLU(inplace=True)), torch.randn(3), summary={"relu": 1, "smul": 1})

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("p", torch.randn(3))

        def forward(self, x):
            return x + self.p.relu_()

    with pytest.raises(FrontendError, match="forward mutates 'p'"):
        from_torch(M(), (torch.randn(3),))


# ---------------------------------------------------------------- pass-through
def test_dropout_identity_contiguous_make_no_nodes():
    def f(s, x):
        return s.ident(s.drop(x)).transpose(0, 1).contiguous()

    g = check(Fn(f, drop=nn.Dropout(0.5), ident=nn.Identity()), torch.randn(3, 4), summary={"transpose": 1})
    assert len(g.nodes) == 2
    with pytest.raises(FrontendError, match=r"'aten\.native_dropout\.default'.*module 'drop'"):
        from_torch(Fn(f, drop=nn.Dropout(0.5), ident=nn.Identity()).train(), (torch.randn(3, 4),))


# ---------------------------------------------------------------- pooling
def test_pooling_modules():
    m = nn.Sequential(
        nn.MaxPool2d(3, stride=2, padding=1),
        nn.MaxPool2d((2, 3), ceil_mode=True),  # stride None -> kernel
        nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),
        nn.AvgPool2d((2, 2), stride=(1, 2), ceil_mode=True),
    )
    g = check(m, torch.randn(2, 3, 17, 19), summary={"avgpool2d": 2, "maxpool2d": 2})
    pools = [n.attrs for n in g if n.op in ("maxpool2d", "avgpool2d")]
    assert pools[0] == {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1), "ceil_mode": 0}
    assert pools[1] == {"kernel": (2, 3), "stride": (2, 3), "padding": (0, 0), "ceil_mode": 1}
    assert pools[2]["count_include_pad"] == 0 and pools[3]["ceil_mode"] == 1


def test_pooling_functions():
    def f(s, x):
        return F.max_pool2d(x, 2), F.avg_pool2d(x, 3, 2, 1), F.adaptive_avg_pool2d(x, 1), x.mean((2, 3))

    check(Fn(f), torch.randn(1, 2, 8, 8), summary={"avgpool2d": 1, "global_avgpool": 2, "maxpool2d": 1, "reshape": 1})


def test_adaptive_avgpool():
    check(nn.AdaptiveAvgPool2d(1), torch.randn(2, 3, 5, 7), summary={"global_avgpool": 1})
    check(nn.AdaptiveAvgPool2d((1, 1)), torch.randn(2, 3, 5, 7), summary={"global_avgpool": 1})
    g = check(nn.AdaptiveAvgPool2d((2, 4)), torch.randn(2, 3, 8, 8), summary={"avgpool2d": 1})
    assert next(n for n in g if n.op == "avgpool2d").attrs["kernel"] == (4, 2)
    check(nn.AdaptiveAvgPool2d(3), torch.randn(1, 2, 8, 8), summary={"adaptive_avgpool": 1})


# ---------------------------------------------------------------- softmax, matmul, layout
def test_softmax_forms_normalize_dim():
    def f(s, x):
        return F.softmax(x, dim=-1), torch.softmax(x, 1), x.softmax(dim=0), s.sm(x)

    g = check(Fn(f, sm=nn.Softmax(dim=-2)), torch.randn(2, 3, 4), summary={"softmax": 4})
    assert [n.attrs["axis"] for n in g if n.op == "softmax"] == [2, 1, 0, 1]


def test_matmul_forms_align_ranks():
    def f(s, a, b, c, v):
        return torch.matmul(a, b), a @ c, torch.bmm(a, b), a.matmul(v), v @ c

    a, b, c, v = torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(4, 6), torch.randn(4)
    g = check(Fn(f), a, b, c, v, summary={"matmul": 5, "reshape": 6})
    assert [n.attrs["name"] for n in g.inputs] == ["a", "b", "c", "v"]


def test_transpose_permute_T():
    def f(s, x, m):
        return (
            x.transpose(0, 2),
            torch.transpose(x, -1, -2),
            x.permute(2, 0, 1),
            torch.permute(x, (1, 0, 2)),
            m.T,
            m.t(),
            x.permute(0, 1, 2),
        )

    g = check(Fn(f), torch.randn(2, 3, 4), torch.randn(3, 5), summary={"transpose": 6})
    perms = [n.attrs["perm"] for n in g if n.op == "transpose"]
    assert perms == [(2, 1, 0), (0, 2, 1), (2, 0, 1), (1, 0, 2), (1, 0), (1, 0)]


def test_reshape_view_flatten_resolve_minus_one():
    def f(s, x):
        n = x.shape[0]
        return x.reshape(n, -1), x.view(-1, 4), torch.flatten(x, 1), x.flatten(), s.flat(x), x.reshape(2, 3, 4)

    g = check(Fn(f, flat=nn.Flatten()), torch.randn(2, 3, 4), summary={"reshape": 3})
    assert sorted(n.attrs["shape"] for n in g if n.op == "reshape") == [(2, 12), (6, 4), (24,)]


def test_cat_split_chunk_getitem():
    def f(s, x, y):
        a, b = torch.split(x, [1, 3], dim=1)
        c = x.split(2, dim=-1)
        d = torch.chunk(y, 3, 0)
        e = y.chunk(2, dim=1)
        return torch.cat([b, a], dim=1), c[0] + c[1], d[2], torch.cat((e[1], e[0], y), -1)

    g = check(Fn(f), torch.randn(2, 4, 4), torch.randn(6, 4), summary={"add": 1, "concat": 2, "split": 4})
    splits = [n.attrs for n in g if n.op == "split"]
    assert splits == [
        {"axis": 1, "sizes": (1, 3)},
        {"axis": 2, "sizes": (2, 2)},
        {"axis": 0, "sizes": (2, 2, 2)},
        {"axis": 1, "sizes": (2, 2)},
    ]


def test_getitem_slicing():
    def f(s, x):
        return x[:, 1:3], x[..., 2:], x[1:, :, :-1], x[1], x[:, None, -1]

    g = check(Fn(f), torch.randn(3, 4, 5), summary={"reshape": 3, "slice": 6})
    assert [(n.attrs["axis"], n.attrs["start"], n.attrs["end"]) for n in g if n.op == "slice"] == [
        (1, 1, 3),
        (2, 2, 5),
        (0, 1, 3),
        (2, 0, 4),
        (0, 1, 2),  # x[1]: a slice and a reshape dropping the axis
        (2, 3, 4),  # x[:, None, -1]: the None first, then the slice
    ]


def test_getitem_step_and_list_index_are_index_selects():
    g = check(Fn(lambda s, x: x[:, ::2]), torch.randn(3, 4), summary={"index_select": 1})
    assert torch.equal(g.weights["const.slice_1"], torch.tensor([0, 2]))
    g = check(Fn(lambda s, x: x[[0, 2]]), torch.randn(3, 4), summary={"index_select": 1})
    assert [n.attrs["axis"] for n in g if n.op == "index_select"] == [0]


# ---------------------------------------------------------------- arithmetic
def test_tensor_tensor_arithmetic_aligns_ranks():
    def f(s, x, v):
        return (
            x + v,
            x - v,
            v * x,
            x / (v.exp() + x.exp()),
            torch.add(x, v, alpha=2.0),
            torch.sub(x, v),
            torch.mul(x, x),
            torch.div(x, v.exp()),
        )

    g = check(
        Fn(f),
        torch.randn(2, 3, 4),
        torch.randn(4),
        summary={"add": 3, "div": 2, "exp": 3, "mul": 2, "reshape": 4, "smul": 1, "sub": 2},
    )
    v = next(n.id for n in g.inputs if n.attrs["name"] == "v")
    assert [n.shape for n in g if n.op == "reshape" and n.inputs[0].node == v] == [(1, 1, 4)]  # emitted once


def test_scalar_arithmetic():
    def f(s, x):
        return x * 3, 0.5 * x, x / 4, x + 1, 2 - x, x - 1.5, 1.0 / (x.exp() + 1), -x

    g = check(Fn(f), torch.randn(2, 3), summary={"add": 2, "exp": 1, "reciprocal": 1, "smul": 5, "sub": 2})
    assert sorted(n.attrs["scalar"] for n in g if n.op == "smul") == [-1.0, 0.25, 0.5, 1.0, 3.0]
    consts = {k: v for k, v in g.weights.items() if k.startswith("const.")}
    assert sorted(float(v) for v in consts.values()) == [1.0, 1.5, 2.0]  # x + 1 and 1 + exp(x) share one
    assert all(v.shape == (1, 1) for v in consts.values())


# ---------------------------------------------------------------- weights
def test_get_attr_parameters_and_buffers_become_weights():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.randn(4))
            self.register_buffer("offset", torch.randn(3, 4))
            self.inner = nn.Module()
            self.inner.w = nn.Parameter(torch.randn(4, 2))

        def forward(self, x):
            return (x * self.scale + self.offset) @ self.inner.w

    g = check(M(), torch.randn(3, 4), summary={"add": 1, "matmul": 1, "mul": 1})
    assert weights_of(g) == {"scale": (4,), "offset": (3, 4), "inner.w": (4, 2)}


def test_shared_weight_is_one_weight_node():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(5, 5)
            self.b = nn.Linear(5, 5)
            self.b.weight = self.a.weight  # shared parameter, separate biases
            self.c = nn.Conv2d(2, 2, 1)
            self.d = self.c  # the same layer under a second name, used twice

        def forward(self, x, img):
            return self.b(torch.relu(self.a(x))), self.d(self.c(img))

    g = check(Tied(), torch.randn(3, 5), torch.randn(1, 2, 4, 4))
    names = [n.attrs["name"] for n in g.weight_nodes]
    assert sorted(names) == ["a.bias", "a.weight_t", "b.bias", "c.bias", "c.weight"]
    assert len(names) == len(set(names))
    assert g.summary() == {"add": 4, "conv2d": 2, "matmul": 2, "relu": 1}
    assert sum(1 for n in g if n.op == "reshape") == 3  # a.bias, b.bias, c.bias aligned once each


def test_weights_are_copies():
    lin = nn.Linear(3, 3)
    g = from_torch(nn.Sequential(lin), (torch.randn(1, 3),))
    before = g.weights["0.bias"].clone()
    with torch.no_grad():
        lin.bias.add_(1.0)
    assert torch.equal(g.weights["0.bias"], before)


# ---------------------------------------------------------------- inputs, outputs, origins
def test_multiple_inputs_and_outputs_and_origins():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

        def forward(self, left, right):
            return self.block(left), torch.cat([left, right], 0)

    g = check(M(), torch.randn(2, 4), torch.randn(3, 4))
    assert g.input_shapes() == {"left": (2, 4), "right": (3, 4)}
    origins = {n.op: n.origin for n in g.compute_nodes()}
    assert origins["relu"] == "relu (aten.relu.default)"
    assert origins["concat"] == "cat (aten.cat.default)"
    assert g.name == "M"


def test_nested_outputs_are_flattened_and_named():
    cap = capture(Fn(lambda s, x: (x.relu(), (x.tanh(), x))), (torch.randn(2),))
    assert cap.output_names == ["[0]", "[1][0]", "[1][1]"]
    assert cap.graph.outputs[2].node == cap.graph.inputs[0].id  # an input returned as it is


# ---------------------------------------------------------------- errors
def test_unsupported_module_names_op_node_and_module_path():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = Fn(lambda s, x: torch.digamma(x))

        def forward(self, x):
            return self.act(x)

    m = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Identity(), Block()))
    with pytest.raises(FrontendError) as e:
        from_torch(m, (torch.randn(2, 3),))
    msg = str(e.value)
    assert "unsupported op 'aten.digamma.default' at node 'digamma'" in msg and "module '1.1.act'" in msg


def test_unsupported_function_and_method_name_op_node_and_source_line():
    class M(nn.Module):
        def forward(self, x):
            return torch.digamma(x)

    with pytest.raises(FrontendError) as e:
        from_torch(M(), (torch.randn(2),))
    msg = str(e.value)
    assert "unsupported op 'aten.digamma.default' at node 'digamma'" in msg
    assert "test_frontend_torch.py:" in msg and "torch.digamma(x)" in msg  # the source line

    with pytest.raises(FrontendError, match=r"unsupported op 'aten\.lgamma\.default' at node 'lgamma'"):
        from_torch(Fn(lambda s, x: x.lgamma()), (torch.randn(2),))


def test_input_checks():
    with pytest.raises(FrontendError, match="could not capture Fn: TypeError: missing a required argument: 'y'"):
        from_torch(Fn(lambda s, x, y: x + y), (torch.randn(2),))
    with pytest.raises(FrontendError, match="float32"):
        from_torch(Fn(lambda s, x: x * 2), (torch.ones(2, dtype=torch.float64),))


def test_functional_linear_on_a_module_parameter_shares_its_transposed_weight():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x) + F.linear(x, self.fc.weight, self.fc.bias)

    g = check(M(), torch.randn(2, 4), summary={"add": 3, "matmul": 2})
    assert weights_of(g) == {"fc.weight_t": (4, 4), "fc.bias": (4,)}
