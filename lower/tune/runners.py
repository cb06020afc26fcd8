"""Where candidates are measured: this process (``LocalRunner``) or the nodes of a Ray cluster (``RayRunner``).

A runner takes batches (``submit(task, candidates)``: one kernel, a few candidates) and hands back finished
ones (``done()``), each measured by ``lower.tune.harness.measure`` beside the kernel's default schedule.
``slots`` says how many batches it measures at once; the tuner keeps that many in flight.

``RayRunner`` starts one measuring actor per node of the cluster (``ray.init(address)``: ``"auto"``, an
address, or a ``LocalCluster`` started here: ``make_runner``), each asking for one CPU, pinned to its node;
each actor builds and times candidates for its own machine: it re-targets the kernel to its host
(``parse_target``), so its results are keyed by that machine's target.  When an actor or its node dies
mid-batch, the batch goes back to the queue and runs on another actor (``retried``, with one
``TuningWarning``); only when none is left does the run stop, with an error.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from lower.target import parse_target
from lower.tune.harness import Measured, measure
from lower.tune.records import record_key
from lower.tune.space import Decisions, TuneTask
from rewrite.ir.errors import TuningWarning, UsageError


@dataclass
class Batch:
    """One kernel's candidates sent out together, and what came back."""

    id: int
    task: TuneTask
    candidates: list[Decisions]
    confirm: bool = False  # a kernel's best candidate measured once more against its default
    default: Measured | None = None
    results: list[Measured] = field(default_factory=list)
    key: str = ""  # the record key on the machine that measured it
    target: str = ""  # that machine's target cache key
    machine: str = ""
    error: str = ""
    tries: int = 0


def retarget(task: TuneTask, threads: int) -> TuneTask:
    """``task`` for this machine's host target on ``threads`` threads (a worker on another CPU builds for its
    own), with that target's record key."""
    t = parse_target("llvm" if task.target.kind == "llvm" else task.target.kind, threads)
    if t.cache_key == task.target.cache_key:
        return task
    return dataclasses.replace(
        task, target=t, key=record_key(task.kernel, task.gemm, set(task.const_names), t), where=list(task.where)
    )


def run_batch(b: Batch, want_features: bool, threads: int | None = None) -> Batch:
    """Measure ``b`` here (see ``harness.measure``), on this host's target when ``threads`` is given."""
    task = retarget(b.task, threads) if threads else b.task
    b.default, b.results = measure(task, b.candidates, want_features=want_features)
    b.key, b.target, b.machine = task.key, task.target.cache_key, socket.gethostname()
    return b


class LocalRunner:
    """Measures each batch in this process when submitted."""

    slots = 1
    name = "local"

    def __init__(self) -> None:
        self._done: deque[Batch] = deque()
        self.retried = 0
        self.machines: set[str] = {socket.gethostname()}

    def submit(self, b: Batch, want_features: bool = True) -> None:
        try:
            self._done.append(run_batch(b, want_features))
        except Exception as e:  # a kernel whose default does not build: reported, the run goes on
            b.error = f"{type(e).__name__}: {e}"
            self._done.append(b)

    def pending(self) -> int:
        """Batches submitted and not yet handed back by ``done``."""
        return len(self._done)

    def done(self, block: bool = True) -> list[Batch]:
        out = list(self._done)
        self._done.clear()
        return out

    def close(self) -> None:
        pass


class _Worker:
    """The Ray actor's body: measures batches on its node, on ``threads`` threads (pinned to ``cpu`` when
    given: nodes sharing one machine each keep to one core)."""

    def __init__(self, threads: int, cpu: int | None) -> None:
        os.environ["EQSAT_COMPILE_JOBS"] = "1"  # the node's CPU measures; no compile workers beside it
        os.environ["EQSAT_THREADS"] = str(threads)
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {cpu})
        import torch

        torch.set_num_threads(threads)
        self.threads = threads

    def run(self, b: Batch, want_features: bool) -> Batch:
        try:
            return run_batch(b, want_features, self.threads)
        except Exception as e:
            b.error = f"{type(e).__name__}: {e}"
            return b

    def where(self) -> tuple[str, int]:
        return socket.gethostname(), os.getpid()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs the ray package", hint="pip install 'eqsat[tune]' (ray, lightgbm)") from None
    return ray


