"""A persistent, process-safe cache of measured operator costs (SQLite).

One file (default ``$EQSAT_CACHE_DIR/costs.sqlite``, else ``~/.cache/eqsat/costs.sqlite``)
holds every measurement, keyed by ``(target, key)``:

* ``target`` — the *target fingerprint*: what ran the op and how (``torch-cpu|threads=2|torch=2.13.0``),
  so different targets and thread counts live side by side;
* ``key`` — the canonical JSON of the op configuration (``op_key``): op, attributes, input shapes, dtype.

The file also records its schema version and the *machine fingerprint* (CPU model, core count, OS,
architecture).  A file written by another schema or another machine, or one that is not a SQLite
database at all, is never trusted: it is renamed aside (``costs.sqlite.stale-<reason>-<time>``)
and a fresh cache is created, with one ``CacheWarning``.  A cache folder that cannot be used (a
file, not writable) raises ``ConfigError``: unlike the kernel cache, which only saves time, this
file is what ``eqsat costs profile`` produces, so it is never silently dropped.

Concurrency.  Every operation opens a short-lived connection in WAL mode with a busy timeout and
writes in one transaction (``INSERT OR REPLACE``), so several profiling processes can share the
file.  Checking and rebuilding the file is guarded by an advisory lock file (``costs.sqlite.lock``):
operations hold it shared, a rebuild holds it exclusively, so no process ever renames a database
another process has open.

    >>> cache = CostCache("/tmp/c.sqlite")                     # doctest: +SKIP
    >>> cache.put("torch-cpu|threads=1", op_key("relu", {}, [(4,)]), "relu", 1e-6, 20)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sqlite3
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from costs.machine import cpu_name
from rewrite import config
from rewrite.ir.errors import CacheError, CacheWarning, ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX: no cross-process lock, SQLite's own locking remains
    fcntl = None  # type: ignore[assignment]

SCHEMA_VERSION = "1"
COLUMNS = ("target", "key", "op", "seconds", "reps", "iqr", "created")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS costs (
    target TEXT NOT NULL,      -- target fingerprint
    key TEXT NOT NULL,         -- canonical op configuration (op_key)
    op TEXT NOT NULL,
    seconds REAL NOT NULL,     -- median run time
    reps INTEGER NOT NULL,     -- timed runs behind the median
    iqr REAL,                  -- interquartile range of those runs, seconds
    created REAL NOT NULL,     -- unix time
    PRIMARY KEY (target, key)
);
"""


def default_path() -> Path:
    return config.cache_dir() / "costs.sqlite"


def machine_fingerprint() -> str:
    """CPU model, core count, OS and architecture: what makes measurements from elsewhere meaningless."""
    key = f"{cpu_name()}|{os.cpu_count()}|{platform.system()}|{platform.machine()}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _jsonable(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v


def op_key(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Sequence[int]], dtype: str = "float32") -> str:
    """Canonical JSON of one op configuration: equal configurations give equal strings."""
    return json.dumps(
        {"op": op, "attrs": _jsonable(dict(attrs)), "in": [[int(d) for d in s] for s in in_shapes], "dtype": dtype},
        sort_keys=True,
        separators=(",", ":"),
    )


