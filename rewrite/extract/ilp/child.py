"""A big part of the 0-1 program solved in a process of its own, stopped at the deadline.

HiGHS checks its time limit between steps, and some root steps of a big MIP run seconds without a check:
on bert grown to 66k e-nodes (a 24k-column part) the analytic-centre interior-point solve that HiGHS 1.15
runs at the root, waited for after the first cut rounds, overran a 4.3 s limit by 1.3 s.  A process can be
stopped at any moment, so a part with at least ``CHILD_MIN_NONZEROS`` nonzeros is solved in one: it streams
each improving solution and each better proved bound back as it finds them, and when the deadline comes
first the parent kills it and keeps the last of each.  Small parts, which finish in milliseconds and never
overrun, stay in this process (a process costs ~0.1 s to start).

The protocol is pickled tuples on the child's original stdout (HiGHS's own console output, when verbose, is
sent to stderr): ``("incumbent", objective, x)``, ``("bound", bound)``, then ``("done", Answer)``.

    >>> # answer = solve_in_child(program, time_left=4.0, start=x0, rel_gap=1e-6, verbose=False)
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from rewrite.extract.ilp.highs import Answer, OnIncumbent, Program, solve_part
from rewrite.extract.ilp.result import IlpStatus

CHILD_MIN_NONZEROS = 100_000  # parts at least this big are solved in a child process (the built-in models': < 10k)
CHILD_STOP_EARLY = 0.1  # seconds before the deadline at which the child's HiGHS is told to stop by itself
_HERE = Path(__file__).resolve().parent
# The child imports this module and ``highs`` without running the ``rewrite`` packages' __init__ files (they
# import torch: a second of start-up): the packages are entered in sys.modules as bare namespaces first.
_BOOT = (
    "import sys, types\n"
    "for name, path in {packages!r}:\n"
    "    m = types.ModuleType(name); m.__path__ = [path]; sys.modules[name] = m\n"
    "from rewrite.extract.ilp.child import _child_main\n"
    "_child_main()\n"
).format(
    packages=[
        ("rewrite", str(_HERE.parents[1])),
        ("rewrite.extract", str(_HERE.parent)),
        ("rewrite.extract.ilp", str(_HERE)),
    ]
)


@dataclass(frozen=True)
class _Job:
    program: Program
    deadline: float  # time.time() at which the parent stops waiting
    start: np.ndarray | None
    rel_gap: float
    verbose: bool


def solve_in_child(
    p: Program,
    time_left: float,
    start: np.ndarray | None,
    rel_gap: float,
    verbose: bool,
    on_incumbent: OnIncumbent | None = None,
) -> Answer:
    """``highs.solve_part`` in a child process that is killed if it is still running ``time_left`` seconds
    from now: then the answer is the last improving solution it reported (None: the caller keeps the warm
    start) with the last bound, as ``TIME_LIMIT``.  A child that dies or fails answers ``FALLBACK``."""
    deadline = time.time() + time_left
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if verbose else err,
        )
        assert proc.stdin is not None and proc.stdout is not None
        messages: queue.Queue[tuple[Any, ...]] = queue.Queue()
        reader = threading.Thread(target=_read_messages, args=(proc.stdout, messages), daemon=True)
        reader.start()
        try:
            pickle.dump(_Job(p, deadline, start, rel_gap, verbose), proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.close()
        except OSError:
            pass  # the child died before reading its job: reported below as a failure
        x, bound, final, ended = None, None, None, False
        while final is None and not ended:
            try:
                msg = messages.get(timeout=max(0.0, deadline - time.time()))
            except queue.Empty:
                break  # the deadline: the child is killed below
            if msg[0] == "incumbent":
                x = msg[2]
                if on_incumbent is not None:
                    on_incumbent(msg[1], msg[2])
            elif msg[0] == "bound":
                bound = msg[1]
            elif msg[0] == "done":
                final = msg[1]
            else:
                ended = True
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join()
        if final is not None:
            return final
        if ended:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()
            why = tail[-1] if tail else f"exit status {proc.returncode}"
            return Answer(None, IlpStatus.FALLBACK, None, f"HiGHS's process ended without an answer: {why}")
    return Answer(x, IlpStatus.TIME_LIMIT, bound, "HiGHS's process stopped at the time limit")


def _read_messages(stream: IO[bytes], out: queue.Queue[tuple[Any, ...]]) -> None:
    """The child's messages, in order, then ``("end",)`` once its stdout closes."""
    try:
        while True:
            out.put(pickle.load(stream))
    except (EOFError, pickle.UnpicklingError, OSError):
        out.put(("end",))


def _child_main() -> None:
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed from here on (HiGHS's log) goes to stderr, never into the protocol
    job: _Job = pickle.load(sys.stdin.buffer)

    def send(*msg: Any) -> None:
        pickle.dump(msg, channel, protocol=pickle.HIGHEST_PROTOCOL)
        channel.flush()

    left = job.deadline - CHILD_STOP_EARLY - time.time()
    if left <= 0:
        answer = Answer(None, IlpStatus.TIME_LIMIT, None, "time limit used up starting HiGHS's process")
    else:
        answer = solve_part(
            job.program,
            left,
            job.start,
            job.rel_gap,
            job.verbose,
            on_incumbent=lambda obj, x: send("incumbent", obj, x),
            on_bound=lambda b: send("bound", b),
        )
    send("done", answer)
    channel.close()
