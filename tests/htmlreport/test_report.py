"""The HTML report builder, provenance and the diff command, on small builder graphs (no browser)."""

from __future__ import annotations

import re

import pytest
import torch

from rewrite.cli.main import main
from rewrite.frontends.onnx import save
from rewrite.htmlreport import build, report
from rewrite.htmlreport.graphs import BLOCK_NODES, graph_svg
from rewrite.htmlreport.html import page
from rewrite.htmlreport.layout import layered
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph
from rewrite.pipeline import optimize
from rewrite.progress import enabled, set_quiet
from rewrite.rulelang.loader import load_rules


def _double_relu() -> Graph:
    b = GraphBuilder("g")
    x = b.input("x", (4, 8))
    return b.build([b.add(b.relu(b.relu(x)), x)])


@pytest.fixture(scope="module")
def result():
    return optimize(_double_relu(), rules=["algebra"], extractor="greedy")


def test_page_is_self_contained_with_every_section(result, tmp_path):
    path = tmp_path / "r.html"
    p = report(result, path, rules=load_rules(["algebra"]))
    html = path.read_text()
    for section in ("summary", "graphs", "changes", "saturation", "costs"):
        assert f'id="{section}"' in html
    assert 'class="graph graph-before"' in html and 'class="graph graph-after"' in html
    assert not re.search(r"(src|href)=\"https?:", html), "the page must fetch nothing"
    # the outer relu goes; the add reading it is rebuilt over the inner one, which is not a change
    assert html.count('class="node removed"') == 1 and html.count('class="node new"') == 0
    assert "relu-idem" in html
    assert p.provenance.contributing == {"relu-idem": result.stats.saturation.rules_fired["relu-idem"]}


def test_provenance_credits_the_rule_whose_rhs_builds_the_new_nodes():
    # matmul-concat-sum: x@W1 + h@W2 -> concat(x, h) @ concat(W1, W2)
    b = GraphBuilder("rnn")
    x, h = b.input("x", (2, 4)), b.input("h", (2, 4))
    w1, w2 = b.weight("w1", torch.randn(4, 3)), b.weight("w2", torch.randn(4, 3))
    g = b.build([b.add(b.matmul(x, w1), b.matmul(h, w2))])
    res = optimize(g, rules=["algebra"], extractor="greedy")
    p = build(res, rules=load_rules(["algebra"]))
    assert len(p.diff.regions) == 1
    assert "matmul-concat-sum" in p.provenance.regions[0].rules and not p.provenance.regions[0].loose
    assert "matmul-concat-sum" in p.provenance.where and "matmul-concat-sum" not in p.provenance.idle


def test_layout_layers_follow_edges():
    pos = layered({1: [], 2: [1], 3: [2], 4: [1, 3]}, engine="own")
    assert pos[1].y < pos[2].y < pos[3].y < pos[4].y


def test_big_graphs_are_collapsed_into_blocks():
    b = GraphBuilder("chain")
    v = b.input("x", (2, 2))
    for _ in range(BLOCK_NODES + 10):
        v = b.relu(v)
    svg = graph_svg(b.build([v]), {}, {}, "after")
    assert svg.count("<details") >= 2 and 'class="node stub"' in svg


def test_unchanged_graph_still_renders(result):
    p = build(result, rules=load_rules(["algebra"]))
    p.diff.regions.clear()
    assert 'id="changes"' in page(p)


def test_diff_command(tmp_path, capsys):
    a, b = tmp_path / "a.eqsat", tmp_path / "b.eqsat"
    res = optimize(_double_relu(), rules=["algebra"], extractor="greedy")
    save(res.original, a)
    save(res.graph, b)
    assert main(["--quiet", "diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "removed: 1 x relu" in out and "added:   none" in out and "region 1" in out


def test_progress_is_silent_off_a_terminal_and_with_quiet(capsys, monkeypatch):
    optimize(_double_relu(), rules=["algebra"], extractor="greedy")  # pytest's stderr is not a terminal
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    set_quiet(True)
    try:
        assert not enabled()
        optimize(_double_relu(), rules=["algebra"], extractor="greedy")
    finally:
        set_quiet(False)
    assert capsys.readouterr().err == ""


def test_backtracking_result_renders_without_an_egraph(tmp_path):
    """``optimize(search="backtrack")`` has no saturation stats: the page says so instead of failing."""
    res = optimize(_double_relu(), rules=["algebra"], search="backtrack")
    path = tmp_path / "b.html"
    report(res, path, rules=load_rules(["algebra"]))
    html = path.read_text()
    assert "backtracking search" in html and "builds no e-graph" in html
    assert html.count('class="node removed"') == 1


def _on_terminals(argvs: list[list[str]], cwd: str) -> list[tuple[int, str]]:
    """Run ``eqsat ARGV`` for each of ``argvs`` at once, stderr on a pseudo-terminal each; their exit codes
    and everything each drew there (concurrently: each run is mostly a Python start-up and torch import)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    started = []
    for argv in argvs:
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal has a width
        proc = subprocess.Popen(
            [sys.executable, "-m", "rewrite.cli", *argv], cwd=cwd, stdout=subprocess.DEVNULL, stderr=follower
        )
        os.close(follower)
        started.append((proc, leader))
    out = []
    for proc, leader in started:  # a child whose terminal buffer fills waits until it is read here: no deadlock
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        os.close(leader)
        out.append((proc.wait(timeout=120), b"".join(chunks).decode(errors="replace")))
    return out


@pytest.mark.slow  # 15 s: a real optimize --run in a pseudo-terminal; the bar helpers are tested fast below
def test_progress_bars_show_every_stage_on_a_terminal(tmp_path, capsys, monkeypatch):
    """Import, saturation, measuring compiled costs, extraction, verification and compile each draw a bar on a
    real terminal (a pseudo-terminal); loading a saved graph draws one too, and --quiet, also after the
    command, none (those two in this process, stderr made to look like a terminal)."""
    import os

    from rewrite.cli.main import main
    from rewrite.frontends.onnx import to_onnx

    plain, exact = tmp_path / "m.onnx", tmp_path / "m.eqsat"
    to_onnx(_double_relu(), plain)
    save(_double_relu(), exact)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ["optimize", str(plain), "--rules", "algebra", "--run", "llvm", "--repeats", "1"]
    ((rc, drawn),) = _on_terminals([args], root)
    assert rc == 0, drawn
    for stage in ("import", "saturate", "measure", "extract", "verify", "compile (llvm)"):
        assert stage in drawn, f"no '{stage}' bar in {drawn!r}"
    exact_args = ["optimize", str(exact), "--rules", "algebra", "--extractor", "greedy"]
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    try:
        assert main(exact_args) == 0
        drawn = capsys.readouterr().err
        assert "load " in drawn, drawn
        assert main([*exact_args, "--quiet"]) == 0  # accepted after the command too
        drawn = capsys.readouterr().err
        assert "saturate" not in drawn and "load " not in drawn, drawn
    finally:
        set_quiet(False)


def test_counter_and_each_draw_bars_only_on_a_terminal(capsys, monkeypatch):
    """The bars cost profiling and the benches use: silent off a terminal, drawn on one."""
    from rewrite.progress import counter, each

    tick = counter("profile m")
    for i in range(1, 4):
        tick(i, 3, "key")
    assert list(each(["a", "b"], "bench")) == ["a", "b"]
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    tick = counter("profile m")
    for i in range(1, 4):
        tick(i, 3, "key")
    assert list(each(["alpha", "beta"], "bench zoo")) == ["alpha", "beta"]
    err = capsys.readouterr().err
    assert "profile m" in err and "bench zoo" in err and "beta" in err
