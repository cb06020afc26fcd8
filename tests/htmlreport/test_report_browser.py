"""The HTML report rendered by a real browser: headless Chromium loads a page, the DOM is checked.

Chromium is Debian's ``chromium`` package, installed by ``make browser`` (CI runs it); a test never
installs system packages, so without it the test skips and says how to get it.  Console
errors are caught by a recorder script put before the page's own: it writes ``window.onerror`` and
``console.error`` calls into a DOM element that ``--dump-dom`` then shows.  The screenshot is saved
as ``report.png`` under pytest's temporary directory (``--basetemp`` keeps it where CI wants it).
"""

from __future__ import annotations

import html as htmllib
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from rewrite.htmlreport import report
from rewrite.ir.builder import GraphBuilder
from rewrite.pipeline import optimize
from rewrite.rulelang.loader import load_rules

RECORDER = (
    "<script>(function(){var log=[];function put(){var e=document.getElementById('console-errors');"
    "if(!e){e=document.createElement('pre');e.id='console-errors';(document.body||document.documentElement)"
    ".appendChild(e);}e.textContent=log.join('\\n');}"
    "window.addEventListener('error',function(ev){log.push('error: '+ev.message);put();});"
    "var ce=console.error;console.error=function(){log.push('console.error: '+Array.prototype.join.call("
    "arguments,' '));put();return ce.apply(console,arguments);};"
    "document.addEventListener('DOMContentLoaded',put);})();</script>"
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:  # tests install nothing: `make browser` (which CI runs) installs Debian's chromium
        pytest.skip("chromium is not installed: `make browser` installs it (apt-get, as root)")
    return found


def _run(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
    return subprocess.run([browser, *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    # one RNN-like cell: x@W1 + h@W2 merges into one matmul over concatenations (NasRNN's rewrite)
    b = GraphBuilder("rnn-cell")
    x, h = b.input("x", (2, 4)), b.input("h", (2, 4))
    w1, w2 = b.weight("w1", torch.randn(4, 3)), b.weight("w2", torch.randn(4, 3))
    g = b.build([b.tanh(b.add(b.matmul(x, w1), b.matmul(h, w2)))])
    res = optimize(g, rules=["algebra"], extractor="greedy")
    path = tmp_path_factory.mktemp("report") / "report.html"
    report(res, path, rules=load_rules(["algebra"]))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("<head>", "<head>" + RECORDER, 1), encoding="utf-8")
    return path


def test_chromium_renders_the_report(page_file):
    browser = _chromium()
    done = _run(browser, "--virtual-time-budget=3000", "--dump-dom", page_file.as_uri())
    assert done.returncode == 0, done.stderr[-500:]
    dom = done.stdout
    assert "<svg" in dom and 'class="graph graph-before"' in dom and 'class="graph graph-after"' in dom
    for section in ("summary", "graphs", "changes", "saturation", "costs"):
        assert f'id="{section}"' in dom, section
    assert dom.count('class="plot"') >= 2, "the saturation plots"
    assert dom.count("<table") >= 3 and "matmul-concat-sum" in dom
    assert 'class="node new"' in dom and 'class="node removed"' in dom
    errors = re.search(r'<pre id="console-errors">(.*?)</pre>', dom, re.S)
    assert errors is not None, "the console recorder did not run"
    assert htmllib.unescape(errors.group(1)).strip() == "", errors.group(1)


def test_chromium_screenshot(page_file, tmp_path):
    browser = _chromium()
    shot = tmp_path / "report.png"
    done = _run(browser, "--window-size=1400,2000", f"--screenshot={shot}", page_file.as_uri())
    assert done.returncode == 0, done.stderr[-500:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000  # a blank page compresses far smaller
    print(f"screenshot: {shot}")
