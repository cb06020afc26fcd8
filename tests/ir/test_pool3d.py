"""3-d pooling and 3-d transposed convolution (video and volumetric models) as compositions of 2-d registry
ops (``frontends.compose.pool3d``, ``conv_transpose3d``): one-node ONNX models against onnxruntime, torch
modules against torch, each through the interpreter and the compiled kernels."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rewrite import from_torch
from rewrite.ir.errors import FrontendError
from rewrite.pipeline import compile
from rewrite.verification.numeric import compare_all

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx import helper as oh  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402


def _onnx_check(op: str, attrs: dict, xshape: list[int], inits=(), outputs=("y",)) -> set[str]:
    """A one-node model (output untyped: onnx's shape inference skips ceil_mode's last-window rule, which
    onnxruntime applies) imported, compiled and compared with onnxruntime; the ops it became."""
    names = ["x", *(k for k, _ in inits)]
    g = oh.make_graph(
        [oh.make_node(op, names, list(outputs), **attrs)],
        "t",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
        [oh.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits],
    )
    model = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])
    x = np.random.default_rng(0).standard_normal(xshape).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = [torch.from_numpy(sess.run(None, {"x": x})[0])]
    graph = from_onnx(model)
    for got in (graph.run([torch.from_numpy(x)]), compile(graph)([torch.from_numpy(x)])):
        cmp = compare_all(expected, got)
        assert cmp.close, cmp.why
    return set(graph.summary())


@pytest.mark.parametrize(
    "op,attrs,xshape",
    [
        ("MaxPool", {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}, [2, 3, 4, 6, 6]),
        ("MaxPool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1] * 6}, [1, 2, 5, 7, 7]),
        ("MaxPool", {"kernel_shape": [2, 3, 3], "strides": [1, 2, 2], "pads": [0, 1, 1, 1, 0, 2]}, [1, 2, 4, 6, 7]),
        # ceil_mode: a partial last window, and one that would start in the end padding (dropped)
        ("MaxPool", {"kernel_shape": [2, 2, 3], "strides": [2, 2, 2], "ceil_mode": 1}, [1, 2, 5, 7, 6]),
        (
            "MaxPool",
            {"kernel_shape": [3, 2, 2], "strides": [2, 3, 1], "pads": [1, 1, 0, 1, 1, 1], "ceil_mode": 1},
            [1, 2, 6, 7, 5],
        ),
        (
            "MaxPool",
            {
                "kernel_shape": [2, 2, 3],
                "dilations": [2, 1, 2],
                "strides": [1, 2, 2],
                "pads": [1, 0, 2, 0, 1, 1],
                "ceil_mode": 1,
            },
            [1, 2, 6, 6, 9],
        ),
        ("MaxPool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 5, 6, 7]),
        ("AveragePool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1] * 6}, [1, 2, 5, 7, 7]),
        (
            "AveragePool",
            {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1] * 6, "count_include_pad": 1},
            [1, 2, 5, 7, 7],
        ),
        (
            "AveragePool",
            {"kernel_shape": [2, 3, 3], "strides": [1, 2, 1], "pads": [1, 0, 2, 0, 2, 1], "count_include_pad": 1},
            [1, 2, 4, 7, 6],
        ),
        ("AveragePool", {"kernel_shape": [2, 3, 3], "strides": [1, 2, 1], "pads": [1, 0, 2, 0, 2, 1]}, [1, 2, 4, 7, 6]),
        (
            "AveragePool",
            {
                "kernel_shape": [3, 3, 2],
                "strides": [2, 2, 2],
                "pads": [1, 1, 0, 1, 1, 0],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
            [1, 2, 6, 6, 5],
        ),
        (
            "AveragePool",
            {"kernel_shape": [3, 3, 2], "strides": [2, 2, 2], "pads": [1, 1, 0, 1, 1, 0], "ceil_mode": 1},
            [1, 2, 6, 6, 5],
        ),
        (
            "AveragePool",
            {
                "kernel_shape": [2, 3, 2],
                "dilations": [2, 2, 1],
                "strides": [2, 1, 2],
                "pads": [1, 1, 0, 0, 2, 1],
                "ceil_mode": 1,
                "count_include_pad": 1,
            },
            [1, 2, 7, 6, 7],
        ),
        (
            "AveragePool",
            {"kernel_shape": [2, 3, 2], "dilations": [2, 2, 1], "strides": [2, 1, 2], "ceil_mode": 1},
            [1, 2, 7, 6, 7],
        ),
        ("AveragePool", {"kernel_shape": [2, 2, 3], "strides": [1, 2, 2], "auto_pad": "SAME_LOWER"}, [1, 2, 4, 5, 7]),
        ("LpPool", {"kernel_shape": [2, 2, 2], "strides": [1, 2, 2], "p": 2}, [1, 2, 3, 4, 5]),
        # 2-d pooling the registry's cannot express goes through the same composition over a depth of 1
        ("MaxPool", {"kernel_shape": [2, 3], "dilations": [2, 2], "pads": [1, 1, 1, 0]}, [1, 2, 7, 8]),
        (
            "AveragePool",
            {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [0, 1, 2, 0], "ceil_mode": 1},
            [1, 2, 6, 7],
        ),
    ],
)
def test_onnx_3d_pooling_matches_onnxruntime(op, attrs, xshape):
    ops = _onnx_check(op, attrs, xshape)
    assert ops & {"maxpool2d", "avgpool2d", "maximum", "add"}


def test_r3d_style_pooling_is_two_registry_pools():
    """Symmetric padding within half the kernel: the registry's own pooling, nothing padded or sliced."""
    ops = _onnx_check("MaxPool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1] * 6}, [1, 2, 5, 7, 7])
    assert ops == {"maxpool2d", "reshape"}


def _w(*shape: int) -> np.ndarray:
    return np.random.default_rng(1).standard_normal(shape).astype(np.float32)


@pytest.mark.slow
@pytest.mark.parametrize(
    "attrs,xshape,wshape,bias",
    [
        ({"strides": [2, 2, 2]}, [1, 4, 3, 4, 5], [4, 3, 2, 2, 2], True),  # kernel = stride: 1x1 conv + depth-to-space
        (
            {"strides": [2, 2, 2], "pads": [1] * 6, "output_padding": [1, 1, 1], "group": 2},
            [2, 4, 2, 3, 3],
            [4, 3, 3, 3, 3],
            True,
        ),
        (
            {"strides": [1, 2, 3], "pads": [0, 2, 1, 1, 0, 2], "dilations": [2, 1, 1]},
            [1, 2, 4, 3, 4],
            [2, 3, 3, 3, 3],
            True,
        ),
        (
            {"strides": [2, 1, 1], "pads": [0, 1, 1, 0, 1, 1]},
            [1, 2, 3, 4, 5],
            [2, 3, 2, 3, 3],
            False,
        ),  # kd = sd: interleaved
        ({"strides": [3, 2, 2], "output_padding": [2, 1, 0], "group": 2}, [1, 4, 2, 3, 3], [4, 1, 2, 3, 3], False),
        ({"strides": [2, 2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 3, 3, 4], [2, 3, 3, 3, 3], True),
        ({"strides": [2, 1, 2], "output_shape": [8, 6, 9]}, [1, 2, 3, 4, 4], [2, 2, 3, 3, 3], True),  # zeros at the end
    ],
)
def test_onnx_conv_transpose_3d_matches_onnxruntime(attrs, xshape, wshape, bias):
    inits = [("w", _w(*wshape))]
    if bias:
        inits.append(("b", np.linspace(-1, 1, wshape[1] * attrs.get("group", 1), dtype=np.float32)))
    assert "conv2d" in _onnx_check("ConvTranspose", attrs, xshape, inits)


@pytest.mark.parametrize(
    "op,attrs,outputs,why",
    [
        ("MaxPool", {"kernel_shape": [2, 2, 2]}, ("y", "i"), "only the first output"),
        ("MaxPool", {"kernel_shape": [3, 2, 2], "dilations": [2, 1, 1]}, ("y",), "larger than the padded input"),
    ],
)
def test_onnx_3d_pooling_refusals_are_one_line(op, attrs, outputs, why):
    g = oh.make_graph(
        [oh.make_node(op, ["x"], list(outputs), **attrs)],
        "t",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4, 4])],
        [oh.make_empty_tensor_value_info(o) for o in outputs],
    )
    with pytest.raises(FrontendError, match=why) as err:
        from_onnx(oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)]))
    assert "\n" not in str(err.value)


