"""``eqsat bench [SUITE] ...``: the benchmark scripts of ``bench/``, by name.

    eqsat bench --models nasrnn          # the Tensat table (the default suite)
    eqsat bench fidelity | kernels | e2e
    eqsat bench e2e --target cuda [--peers eager,inductor] [--cost compiled|analytical]   # on a GPU
    eqsat bench kernels --target cuda    # GEMM vs cuBLAS (TF32 and FP32), a fused chain vs copy bandwidth
    eqsat bench search [--json OUT]      # saturation + greedy / ILP against backtracking, per model
    eqsat bench onnx-conformance [--json OUT]   # the onnx package's node tests through eqsat
    eqsat bench zoo [--models a,b] [--json OUT]  # CNNs from their papers and transformers models, end to end
    eqsat bench overhead [--models a,b] [--json OUT]  # eqsat's import, optimize and compile seconds and memory,
                                        # cold and warm, beside onnxruntime, OpenVINO and torch.compile builds
    eqsat bench quant [--models a,b] [--threads 1,2]   # onnxruntime's int8 QDQ export: eqsat int8 against
                                        # onnxruntime int8 and eqsat float32
    eqsat bench tune-ray [--models a,b] [--trials N]   # one tuning budget on a 1- and a 2-node local Ray cluster

Each suite parses the rest of the line itself (``eqsat bench e2e --help``).
"""

from __future__ import annotations

from collections.abc import Callable

from bench import e2e, fidelity, kernels, overhead, search, tensat_table
from bench.zoo import run as zoo_run


def _quant(argv: list[str]) -> int:
    from bench import quant  # deferred: needs onnxruntime's quantizer

    return quant.main(argv)


def _tune_ray(argv: list[str]) -> int:
    from bench import tune_ray  # deferred: needs ray

    return tune_ray.main(argv)


def _onnx_conformance(argv: list[str]) -> int:
    from bench import onnx_conformance  # deferred: needs the optional 'onnx' extra

    return onnx_conformance.main(argv)


SUITES: dict[str, Callable[[list[str]], int]] = {
    "tensat": tensat_table.main,
    "fidelity": fidelity.main,
    "kernels": kernels.main,
    "e2e": e2e.main,
    "search": search.main,
    "onnx-conformance": _onnx_conformance,
    "zoo": zoo_run.main,
    "overhead": overhead.main,
    "quant": _quant,
    "tune-ray": _tune_ray,
}
DEFAULT = "tensat"


def main(argv: list[str], prog: str = "eqsat bench") -> int:
    if argv and argv[0] in SUITES:
        return int(SUITES[argv[0]](argv[1:]))
    return int(SUITES[DEFAULT](argv))