class CostCache:
    """The measured-cost database at ``path`` for this machine (``machine`` overrides the fingerprint)."""

    def __init__(self, path: str | Path | None = None, machine: str | None = None, timeout: float = 30.0) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.machine = machine or machine_fingerprint()
        self.timeout = timeout
        self.moved_aside: list[Path] = []  # files this instance renamed aside (not trusted)
        self.disabled = False  # another machine's process took the file over: keep working without it
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._open_checked()
        except OSError as e:  # measurements are the product here: no silent in-memory fallback
            bad = next((p for p in self.path.parents if p.exists()), None)
            why = f"{bad} is not a folder" if bad is not None and not bad.is_dir() else (e.strerror or str(e))
            raise ConfigError(
                f"cost cache {self.path}: {why}",
                hint=f"choose a writable folder (--cache, or {config.CACHE_DIR.name})",
            ) from None

    # ------------------------------------------------------------ locking and validation
    @contextlib.contextmanager
    def _lock(self, exclusive: bool) -> Iterator[None]:
        if fcntl is None:
            yield
            return
        with open(self._lock_path, "a+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        con.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        con.execute("PRAGMA synchronous = NORMAL")  # WAL: still never corrupt, at worst loses the last writes
        return con

    def _problem(self, deep: bool) -> str | None:
        """Why the file cannot be trusted (``corrupt``, ``schema``, ``machine``), or None.  Creates a fresh file."""
        try:
            con = self._connect()
        except sqlite3.Error:
            return "corrupt"
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:  # new (or empty) file: create it; concurrent creators are serialised by SQLite
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("BEGIN IMMEDIATE")
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                con.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                con.execute("INSERT OR IGNORE INTO meta VALUES ('machine', ?)", (self.machine,))
                con.execute("COMMIT")
                tables = {"meta", "costs"}
            if deep and con.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                return "corrupt"
            if tables != {"meta", "costs"}:
                return "schema"
            cols = tuple(r[1] for r in con.execute("PRAGMA table_info(costs)"))
            meta = dict(con.execute("SELECT name, value FROM meta").fetchall())
            if cols != COLUMNS or meta.get("schema") != SCHEMA_VERSION:
                return "schema"
            if meta.get("machine") != self.machine:
                return "machine"
            if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                con.execute("PRAGMA journal_mode=WAL")
            return None
        except sqlite3.DatabaseError:  # "file is not a database", malformed pages, ...
            return "corrupt"
        finally:
            con.close()

    def _move_aside(self, reason: str) -> None:
        stamp = f"stale-{reason}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        for suffix in ("", "-wal", "-shm"):
            src = self.path.with_name(self.path.name + suffix)
            if src.exists():
                dst = self.path.with_name(f"{self.path.name}.{stamp}{suffix}")
                src.replace(dst)
                if not suffix:
                    self.moved_aside.append(dst)

    def _open_checked(self) -> None:
        with self._lock(exclusive=False):
            problem = self._problem(deep=True)
        if problem is None:
            return
        with self._lock(exclusive=True):  # re-check: another process may have rebuilt it meanwhile
            problem = self._problem(deep=True)
            if problem is not None:
                warnings.warn(
                    f"cost cache {self.path} is not usable ({problem}); moved aside and rebuilt",
                    CacheWarning,
                    stacklevel=3,
                )
                self._move_aside(problem)
                problem = self._problem(deep=False)
        if problem is not None:
            raise CacheError(f"cannot create a cost cache at {self.path}: {problem}")

    @contextlib.contextmanager
    def _session(self) -> Iterator[sqlite3.Connection | None]:
        """A connection for one operation, or None when the file now belongs to another machine."""
        if self.disabled:
            yield None
            return
        with self._lock(exclusive=False):
            con = self._connect()
            try:
                meta = dict(con.execute("SELECT name, value FROM meta").fetchall())
                if meta.get("machine") != self.machine or meta.get("schema") != SCHEMA_VERSION:
                    warnings.warn(
                        f"cost cache {self.path} was rebuilt by another machine or version; "
                        "keeping measurements in memory only",
                        CacheWarning,
                        stacklevel=4,
                    )
                    self.disabled = True
                    yield None
                    return
                yield con
            finally:
                con.close()

    # ------------------------------------------------------------ operations
    def get(self, target: str, key: str) -> float | None:
        with self._session() as con:
            if con is None:
                return None
            row = con.execute("SELECT seconds FROM costs WHERE target=? AND key=?", (target, key)).fetchone()
            return None if row is None else float(row[0])

    def load(self, target: str) -> dict[str, float]:
        """Every cached key → seconds for one target fingerprint."""
        with self._session() as con:
            if con is None:
                return {}
            return {k: float(s) for k, s in con.execute("SELECT key, seconds FROM costs WHERE target=?", (target,))}

    def put(self, target: str, key: str, op: str, seconds: float, reps: int, iqr: float | None = None) -> None:
        self.put_many([(target, key, op, seconds, reps, iqr)])

    def put_many(self, rows: Sequence[tuple[str, str, str, float, int, float | None]]) -> None:
        with self._session() as con:
            if con is None:
                return
            con.execute("BEGIN IMMEDIATE")
            try:
                con.executemany(
                    "INSERT OR REPLACE INTO costs VALUES (?, ?, ?, ?, ?, ?, ?)", [(*r, time.time()) for r in rows]
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def entries(self, target: str | None = None) -> list[dict[str, Any]]:
        """Every entry (optionally of one target), parsed: target, op, attrs, in_shapes, dtype, seconds, ..."""
        with self._session() as con:
            if con is None:
                return []
            q = "SELECT target, key, op, seconds, reps, iqr, created FROM costs"
            rows = con.execute(
                q + (" WHERE target=?" if target else "") + " ORDER BY target, op, key", (target,) if target else ()
            ).fetchall()
        out = []
        for t, key, op, sec, reps, iqr, created in rows:
            try:
                k = json.loads(key)
            except ValueError:
                k = {}
            if not isinstance(k, dict):
                k = {}
            out.append(
                {
                    "target": t,
                    "op": op,
                    "attrs": k.get("attrs", {}),
                    "in_shapes": k.get("in", []),
                    "dtype": k.get("dtype"),
                    "seconds": sec,
                    "reps": reps,
                    "iqr": iqr,
                    "created": created,
                    "key": key,
                }
            )
        return out

    def __len__(self) -> int:
        with self._session() as con:
            return 0 if con is None else int(con.execute("SELECT COUNT(*) FROM costs").fetchone()[0])

    def clear(self, target: str | None = None) -> int:
        with self._session() as con:
            if con is None:
                return 0
            cur = con.execute("DELETE FROM costs" + (" WHERE target=?" if target else ""), (target,) if target else ())
            return cur.rowcount

    def __repr__(self) -> str:
        return f"CostCache({str(self.path)!r})"
