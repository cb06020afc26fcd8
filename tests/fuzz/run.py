"""``make fuzz N=...``: fuzz N random graphs in parallel worker processes, shrink and record the failures.

    python -m tests.fuzz.run --n 2000 --workers 2 --timeout 120

Each worker checks one seed at a time (``oracle.check``); a seed that takes
longer than ``--timeout`` seconds is a *timeout*: its worker is killed and
replaced.  After the run every distinct failure (same kind, same message
shape) is shrunk to a minimal graph and written as a regression test in
``tests/fuzz/regressions/`` (``--no-write`` to only report).  The last line is
the summary; the exit code is 1 if anything was wrong, crashed or timed out.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import queue
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REGRESSIONS = Path(__file__).resolve().parent / "regressions"


# A worker checks at most this many seeds, then exits and a fresh process takes its place: the LLVM JIT keeps
# every kernel it ever loaded (about 0.4 MB a graph), so one process through a long run would only grow.
SEEDS_PER_WORKER = 200


def _worker(tasks: Any, results: Any) -> None:
    # every graph saturated and extracted here: the seeds repeat from run to run, and an answer an earlier run kept
    # (rewrite.result_cache) would check the optimizer no further than that run did
    os.environ["EQSAT_OPTIMIZE_CACHE"] = "0"
    from tests.fuzz.gen import random_graph  # in the spawned worker: torch loads there
    from tests.fuzz.oracle import check

    for _ in range(SEEDS_PER_WORKER):
        seed = tasks.get()
        if seed is None:
            return
        results.put(("start", seed, (time.time(), os.getpid())))
        o = check(random_graph(seed), seed)
        results.put(("done", seed, (o.kind, o.detail, o.ops_before, o.ops_after)))


class _Pool:
    def __init__(self, workers: int) -> None:
        self.ctx = mp.get_context("spawn")  # fresh interpreters: no torch/LLVM state copied by fork
        self.tasks = self.ctx.Queue()
        self.results = self.ctx.Queue()
        self.procs = [self._start() for _ in range(workers)]

    def _start(self) -> Any:
        p = self.ctx.Process(target=_worker, args=(self.tasks, self.results), daemon=True)
        p.start()
        return p

    def replace_dead(self) -> None:
        self.procs = [p if p.is_alive() else self._start() for p in self.procs]

    def kill_all(self) -> None:
        for p in self.procs:
            p.kill()


def fuzz(seeds: list[int], workers: int, timeout: float) -> dict[int, tuple[str, str, int, int]]:
    """Check every seed; returns seed -> (kind, detail, ops before, ops after)."""
    pool = _Pool(workers)
    for s in seeds:
        pool.tasks.put(s)
    done: dict[int, tuple[str, str, int, int]] = {}
    running: dict[int, tuple[float, int]] = {}  # seed -> (start time, worker pid)
    t0 = time.time()
    while len(done) < len(seeds):
        try:
            what, seed, payload = pool.results.get(timeout=1.0)
            if what == "start":
                running[seed] = payload
            else:
                running.pop(seed, None)
                done[seed] = payload
                if len(done) % 50 == 0 or len(done) == len(seeds):
                    kinds = Counter(k for k, *_ in done.values())
                    print(f"  {len(done)}/{len(seeds)} in {time.time() - t0:.0f}s: {dict(kinds)}", flush=True)
        except queue.Empty:
            pass
        dead = {p.pid: p.exitcode for p in pool.procs if not p.is_alive()}
        if dead and not any(pid in dead for _, pid in running.values()):
            pool.replace_dead()  # a worker retired after its SEEDS_PER_WORKER seeds
        for seed, (start, pid) in list(running.items()):
            if pid in dead:  # a segfault or abort: the process is gone without a result
                running.pop(seed)
                done[seed] = ("crash", f"worker process died (exit code {dead[pid]})", 0, 0)
                pool.replace_dead()
            elif time.time() - start > timeout:  # kill that worker; a fresh one takes the remaining seeds
                running.pop(seed)
                done[seed] = ("timeout", f"no result within {timeout:.0f}s", 0, 0)
                for proc in pool.procs:
                    if proc.pid == pid:
                        proc.kill()
                        proc.join()
                pool.replace_dead()
    for _ in pool.procs:
        pool.tasks.put(None)
    return done


def record_failures(results: dict[int, tuple[str, str, int, int]], write: bool) -> list[str]:
    """Shrink one failing seed per distinct signature and write it as a regression test."""
    from tests.fuzz.gen import random_graph  # the parent imports torch only if something failed
    from tests.fuzz.oracle import check
    from tests.fuzz.shrink import shrink, signature, to_python

    by_sig: dict[str, list[int]] = {}
    for seed, (kind, detail, *_) in sorted(results.items()):
        if kind in ("wrong", "crash", "timeout"):
            by_sig.setdefault(signature(kind, detail), []).append(seed)
    written = []
    for sig, seeds in by_sig.items():
        seed = seeds[0]
        kind, detail = results[seed][:2]
        print(f"{len(seeds)} x {sig}  (e.g. seed {seed})")
        graph = random_graph(seed)
        if kind != "timeout":
            graph = shrink(graph, lambda g, s=seed, sg=sig: signature(*_kd(check(g, s))) == sg)
        if write:
            REGRESSIONS.mkdir(exist_ok=True)
            path = REGRESSIONS / f"test_seed_{seed}.py"
            note = f"{kind}, {detail.strip().splitlines()[0][:100]}; {len(seeds)} seed(s) like it"
            path.write_text(to_python(graph, seed, note))
            written.append(str(path))
            print(f"  wrote {path} ({len(graph.nodes)} nodes)")
    return written


def _kd(o: Any) -> tuple[str, str]:
    return o.kind, o.detail


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="graphs to check")
    p.add_argument("--start", type=int, default=0, help="first seed")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per graph")
    p.add_argument("--no-write", action="store_true", help="do not write regression tests")
    args = p.parse_args(argv)
    if args.n < 1 or args.workers < 1 or args.timeout <= 0:
        p.error("--n, --workers and --timeout must be positive")
    t0 = time.time()
    results = fuzz(list(range(args.start, args.start + args.n)), args.workers, args.timeout)
    kinds = Counter(k for k, *_ in results.values())
    record_failures(results, not args.no_write)
    before = sum(r[2] for r in results.values())
    after = sum(r[3] for r in results.values())
    print(f"ops in {before}, out {after} over {len(results)} graphs; {time.time() - t0:.0f}s")
    print(
        f"fuzz: {len(results)} graphs, {kinds['ok']} ok, {kinds['imprecise']} imprecise "
        f"(float32 limits, order of inf sums), "
        f"{kinds['wrong']} wrong, {kinds['crash']} crashes, {kinds['timeout']} timeouts"
    )
    return 1 if kinds["wrong"] or kinds["crash"] or kinds["timeout"] else 0


if __name__ == "__main__":
    sys.exit(main())
