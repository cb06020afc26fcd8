"""Quantized models (issue 47): eqsat on onnxruntime's int8 QDQ export against onnxruntime's int8, and eqsat's own
float32, interleaved in one process.

    eqsat bench quant [--models full:bert,resnet50,full:mobilenet_v2] [--threads 1,2] [--repeats 10] [--json OUT]

Each model (a ``bench.e2e`` spec: the zoo at deployment size, ``full:NAME``) is exported to ONNX and quantized by
onnxruntime's ``quantize_static``: QDQ format, per-channel int8 weights, uint8 activations, calibrated on 8
random inputs of the model's shapes (token ids for a transformer), every op type onnxruntime quantizes by default;
on a host without VNNI with 7-bit weights (``onnxruntime_sums_exactly``).
eqsat imports the quantized file (``from_onnx``), optimizes it for the target and compiles it; onnxruntime runs
the same file; eqsat's float32 is the float model through ``from_torch`` as ``bench e2e`` builds it.

Printed per model and thread count: milliseconds of each, ``ort_int8 / eqsat_int8`` (above 1: eqsat faster),
``eqsat_fp32 / eqsat_int8``, what eqsat computed on the integers (matmul_integer nodes against the quantized
file's MatMul/Gemm/Conv nodes), and the output's agreement with onnxruntime's int8: the largest difference and
the share of elements within 2 steps of the output's quantization scale (the last DequantizeLinear before the
output; a model whose output is not dequantized is compared in units of onnxruntime's own largest difference
from its float32 model).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.e2e import load_model, model_args
from costs.timing import SETTLE_S, interleaved
from lower.llvm.igemm import has_vnni
from lower.target import parse_target
from rewrite import from_onnx, from_torch
from rewrite.pipeline import compile, optimize

DEFAULT_MODELS = "full:bert,resnet50,full:mobilenet_v2"
CALIBRATION = 8  # random inputs quantize_static calibrates on


def _feeds(inputs: Sequence[torch.Tensor], names: Sequence[str], seed: int) -> dict[str, np.ndarray]:
    """Random inputs of the model's shapes and dtypes (token ids below the example's largest id + 1)."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for n, t in zip(names, inputs, strict=True):
        if t.dtype == torch.int64:
            out[n] = torch.randint(0, int(t.max()) + 1, t.shape, generator=gen).numpy()
        else:
            out[n] = torch.randn(t.shape, generator=gen).numpy().astype(np.float32)
    return out


