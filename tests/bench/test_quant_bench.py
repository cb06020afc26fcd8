"""``eqsat bench quant`` end to end on a small zoo model: onnxruntime's QDQ export imported, its quantized
layers computed on the integers, the table printed (slow: quantization, two optimizes, timing)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("onnxruntime.quantization")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_bench_quant_runs_a_quantized_zoo_model(tmp_path, capsys):
    from bench import quant

    out = tmp_path / "rows.json"
    assert quant.main(["--models", "mobilenet_v2", "--threads", "1", "--repeats", "1", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())
    assert row["integer_contractions"] > row["quantized_file_contractions"] // 2  # the grouped convs stay float
    assert row["within_2_steps"] >= 0.999
    assert "geomean ort_int8 / eqsat_int8 at 1 thread(s)" in capsys.readouterr().out
