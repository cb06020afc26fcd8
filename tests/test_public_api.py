"""The names ``rewrite.__all__`` documents stay what the README says, whatever was imported first.

Importing a subpackage binds it as an attribute of its parent, so a subpackage named like a public
function (``rewrite.verify`` was one) silently replaced the function after the first ``optimize``.
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import rewrite


def _every_module() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(rewrite.__path__, "rewrite."):
        if info.name.rsplit(".", 1)[-1] != "__main__":  # running it would start the CLI
            names.append(info.name)
    return names


def test_every_public_name_survives_importing_every_submodule():
    for name in _every_module():
        importlib.import_module(name)
    for name in rewrite.__all__:
        want = getattr(importlib.import_module(rewrite._EXPORTS[name]), name)
        assert getattr(rewrite, name) is want, f"rewrite.{name} is {getattr(rewrite, name)!r}"
    assert callable(rewrite.verify) and rewrite.verify.__module__ == "rewrite.verification.numeric"


@pytest.mark.slow  # a fresh interpreter loads torch and egglog again (4 s); the test above checks the names in-process
def test_verify_after_optimize_in_a_fresh_process():
    # the README's sequence, in a process where nothing else was imported first
    code = (
        "import rewrite\n"
        "from rewrite.ir.builder import GraphBuilder\n"
        "b = GraphBuilder('t'); x = b.input('x', [4, 4])\n"
        "g = b.build([b.relu(b.relu(x))])\n"
        "res = rewrite.optimize(g, rules=['algebra'], extractor='greedy')\n"
        "print(rewrite.verify(g, res.graph))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_all_and_exports_agree():
    assert sorted(rewrite.__all__) == sorted(rewrite._EXPORTS)
    assert set(dir(rewrite)) >= set(rewrite.__all__)