def _torch_check(m: nn.Module, *xs: torch.Tensor, compiled: bool = False) -> set[str]:
    """Import ``m`` through torch.export, compare the interpreter's (and the compiled graph's) result with
    torch's; the ONNX cases above compile every op mix these build."""
    m = m.eval()
    with torch.no_grad():
        ref = m(*xs)
    g = from_torch(m, xs)
    for out in [g.run(list(xs))[0]] + ([compile(g)(list(xs))[0]] if compiled else []):
        assert out.shape == ref.shape
        assert torch.allclose(out, ref, rtol=1e-5, atol=1e-5), (out - ref).abs().max()
    return set(g.summary())


@pytest.mark.slow
@pytest.mark.parametrize(
    "module,shape",
    [
        (nn.MaxPool3d(3, 2, 1), (2, 3, 5, 7, 7)),
        (nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1), ceil_mode=True), (1, 3, 4, 8, 8)),
        (nn.MaxPool3d(3, 2, 1, dilation=(2, 1, 2), ceil_mode=True), (1, 2, 7, 6, 9)),
        (nn.AvgPool3d(2), (3, 4, 6, 6)),  # unbatched
        (nn.AvgPool3d(3, 2, 1, ceil_mode=True), (1, 3, 6, 6, 8)),
        (nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 3, 6, 6, 8)),
        (nn.AvgPool3d((2, 3, 3), (2, 2, 1), (1, 1, 0), ceil_mode=True, divisor_override=5), (1, 2, 5, 7, 6)),
        (nn.AvgPool3d((1, 2, 2), divisor_override=3), (1, 2, 3, 4, 4)),
        (nn.AdaptiveAvgPool3d((2, 3, 3)), (1, 2, 4, 6, 9)),
    ],
)
def test_torch_3d_pooling_matches_torch(module, shape):
    torch.manual_seed(0)
    _torch_check(module, torch.randn(*shape))


