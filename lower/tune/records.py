"""Tuning records: the fastest schedule decisions measured for a kernel on a target, kept across runs.

A record is one JSON line in the cache folder's ``tuning/records.jsonl``::

    {"format": 1, "key": "<sha256>", "target": "<target cache key>", "kernel": "k3_matmul",
     "decisions": {"nc": 8, "kc": 256, ...}, "seconds": 1.9e-4, "default_seconds": 2.3e-4,
     "trials": 41, "machine": "<host name>"}

keyed (``record_key``) by what the recipe reads: the kernel as printed under a fixed name, its ``GemmInfo``,
its constant buffers and the target's cache key (kind, threads, CPU, features, vector width, tile), and the
space's version (``SPACE_VERSION``, bumped when a recipe's decisions change meaning).  Not keyed by the
lowering's source digest, as schedules and measured costs are: a record is a set of decisions, replayed
through the recipe of the code that reads it, so it outlives edits that do not change the kernel's text;
a record whose decisions the recipe no longer accepts is passed over (the default schedule is used).

The file is appended to (one ``write`` per record, under ``O_APPEND``), so two processes tuning at once
both land; the last record of a key wins.  A line that does not parse or lacks a field (a run killed while
writing, an edit by hand) is dropped with one ``TuningWarning`` naming the file and line.
``compile`` reads the records through ``lookup`` (``lower.schedule.cache``); ``EQSAT_TUNING=0`` ignores them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lower.ir import Kernel
from lower.ops_to_loops.core import GemmInfo
from lower.schedule.record import recipe_inputs
from rewrite import config
from rewrite.ir.errors import ConfigError, TuningWarning
from rewrite.ir.target import Target

T = TypeVar("T")
SPACE_VERSION = 1  # of the recipes' decisions (names, meanings): records of another version are not read
FILE = "records.jsonl"
TRIALS_FILE = "trials.jsonl"


@dataclass(frozen=True)
class Record:
    key: str
    target: str  # the target's cache key
    kernel: str  # the kernel's name where it was tuned (for people reading the file)
    decisions: dict[str, Any]
    seconds: float  # the tuned schedule's measured time
    default_seconds: float  # the default schedule's, measured beside it
    trials: int  # candidates measured for this kernel (all runs together)
    machine: str = ""  # where it was measured (a Ray worker's host)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("extra")
        return {"format": SPACE_VERSION, **d, **self.extra}

    @property
    def speedup(self) -> float:
        return self.default_seconds / self.seconds if self.seconds > 0 else 1.0


def record_key(kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target) -> str:
    """The key of ``kernel``'s record on ``target`` (see the module docstring)."""
    text = "\n".join([f"tuning {SPACE_VERSION}", recipe_inputs(kernel, gemm, const_names, target)])
    return hashlib.sha256(text.encode()).hexdigest()


_REQUIRED = {"key": str, "target": str, "kernel": str, "decisions": dict, "seconds": float, "default_seconds": float}


def _parse(line: str) -> Record | str:
    """The record on ``line``, or why it is not one (a short phrase)."""
    try:
        d = json.loads(line)
    except json.JSONDecodeError as e:
        return f"not JSON ({e.msg})"
    if not isinstance(d, dict):
        return "not a JSON object"
    if d.get("format") != SPACE_VERSION:
        return f"format {d.get('format')!r}, expected {SPACE_VERSION}"
    for name, kind in _REQUIRED.items():
        v = d.get(name)
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, kind):
            return f"field {name!r} missing or not a {kind.__name__}"
        d[name] = v
    if not (d["seconds"] > 0 and d["default_seconds"] > 0):
        return "times must be positive"
    known = {f.name for f in dataclasses.fields(Record)} - {"extra"}
    return Record(
        **{k: d[k] for k in known if k in d and k != "trials"},
        trials=int(d.get("trials", 0)),
        extra={k: v for k, v in d.items() if k not in known and k != "format"},
    )


