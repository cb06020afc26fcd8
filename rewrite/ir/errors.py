"""Every error a user can cause, under one root: ``EqsatError``.

The ``eqsat`` command catches ``EqsatError`` alone and prints one line
(``eqsat: error: ...``, with the error's ``hint`` when it has one); anything
else that escapes is a bug and shows its traceback.  ``exit_code`` is 2 for
usage errors (bad arguments, unknown names, malformed input files) and 1 for
failures (a graph that does not verify, a kernel that cannot be built, ...).

Each error also derives from the built-in exception it replaced, so callers
that caught ``ValueError`` or ``RuntimeError`` keep working.

    >>> try:
    ...     raise ShapeError("op 'matmul': inner dimensions differ: 3 vs 4")
    ... except EqsatError as e:
    ...     (e.exit_code, str(e))
    (1, "op 'matmul': inner dimensions differ: 3 vs 4")
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A place in a source file (a rule file, a model's Python file): ``path:line:col``."""

    path: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


class EqsatError(Exception):
    """The root of every error eqsat raises on purpose."""

    exit_code = 1
    hint = ""  # one sentence: what to do about it

    def __init__(self, message: str = "", *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class UsageError(EqsatError, ValueError):
    """Bad arguments or input named by the user: an unknown model, a missing file, impossible limits."""

    exit_code = 2


class ConfigError(UsageError):
    """An ``EQSAT_*`` setting has a value that cannot be used."""


class ShapeError(EqsatError, ValueError):
    """An op was given inputs or attributes whose shapes do not fit."""


class GraphError(EqsatError, ValueError):
    """A graph is malformed: names the node and what is wrong."""


class InputError(UsageError, GraphError):
    """Tensors given to a graph or a compiled model do not match its inputs; says what it takes."""


class FrontendError(EqsatError, ValueError):
    """A model cannot be imported; the message names the op and where it comes from."""


class RuleError(UsageError):
    """A rule file or rule expression is malformed: ``file:line:col: message``."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(f"{loc}: {message}")
        self.loc = loc


class ProveError(UsageError):
    """A ``rules prove`` question is malformed: bad expression, unknown variable, different shapes."""


class SaturationError(EqsatError, RuntimeError):
    """egglog rejected the program, or a rule proved unsound while saturating."""


class ExtractionError(EqsatError, RuntimeError):
    """No acyclic, well-formed choice exists for an e-class."""


class SearchError(EqsatError, RuntimeError):
    """A rule, applied to a concrete graph by the backtracking search, built an ill-formed or
    differently shaped replacement: the rule is unsound (the checker should have caught it)."""


class VerificationError(EqsatError, AssertionError):
    """The optimized graph computes something else: the worst bug we can ship."""


class CacheError(EqsatError, RuntimeError):
    """A cache (measured costs, kernels) could not be opened or rebuilt."""


class CacheWarning(UserWarning):
    """A cache entry or folder was unusable and was worked around (rebuilt, or skipped): only costs time."""


class TuningWarning(UserWarning):
    """A tuning record that cannot be used (a damaged line, decisions the recipe no longer accepts), or a
    measurement worker lost mid-run: tuning goes on without it."""


class LoweringError(EqsatError, ValueError):
    """A graph node cannot be lowered to kernels for the target; names the node."""


class ScheduleError(LoweringError):
    """A schedule step is illegal or does not apply to the loop nest."""


class DecisionError(ScheduleError):
    """A schedule decision asked a value that is not among its legal choices for the kernel (a tuning
    candidate or record), or asked twice: never a reason for a recipe to fall back to another."""


class CodegenError(LoweringError):
    """The code generator met loop IR it cannot translate."""


__all__ = [
    "CacheError",
    "CacheWarning",
    "CodegenError",
    "ConfigError",
    "DecisionError",
    "EqsatError",
    "ExtractionError",
    "FrontendError",
    "GraphError",
    "InputError",
    "Loc",
    "LoweringError",
    "ProveError",
    "RuleError",
    "SaturationError",
    "ScheduleError",
    "SearchError",
    "ShapeError",
    "TuningWarning",
    "UsageError",
    "VerificationError",
]
