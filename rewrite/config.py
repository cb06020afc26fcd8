"""Every ``EQSAT_*`` setting, declared once with its default and meaning.

A setting is read from the environment each time it is asked for (tests and
benches change them at run time), parsed by its kind, and a value that cannot
be parsed raises ``ConfigError`` naming the variable.  ``eqsat config`` prints
them all with their current values.

    >>> THREADS.name, THREADS.kind
    ('EQSAT_THREADS', 'int')
    >>> cache_dir("kernels").name
    'kernels'

Nothing here imports more than the standard library: the CLI reads settings
before it decides what heavy modules it needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rewrite.ir.errors import ConfigError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``kind`` is ``bool``, ``int``, ``path`` or ``text``; ``default`` is its text."""

    name: str
    kind: str
    default: str
    meaning: str

    @property
    def raw(self) -> str | None:
        return os.environ.get(self.name)

    def _text(self) -> str:
        raw = self.raw
        return self.default if raw is None or raw.strip() == "" else raw.strip()

    def flag(self) -> bool:
        assert self.kind == "bool", self.name
        text = self._text().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ConfigError(f"{self.name}={self.raw!r}: expected 1/0, true/false, yes/no or on/off")

    def integer(self) -> int | None:
        """The value as an int, or None where it is unset and has no default."""
        assert self.kind == "int", self.name
        text = self._text()
        if not text:
            return None
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"{self.name}={self.raw!r}: expected a whole number") from None
        if value < 1:
            raise ConfigError(f"{self.name}={value}: must be at least 1")
        return value

    def path(self) -> Path:
        assert self.kind == "path", self.name
        return Path(os.path.expanduser(self._text()))

    def text(self) -> str:
        """The value as stripped text (the default where unset)."""
        assert self.kind == "text", self.name
        return self._text()

    @contextmanager
    def set(self, value: str) -> Iterator[None]:
        """The setting at ``value`` while the block runs (its environment variable), as before after it:
        ``with TUNING.set("0"): ...``."""
        old = os.environ.get(self.name)
        os.environ[self.name] = value
        try:
            yield
        finally:
            if old is None:
                os.environ.pop(self.name, None)
            else:
                os.environ[self.name] = old

    def describe(self) -> str:
        """The current value as text, for ``eqsat config``."""
        if self.kind == "bool":
            return "1" if self.flag() else "0"
        if self.kind == "int":
            v = self.integer()
            return "(auto)" if v is None else str(v)
        if self.kind == "text":
            return self.text() or "(unset)"
        return str(self.path())


SETTINGS: dict[str, Setting] = {}


def _declare(name: str, kind: str, default: str, meaning: str) -> Setting:
    s = Setting(name, kind, default, meaning)
    SETTINGS[name] = s
    return s


CACHE_DIR = _declare(
    "EQSAT_CACHE_DIR",
    "path",
    "~/.cache/eqsat",
    "where caches live: measured costs (costs.sqlite), machine profiles (machine.json), kernels (kernels/)",
)
NO_CACHE = _declare(
    "EQSAT_NO_CACHE",
    "bool",
    "0",
    "compile and schedule every kernel, time every run check and optimize every graph again: no kernels/, "
    "schedules/, run_checks/ or results/",
)
THREADS = _declare(
    "EQSAT_THREADS", "int", "", "threads the compiled kernels use (default: the cores this process may run on)"
)
COMPILE_JOBS = _declare(
    "EQSAT_COMPILE_JOBS",
    "int",
    "",
    "LLVM modules compiled at once: this process and JOBS-1 worker processes (default: the cores this process "
    "may run on; 1: all in this process)",
)
RUN_CHECK = _declare(
    "EQSAT_RUN_CHECK",
    "bool",
    "1",
    "optimize for a compiled target times its chosen graph against the imported one and returns the faster "
    "(0: trust the cost model)",
)
OPTIMIZE_CACHE = _declare(
    "EQSAT_OPTIMIZE_CACHE",
    "bool",
    "1",
    "optimize keeps its answers in the cache folder (results/) and answers the same graph, rules, limits and cost "
    "model from there without saturating again (0: always saturate)",
)
MEASURE_ALL = _declare(
    "EQSAT_MEASURE_ALL",
    "bool",
    "0",
    "measure every fused increment a compiled cost model prices (default: a few sizes of each family measured, "
    "the rest interpolated)",
)
DEBUG = _declare("EQSAT_DEBUG", "bool", "0", "show LLVM's diagnostics and why a schedule recipe was refused")
NO_SCHEDULE = _declare("EQSAT_NO_SCHEDULE", "bool", "0", "lower kernels without schedules (plain loop nests)")
CUDA_EXACT_FP32 = _declare(
    "EQSAT_CUDA_EXACT_FP32", "bool", "0", "CUDA: contractions in exact FP32 FMA tiles instead of TF32 tensor cores"
)
CUDA_GRAPH = _declare(
    "EQSAT_CUDA_GRAPH",
    "bool",
    "1",
    "CUDA: replay a compiled graph's launches as one captured CUDA graph (one per set of input/output addresses)",
)
TUNING = _declare(
    "EQSAT_TUNING",
    "bool",
    "1",
    "kernels take the schedules eqsat tune measured fastest (the cache folder's tuning/records.jsonl); 0: every "
    "kernel takes its recipe's default schedule",
)
PACK_A = _declare(
    "EQSAT_PACK_A",
    "bool",
    "1",
    "pack a row-major GEMM A operand into k-major panels where its rows would share an L1 set (0: never)",
)
TRACE = _declare("EQSAT_TRACE", "bool", "0", "print each saturation iteration's rule matches (like optimize -v)")
UPDATE_SNAPSHOTS = _declare(
    "EQSAT_UPDATE_SNAPSHOTS", "bool", "0", "tests: rewrite the code-generation snapshots instead of comparing"
)
TEST_TARGET = _declare(
    "EQSAT_TEST_TARGET",
    "text",
    "",
    "tests: the target the lowering tests' per-op graphs compile for (default llvm; make gpu-check sets cuda)",
)


def cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity on this OS
        return max(1, os.cpu_count() or 1)


def cache_dir(sub: str = "") -> Path:
    """The cache directory (or one folder in it), created on first use.

    Raises ``ConfigError`` when it cannot be created or is not a directory.
    """
    root = CACHE_DIR.path()
    d = root / sub if sub else root
    try:
        d.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ConfigError(
            f"{CACHE_DIR.name}={root}: not a directory", hint=f"point {CACHE_DIR.name} at a folder, or unset it"
        ) from None
    except OSError as e:
        raise ConfigError(f"{CACHE_DIR.name}={root}: cannot create {d}: {e.strerror}") from None
    if not d.is_dir():
        raise ConfigError(f"{CACHE_DIR.name}={root}: {d} is not a directory")
    return d