class RayRunner:
    """One measuring actor per node of a Ray cluster (see the module docstring)."""

    name = "ray"

    def __init__(self, address: str | None = None, threads: int = 1, pin_cores: bool = False) -> None:
        ray = self.ray = _ray()
        if not ray.is_initialized():
            if not address:
                raise UsageError("RayRunner needs a cluster address (or ray.init called first)")
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except ConnectionError as e:
                raise UsageError(f"cannot reach a Ray cluster at {address}: {e}") from None
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
        if not nodes:
            raise UsageError(f"Ray cluster {address or '(local)'}: no live node with a CPU to measure on")
        actor = ray.remote(num_cpus=1, max_restarts=0)(_Worker)
        self.actors: list[Any] = []
        for i, n in enumerate(nodes):
            strategy = NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
            cpu = i % (os.cpu_count() or 1) if pin_cores else None
            self.actors.append(actor.options(scheduling_strategy=strategy).remote(threads, cpu))
        self.slots = len(self.actors)
        self._free = list(self.actors)
        self._inflight: dict[Any, tuple[Any, Batch, bool]] = {}
        self._queue: deque[tuple[Batch, bool]] = deque()
        self.retried = 0
        self.lost = 0
        self.machines: set[str] = set()
        self.cluster: LocalCluster | None = None  # started for this runner (``make_runner``): closed with it

    def submit(self, b: Batch, want_features: bool = True) -> None:
        self._queue.append((b, want_features))
        self._dispatch()

    def _dispatch(self) -> None:
        while self._queue and self._free:
            b, wf = self._queue.popleft()
            a = self._free.pop()
            b.tries += 1
            self._inflight[a.run.remote(b, wf)] = (a, b, wf)

    def pending(self) -> int:
        """Batches submitted and not yet handed back by ``done`` (queued, or in flight)."""
        return len(self._inflight) + len(self._queue)

    def done(self, block: bool = True) -> list[Batch]:
        """Finished batches (waiting for one when ``block`` and some are in flight)."""
        ray = self.ray
        out: list[Batch] = []
        if not self._inflight:
            return out
        ready, _ = ray.wait(list(self._inflight), num_returns=1, timeout=None if block else 0)
        for ref in ready:
            a, b, wf = self._inflight.pop(ref)
            try:
                got = ray.get(ref)
            except Exception as e:  # the actor or its node died: its batch runs again elsewhere
                self.lost += 1
                self.actors = [x for x in self.actors if x is not a]
                self.slots = max(1, len(self.actors))
                if not self.actors:
                    raise UsageError(f"every Ray measuring worker was lost (last: {type(e).__name__})") from None
                warnings.warn(
                    f"a Ray measuring worker was lost ({type(e).__name__}); its batch of {len(b.candidates)} "
                    f"candidates for {b.task.name} runs again on another node",
                    TuningWarning,
                    stacklevel=2,
                )
                self.retried += 1
                self._queue.appendleft((b, wf))
                continue
            self._free.append(a)
            if got.machine:
                self.machines.add(got.machine)
            out.append(got)
        self._dispatch()
        return out

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:
                pass
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


class LocalCluster:
    """A Ray cluster of ``nodes`` nodes on this machine, ``cpus`` CPUs each, every node a ``ray start --block``
    process in its own process group (``kill_node`` kills one whole: raylet and workers; ``close`` all of
    them, never ``ray stop``, which stops every cluster on the machine).  ``env`` is added to the nodes'
    environment (their workers read ``EQSAT_*`` settings from it).  The head notices a dead node within about
    a second (``FAST_FAILURE``).  ``address`` is what ``ray.init`` and ``RayRunner`` connect to."""

    FAST_FAILURE = {"RAY_health_check_period_ms": "300", "RAY_health_check_failure_threshold": "3"}

    def __init__(self, nodes: int = 2, cpus: int = 1, env: dict[str, str] | None = None, timeout: float = 90) -> None:
        import shutil
        import subprocess
        import sys
        import time
        from pathlib import Path

        ray = _ray()
        exe = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            port = sk.getsockname()[1]
        self.temp = f"/tmp/eqr{os.getpid()}_{port}"  # Ray's socket paths must stay short
        self.address = f"127.0.0.1:{port}"
        full_env = {**os.environ, **self.FAST_FAILURE, "RAY_USAGE_STATS_ENABLED": "0", **(env or {})}
        common = [f"--num-cpus={cpus}", "--node-ip-address=127.0.0.1", "--disable-usage-stats", "--block"]

        def start(args: list[str]) -> subprocess.Popen:
            return subprocess.Popen(
                [exe, "start", *args, *common],
                env=full_env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )

        self.nodes = [start(["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={self.temp}"])]
        try:
            deadline = time.time() + timeout
            while True:  # the head up, then the others join it
                try:
                    ray.init(address=self.address, logging_level="ERROR", log_to_driver=False)
                    break
                except Exception:
                    if time.time() > deadline or self.nodes[0].poll() is not None:
                        raise UsageError(f"a local Ray head node did not start within {timeout:.0f} s") from None
                    time.sleep(1)
            self.nodes += [start([f"--address={self.address}"]) for _ in range(nodes - 1)]
            while sum(1 for n in ray.nodes() if n["Alive"]) < nodes:
                if time.time() > deadline:
                    raise UsageError(f"{nodes - 1} local Ray worker node(s) did not join within {timeout:.0f} s")
                time.sleep(0.5)
        except BaseException:
            self.close()
            raise

    def kill_node(self, i: int) -> None:
        """Kill node ``i`` (0: the head) and everything it started, at once (SIGKILL)."""
        import signal

        p = self.nodes[i]
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)

    def close(self) -> None:
        import shutil

        ray = _ray()
        if ray.is_initialized():
            ray.shutdown()
        for i in reversed(range(len(self.nodes))):
            self.kill_node(i)
            self.nodes[i].wait(timeout=30)
        shutil.rmtree(self.temp, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_runner(ray: str | None, threads: int, pin_cores: bool = False) -> LocalRunner | RayRunner:
    """``LocalRunner`` without ``ray``; else a ``RayRunner`` on the cluster at ``ray`` (``auto``: the running
    one, ``HOST:PORT``), or for ``local`` / ``local:N`` on a ``LocalCluster`` of N one-CPU nodes started here
    (default: one per core; its workers pinned to their cores), stopped by the runner's ``close``."""
    if not ray:
        return LocalRunner()
    if ray == "local" or ray.startswith("local:"):
        n = int(ray.partition(":")[2] or 0) or max(
            1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        )
        cluster = LocalCluster(nodes=n, cpus=1)
        try:
            runner = RayRunner(None, threads, pin_cores=True)
        except BaseException:
            cluster.close()
            raise
        runner.cluster = cluster
        return runner
    return RayRunner(ray, threads, pin_cores)


__all__ = ["Batch", "LocalCluster", "LocalRunner", "RayRunner", "make_runner", "retarget", "run_batch"]
