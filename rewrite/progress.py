"""Progress bars for the long stages (tqdm), silent unless stderr is a terminal, and off with ``--quiet``.

The pipeline reports through these few functions, so the library sits in one place:

    >>> with stage("extract"):                 # a spinner-like bar while the block runs
    ...     pass
    >>> tick = iterations(3)                   # a bar that the saturation callback advances
    >>> tick(); tick(); close(tick)
    >>> for name in each(["bert", "nasrnn"], "bench"):   # a bar over a bench's models
    ...     pass
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from tqdm import tqdm

_quiet = False
T = TypeVar("T")


def set_quiet(quiet: bool) -> None:
    """``eqsat --quiet``: no bars, whatever the terminal."""
    global _quiet
    _quiet = quiet


def quiet() -> bool:
    return _quiet


def say(line: str) -> None:
    """A one-line status message on stderr ("loading bert ..."); none with ``--quiet``."""
    if not _quiet:
        print(line, file=sys.stderr, flush=True)


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


def each(items: Sequence[T], desc: str, unit: str = "model") -> Iterator[T]:
    """Iterate ``items`` under a bar whose postfix names the current one (a bench's models)."""
    with bar(desc, total=len(items), unit=unit) as b:
        for item in items:
            b.set_postfix_str(str(item), refresh=True)
            yield item
            b.update(1)


def counter(desc: str, unit: str = "config") -> Callable[..., None]:
    """A ``(done, total, key)`` callback, the shape cost profiling reports in, drawn as a bar."""
    state: dict[str, Any] = {}

    def report(done: int, total: int, key: Any = None) -> None:
        b = state.get("bar")
        if b is None:
            b = state["bar"] = bar(desc, total=total, unit=unit)
        b.update(done - b.n)
        if done >= total:
            b.close()

    return report
