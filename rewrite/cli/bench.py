"""``eqsat bench [SUITE] ...``: the benchmark scripts of ``bench/``, by name.

    eqsat bench --models nasrnn          # the Tensat table (the default suite)
    eqsat bench fidelity | kernels | e2e

Each suite parses the rest of the line itself (``eqsat bench e2e --help``).
"""

from __future__ import annotations

from collections.abc import Callable

from bench import e2e, fidelity, kernels, tensat_table

SUITES: dict[str, Callable[[list[str]], int]] = {
    "tensat": tensat_table.main,
    "fidelity": fidelity.main,
    "kernels": kernels.main,
    "e2e": e2e.main,
}
DEFAULT = "tensat"


def main(argv: list[str], prog: str = "eqsat bench") -> int:
    if argv and argv[0] in SUITES:
        return int(SUITES[argv[0]](argv[1:]))
    return int(SUITES[DEFAULT](argv))