def quantize(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], tmp: str) -> tuple[str, list[str]]:
    """The model's ONNX export quantized by onnxruntime (QDQ, per-channel int8 weights, uint8 activations)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    fp32, q = os.path.join(tmp, "fp32.onnx"), os.path.join(tmp, "int8.onnx")
    names = [f"in{i}" for i in range(len(inputs))]
    torch.onnx.export(module, inputs, fp32, input_names=names, dynamo=False)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = iter([_feeds(inputs, names, seed) for seed in range(CALIBRATION)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    quantize_static(
        fp32,
        q,
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        reduce_range=not onnxruntime_sums_exactly(),
    )
    return q, names


@functools.cache  # the host's: asked once per model and once per row
def onnxruntime_sums_exactly() -> bool:
    """Whether onnxruntime's uint8 x int8 kernels sum exactly on this host: with VNNI (``vpdpbusd``, AVX-512 or
    AVX).  Without it they add the products in pairs saturated at int16 (``vpmaddubsw``: 255 * -128 twice), where
    eqsat's sums are exact: on an AVX host 37% of a quantized MobileNetV2's outputs were within 2 steps of each
    other.  There the weights are quantized to 7 bits (``reduce_range``, onnxruntime's advice for such hosts),
    whose pairs fit."""
    host = parse_target("llvm", 1)
    return has_vnni(host) or "+avxvnni" in host.features  # eqsat's int8 kernels use the first only


def output_step(m: Any) -> float | None:
    """The quantization scale of the ONNX model ``m``'s first output: the scale of the DequantizeLinear that
    makes it."""
    from onnx import numpy_helper

    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    by_out = {o: n for n in m.graph.node for o in n.output}
    node = by_out.get(m.graph.output[0].name)
    while node is not None and node.op_type in ("Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze"):
        node = by_out.get(node.input[0])
    if node is None or node.op_type != "DequantizeLinear" or node.input[1] not in inits:
        return None
    s = inits[node.input[1]]
    return float(s.reshape(-1)[0]) if s.size == 1 else None


def run_model(spec: str, threads_list: Sequence[int], repeats: int) -> list[dict[str, Any]]:
    import onnx
    import onnxruntime as ort

    module, inputs = load_model(spec)
    module.eval()  # a wrapper left in training mode: the exporter restores it, and its children with it
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path, names = quantize(module, inputs, tmp)
        qmodel = onnx.load(path)
        contractions = sum(n.op_type in ("MatMul", "Gemm", "Conv") for n in qmodel.graph.node)
        step = output_step(qmodel)
        t0 = time.perf_counter()
        qgraph = from_onnx(path)
        import_s = time.perf_counter() - t0
        fgraph = from_torch(module, inputs, name=spec)
        feed_np = _feeds(inputs, names, 1234)
        feed = {k: torch.from_numpy(v) for k, v in feed_np.items()}
        for threads in threads_list:
            torch.set_num_threads(threads)
            t0 = time.perf_counter()
            target = parse_target("llvm", threads)
            qbest = optimize(qgraph, target=target).graph
            qrun = compile(qbest, target=target)
            build_s = time.perf_counter() - t0
            fbest = optimize(fgraph, target=target).graph
            frun = compile(fbest, target=target)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
            want = sess.run(None, feed_np)[0]
            qin = {n.attrs["name"]: feed[n.attrs["name"]] for n in qbest.inputs}
            fin = dict(zip([n.attrs["name"] for n in fbest.inputs], feed.values(), strict=False))
            got = qrun(qin)[0].numpy().reshape(want.shape)
            diff = np.abs(got - want)
            unit = step if step else float(np.abs(want).max()) / 127.0
            timed = interleaved(
                [partial(qrun, qin), partial(sess.run, None, feed_np), partial(frun, fin)],
                repeats=repeats,
                threads=threads,
                names=["eqsat_int8", "ort_int8", "eqsat_fp32"],
                settle_s=SETTLE_S if threads > 1 else 0.0,
            )
            ms = {k: t.median * 1e3 for k, t in zip(("eqsat_int8", "ort_int8", "eqsat_fp32"), timed.timings)}
            rows.append(
                {
                    "model": spec,
                    "threads": threads,
                    "weight_bits": 8 if onnxruntime_sums_exactly() else 7,
                    **{f"ms_{k}": v for k, v in ms.items()},
                    "ort_over_eqsat": ms["ort_int8"] / ms["eqsat_int8"],
                    "fp32_over_int8": ms["eqsat_fp32"] / ms["eqsat_int8"],
                    "integer_contractions": sum(
                        n.op in ("matmul_integer", "conv2d_integer") for n in qbest.nodes.values()
                    ),
                    "quantized_file_contractions": contractions,
                    "output_step": step,
                    "max_diff": float(diff.max()),
                    "within_2_steps": float(np.mean(diff <= 2 * unit * 1.0001)),
                    "import_seconds": import_s,
                    "build_seconds": build_s,
                }
            )
    return rows


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    print(
        f"{'model':<20} {'thr':>3} {'eqsat int8':>10} {'ort int8':>9} {'eqsat fp32':>10} {'ort/eq':>7} "
        f"{'fp32/int8':>9} {'int8 ops':>9} {'max diff':>9} {'<=2 steps':>9}"
    )
    for r in rows:
        print(
            f"{r['model']:<20} {r['threads']:>3} {r['ms_eqsat_int8']:>10.2f} {r['ms_ort_int8']:>9.2f} "
            f"{r['ms_eqsat_fp32']:>10.2f} {r['ort_over_eqsat']:>7.2f} {r['fp32_over_int8']:>9.2f} "
            f"{r['integer_contractions']:>4}/{r['quantized_file_contractions']:<4} {r['max_diff']:>9.4f} "
            f"{100 * r['within_2_steps']:>8.2f}%"
        )
    for t in sorted({r["threads"] for r in rows}):
        rs = [r["ort_over_eqsat"] for r in rows if r["threads"] == t]
        print(f"geomean ort_int8 / eqsat_int8 at {t} thread(s): {float(np.exp(np.mean(np.log(rs)))):.2f}")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eqsat bench quant", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=DEFAULT_MODELS, help="comma-separated bench e2e model specs")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json", help="write the rows to this file")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        names = model_args(args.models)
        threads = [int(x) for x in args.threads.split(",") if x]
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    try:
        import onnxruntime.quantization  # noqa: F401
    except ImportError:
        print("bench quant needs onnxruntime (pip install onnxruntime)", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for name in names:
        try:
            rows += run_model(name, threads, args.repeats)
        except Exception as e:  # one model failing leaves the others' rows
            where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
            at = f" (at {where.filename}:{where.lineno} in {where.name})" if where else ""
            print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}{at}", file=sys.stderr)
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
