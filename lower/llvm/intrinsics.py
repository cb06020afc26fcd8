"""Hand-written LLVM routines that ``tensorize`` maps loop nests onto.

Each entry of ``INTRINSICS`` takes the function emitter and the ``Intrinsic``
statement and emits a call (defining the routine in the module once).
"""

from __future__ import annotations

from typing import Callable

INTRINSICS: dict[str, Callable] = {}
