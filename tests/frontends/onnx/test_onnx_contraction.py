"""ONNX convolutions and contractions beyond the one-node table: transposed, 3-d, Col2Im (an exported fold) and Einsum,
imported, compiled and compared with onnxruntime or torch."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper as oh  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from tests.frontends.onnx.onnx_nodes import F, _check_node  # noqa: E402


def _convt_weight(cin, cout_g, *k):
    return np.random.default_rng(1).standard_normal((cin, cout_g, *k)).astype(np.float32)


@pytest.mark.parametrize(
    "attrs,xshape,wshape",
    [
        ({"strides": [2, 2]}, [1, 4, 3, 5], [4, 3, 2, 2]),  # kernel = stride: 1x1 conv + depth-to-space
        ({"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, [2, 4, 3, 5], [4, 3, 3, 3]),
        ({"strides": [1, 2], "pads": [0, 2, 1, 0], "dilations": [2, 1], "group": 2}, [1, 4, 5, 4], [4, 3, 3, 3]),
        ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 3, 4], [2, 3, 3, 3]),
        ({"strides": [3, 2], "output_shape": [8, 9]}, [1, 2, 3, 4], [2, 3, 3, 3]),
        ({"strides": [3, 2], "output_shape": [10, 8]}, [1, 2, 3, 3], [2, 3, 3, 3]),  # larger: zeros at the end
        ({"strides": [2], "pads": [1, 0]}, [2, 3, 7], [3, 4, 4]),  # 1-d
    ],
)
def test_conv_transpose_matches_onnxruntime(attrs, xshape, wshape):
    node = oh.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    inits = [
        ("w", _convt_weight(*wshape)),
        ("b", np.linspace(-1, 1, wshape[1] * attrs.get("group", 1), dtype=np.float32)),
    ]
    _check_node(node, [("x", F, xshape)], inits)


@pytest.mark.parametrize(
    "attrs,xshape,wshape",
    [
        ({"strides": [2, 4, 4]}, [1, 3, 4, 8, 8], [6, 3, 2, 4, 4]),  # a video patch embedding (tubelets)
        ({"pads": [1, 1, 1, 1, 1, 1]}, [2, 4, 5, 6, 5], [3, 4, 3, 3, 3]),
        ({"strides": [2, 1, 2], "pads": [0, 1, 2, 1, 1, 0], "group": 2}, [1, 4, 7, 6, 7], [4, 2, 3, 3, 2]),
        ({"dilations": [2, 1, 1]}, [1, 2, 7, 4, 4], [2, 2, 3, 1, 3]),
        ({"strides": [1, 2, 2], "auto_pad": "SAME_LOWER"}, [1, 2, 5, 5, 6], [2, 2, 2, 3, 2]),
    ],
)
def test_conv3d_matches_onnxruntime(attrs, xshape, wshape):
    node = oh.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    inits = [("w", _convt_weight(*wshape)), ("b", np.linspace(-1, 1, wshape[0], dtype=np.float32))]
    graph = _check_node(node, [("x", F, xshape)], inits)
    assert "conv2d" in graph.summary()


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 1, 1), (3, 2, 0)])
def test_col2im_of_an_exported_fold_matches_torch(k, s, p):
    """torch.onnx.export (opset 18) writes F.fold as Col2Im: overlapping blocks summed back by gathers."""
    import io

    class Fold(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            cols = torch.nn.functional.unfold(torch.sigmoid(x), k, padding=p, stride=s)
            return torch.nn.functional.fold(cols * 2.0, (7, 7), k, padding=p, stride=s)

    x = torch.randn(2, 3, 7, 7)
    buf = io.BytesIO()
    torch.onnx.export(Fold(), (x,), buf, opset_version=18, dynamo=False)
    model = onnx.load_from_string(buf.getvalue())
    assert any(nd.op_type == "Col2Im" for nd in model.graph.node)
    g = from_onnx(model)
    got = compile(g)({g.inputs[0].attrs["name"]: x})[0]
    torch.testing.assert_close(got, Fold()(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("bhid,bhjd->bhij", [[2, 3, 4, 5], [2, 3, 6, 5]]),  # attention scores
        ("bhij,bhjd->bhid", [[2, 3, 4, 6], [2, 3, 6, 5]]),
        ("ij,jk", [[3, 4], [4, 5]]),  # implicit output
        ("bnd,dk->bkn", [[2, 3, 4], [4, 5]]),  # output transposed
        ("...ij,...jk->...ik", [[2, 3, 4], [2, 4, 5]]),
        ("abc,cd->ad", [[2, 3, 4], [4, 5]]),  # b summed before the product
        ("i,j->ij", [[3], [4]]),  # outer product
        ("bij->bji", [[2, 3, 4]]),
        ("bij->b", [[2, 3, 4]]),
    ],
)
def test_einsum_matches_onnxruntime(eq, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    _check_node(oh.make_node("Einsum", names, ["y"], equation=eq), [(k, F, s) for k, s in zip(names, shapes)])