def test_torch_adaptive_pooling_that_does_not_divide_is_refused():
    with pytest.raises(FrontendError, match="only sizes dividing evenly"):
        from_torch(nn.AdaptiveAvgPool3d((3, 3, 3)).eval(), (torch.randn(1, 2, 4, 6, 9),))


class _UNetUp(nn.Module):
    """A 3-d U-Net decoder step: transposed convolutions up, pooling down."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose3d(4, 6, 2, 2)
        self.mix = nn.ConvTranspose3d(6, 4, 3, 2, 1, output_padding=1, groups=2)
        self.odd = nn.ConvTranspose3d(4, 3, (3, 2, 3), (1, 2, 3), (1, 0, 2), dilation=(2, 1, 1))
        self.pool = nn.MaxPool3d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.odd(self.pool(self.mix(torch.relu(self.up(x)))))


def test_torch_conv_transpose_3d_matches_torch():
    torch.manual_seed(0)
    ops = _torch_check(_UNetUp(), torch.randn(1, 4, 2, 2, 3), compiled=True)
    assert {"conv2d", "maxpool2d"} <= ops and "conv_transpose" not in " ".join(ops)


class _RunTimeWeight(nn.Module):
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.conv_transpose3d(x, w, stride=(2, 1, 2), padding=1, output_padding=(1, 0, 1), groups=2)


def test_torch_conv_transpose_3d_of_a_run_time_weight():
    torch.manual_seed(0)
    _torch_check(_RunTimeWeight(), torch.randn(1, 4, 3, 3, 4), torch.randn(4, 3, 3, 3, 3))
