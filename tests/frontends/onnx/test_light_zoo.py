"""The onnx package's light model zoo (``onnx/backend/test/data/light/light_*.onnx``): the reference
interpreter agrees with onnxruntime on each model eqsat imports (issue 46).

The light models are the model zoo's nets with every weight a constant (``ConstantOfShape``), so their
logits are large and often all equal: the softmax at the end sees exactly the inputs where a reference
without the max subtraction, or with another axis rule, would differ.  Each model runs on the same random
input through ``Graph.run`` and onnxruntime, compared with ``compare_all`` at the project's tolerance: these
nets are float32 end to end and the outputs are softmax probabilities (at most 1), so the rule's absolute
bound of 1e-4 holds with room to spare on every model that imports (measured errors: 0 to 3e-7).

A model eqsat cannot import is skipped with the importer's reason (LRN is not in eqsat's op set; Dropout's
mask output is not supported).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from rewrite import from_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402

LIGHT = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "light"
MODELS = sorted(LIGHT.glob("light_*.onnx"))


def test_the_light_zoo_is_there():
    assert len(MODELS) >= 5, f"no light models under {LIGHT}"


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=p.stem) for p in MODELS],
)
@pytest.mark.slow  # 4-20 s a model on 2 cores (resnet50 and densenet121 run 224x224 convs in the interpreter)
def test_interpreter_matches_onnxruntime(path: Path):
    try:
        g = from_onnx(path)
    except FrontendError as e:
        pytest.skip(f"does not import: {e}")
    inputs = g.random_inputs(0)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = {i.name: inputs[i.name].numpy() for i in sess.get_inputs()}
    theirs = [torch.from_numpy(o) for o in sess.run(None, feed)]
    ours = g.run(inputs)
    c = compare_all(theirs, ours)
    assert c.close, f"{path.name}: Graph.run differs from onnxruntime: {c.why}"
    # a large-magnitude input too: the constant weights carry it to huge logits (the softmax's max subtraction)
    big = {k: v * 1e3 if v.is_floating_point() else v for k, v in inputs.items()}
    feed = {i.name: big[i.name].numpy() for i in sess.get_inputs()}
    c = compare_all([torch.from_numpy(o) for o in sess.run(None, feed)], g.run(big))
    assert c.close, f"{path.name}, inputs x 1e3: Graph.run differs from onnxruntime: {c.why}"