class RecordStore:
    """The records of one file, read once (``load``), appended to (``add``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._records: dict[str, Record] | None = None
        self._lock = threading.Lock()

    def load(self) -> dict[str, Record]:
        with self._lock:
            if self._records is None:
                self._records = {}
                if self.path is not None and self.path.exists():
                    self._read_file()
            return self._records

    def _read_file(self) -> None:
        assert self.path is not None and self._records is not None
        for r in _read_lines(self.path, _parse, "records"):
            self._records[r.key] = r

    def get(self, key: str) -> Record | None:
        return self.load().get(key)

    def add(self, rec: Record) -> None:
        """Keep ``rec`` (it replaces the key's record in memory) and append it to the file."""
        self.load()
        with self._lock:
            assert self._records is not None
            self._records[rec.key] = rec
            if self.path is None:
                return
            _append(self.path, json.dumps(rec.to_json(), sort_keys=True) + "\n")

    def __len__(self) -> int:
        return len(self.load())


@dataclass(frozen=True)
class Trial:
    """One measured candidate: its time relative to the default schedule's in the same batch (``ratio``),
    and its features (``lower.tune.features``) for the cost model."""

    key: str
    decisions: dict[str, Any]
    ratio: float
    features: tuple[float, ...] = ()


class TrialLog:
    """Every candidate measured, per record key (``trials.jsonl`` beside the records, one line per batch):
    what a later run does not measure again, and trains its cost model on."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._trials: dict[str, list[Trial]] | None = None
        self._lock = threading.Lock()

    def load(self) -> dict[str, list[Trial]]:
        with self._lock:
            if self._trials is None:
                self._trials = {}
                if self.path is not None and self.path.exists():
                    for got in _read_lines(self.path, _parse_trials, "trials"):
                        for t in got:
                            self._trials.setdefault(t.key, []).append(t)
            return self._trials

    def of(self, key: str) -> list[Trial]:
        return self.load().get(key, [])

    def add(self, key: str, trials: list[Trial]) -> None:
        if not trials:
            return
        self.load()
        with self._lock:
            assert self._trials is not None
            self._trials.setdefault(key, []).extend(trials)
            if self.path is None:
                return
            line = {
                "format": SPACE_VERSION,
                "key": key,
                "trials": [[t.decisions, t.ratio, list(t.features)] for t in trials],
            }
            _append(self.path, json.dumps(line, sort_keys=True) + "\n")


def _parse_trials(line: str) -> list[Trial] | str:
    try:
        d = json.loads(line)
    except json.JSONDecodeError as e:
        return f"not JSON ({e.msg})"
    if not isinstance(d, dict) or d.get("format") != SPACE_VERSION or not isinstance(d.get("key"), str):
        return "not a trials line of this format"
    out = []
    for t in d.get("trials") or []:
        if not (isinstance(t, list) and len(t) == 3 and isinstance(t[0], dict) and isinstance(t[1], (int, float))):
            return "a trial is not [decisions, ratio, features]"
        out.append(Trial(d["key"], t[0], float(t[1]), tuple(float(x) for x in t[2] or ())))
    return out


def _read_lines(path: Path, parse: Callable[[str], T | str], what: str) -> list[T]:
    """What ``parse`` makes of each line of ``path`` (blank ones skipped); the lines it cannot use (it returns why,
    a phrase) dropped with one ``TuningWarning`` naming the file and the first three."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as e:
        warnings.warn(f"tuning {what} {path}: cannot be read ({e.strerror}); none used", TuningWarning, stacklevel=4)
        return []
    out, bad = [], []
    for no, line in enumerate(lines, 1):
        if line.strip():
            got = parse(line)
            if isinstance(got, str):
                bad.append(f"line {no}: {got}")
            else:
                out.append(got)
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        warnings.warn(
            f"tuning {what} {path}: {len(bad)} damaged line(s) dropped: {'; '.join(bad[:3])}{more}",
            TuningWarning,
            stacklevel=4,
        )
    return out


def _append(path: Path, text: str) -> None:
    """``text`` appended to ``path`` in one write (``O_APPEND``: writers in two processes both land)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as e:
        warnings.warn(f"tuning file {path}: cannot be written ({e.strerror})", TuningWarning, stacklevel=3)


_logs: dict[str, TrialLog] = {}


def trial_log(path: Path | None = None) -> TrialLog:
    """The trial log beside the records (``trials.jsonl``), one per file per process."""
    if path is None:
        rp = default_path()
        path = rp.with_name(TRIALS_FILE) if rp is not None else None
    with _stores_lock:
        lg = _logs.get(str(path))
        if lg is None:
            lg = _logs[str(path)] = TrialLog(path)
        return lg


_stores: dict[str, RecordStore] = {}
_stores_lock = threading.Lock()


def default_path() -> Path | None:
    """``tuning/records.jsonl`` in the cache folder; None when the folder cannot be made."""
    try:
        return config.cache_dir("tuning") / FILE
    except ConfigError:
        return None


def store(path: Path | None = None) -> RecordStore:
    """The record store of ``path`` (default: the cache folder's), one per file per process."""
    path = path if path is not None else default_path()
    name = str(path)
    with _stores_lock:
        s = _stores.get(name)
        if s is None:
            s = _stores[name] = RecordStore(path)
        return s


def forget() -> None:
    """Drop the stores read in this process (tests; a changed ``EQSAT_CACHE_DIR``): the next lookup reads again."""
    with _stores_lock:
        _stores.clear()
        _logs.clear()


def _in_use() -> RecordStore | None:
    """The cache folder's store, None when ``EQSAT_TUNING=0`` or it has no file (nothing read, nothing kept)."""
    if not config.TUNING.flag():
        return None
    s = store()
    if s.path is None or (s._records is None and not s.path.exists()):
        return None
    return s


def digest(target: Target) -> str | None:
    """A short digest of the records kept for ``target`` (their keys and decisions), None when there are none
    or ``EQSAT_TUNING=0``: measured kernel costs are keyed by it (``lower.llvm.measure.cost_key``), so the
    compiled cost model measures again, with the tuned schedules, after ``eqsat tune`` changed a record."""
    s = _in_use()
    if s is None:
        return None
    mine = sorted(
        (r.key, json.dumps(r.decisions, sort_keys=True)) for r in s.load().values() if r.target == target.cache_key
    )
    return hashlib.sha256(repr(mine).encode()).hexdigest()[:16] if mine else None


def lookup(kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target) -> Record | None:
    """``kernel``'s record on ``target``, or None (none kept, or ``EQSAT_TUNING=0``)."""
    s = _in_use()
    return s.get(record_key(kernel, gemm, const_names, target)) if s is not None else None


__all__ = [
    "FILE",
    "SPACE_VERSION",
    "TRIALS_FILE",
    "Record",
    "RecordStore",
    "Trial",
    "TrialLog",
    "digest",
    "forget",
    "lookup",
    "record_key",
    "store",
    "trial_log",
]
