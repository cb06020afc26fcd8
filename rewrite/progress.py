"""Progress bars for the long stages (tqdm), silent unless stderr is a terminal, and off with ``--quiet``.

The pipeline reports through these few functions, so the library sits in one place:

    >>> with stage("extract"):                 # a spinner-like bar while the block runs
    ...     pass
    >>> tick = iterations(3)                   # a bar that the saturation callback advances
    >>> tick(); tick(); close(tick)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm

_quiet = False


def set_quiet(quiet: bool) -> None:
    """``eqsat --quiet``: no bars, whatever the terminal."""
    global _quiet
    _quiet = quiet


def quiet() -> bool:
    return _quiet


def enabled() -> bool:
    """Bars only on a terminal (a pipe, a log file or CI gets none) and not when quiet."""
    return not _quiet and sys.stderr.isatty()


def bar(desc: str, total: int | None = None, unit: str = "it") -> Any:
    """A tqdm bar on stderr that vanishes when done; disabled (a no-op) off a terminal."""
    return tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr, disable=not enabled())


@contextmanager
def stage(desc: str) -> Iterator[None]:
    """A bar with the stage's name and elapsed time while the block runs."""
    b = bar(desc, total=1, unit="stage")
    try:
        yield
        b.update(1)
    finally:
        b.close()


class _Ticker:
    def __init__(self, desc: str, total: int | None, unit: str) -> None:
        self.bar = bar(desc, total=total, unit=unit)

    def __call__(self, postfix: str = "") -> None:
        if postfix:
            self.bar.set_postfix_str(postfix, refresh=False)
        self.bar.update(1)


def iterations(total: int | None, desc: str = "saturate", unit: str = "iter") -> Callable[..., None]:
    """A bar of ``total`` steps; call the result once per step (optionally with a postfix text)."""
    return _Ticker(desc, total or None, unit)


def close(ticker: Callable[..., None]) -> None:
    if isinstance(ticker, _Ticker):
        ticker.bar.close()
