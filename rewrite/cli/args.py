"""Argument types and checks shared by the sub-commands: every argument is validated before any work.

argparse calls a ``type=`` function on each value and turns an ``ArgumentTypeError``
into a one-line usage error (exit 2), so a bad number or a JSON file in a missing
folder is refused before a model is even loaded.

    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be at least 1, got 0
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rewrite.egraph.limits import Limits
from rewrite.ir.errors import UsageError
from rewrite.rulelang.loader import load_rules, resolve_rule_specs
from rewrite.rulelang.syntax import Rule, load_rule_file


def _number(text: str, kind: type) -> float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {'whole ' if kind is int else ''}number, got {text!r}") from None


def positive_int(text: str) -> int:
    v = int(_number(text, int))
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def nonneg_int(text: str) -> int:
    v = int(_number(text, int))
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {v}")
    return v


def positive_float(text: str) -> float:
    v = _number(text, float)
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return v


def output_file(text: str) -> str:
    """A file to write: its folder must exist and be writable, and it must not be a folder.

    Checked by creating (and removing) a file beside it, so a read-only file system or a folder
    like ``/sys`` is refused before any work, not after it (``os.access`` says yes to root).
    """
    if not text:
        raise argparse.ArgumentTypeError("empty file name")
    p = Path(text)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is a folder, not a file: name a file in it")
    if parent.exists() and not parent.is_dir():
        raise argparse.ArgumentTypeError(f"'{parent}' is a file, not a folder: choose another path for '{text}'")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"folder '{parent}' does not exist: create it or choose another path")
    try:
        if p.exists():
            with open(p, "ab"):  # appends nothing: the file is left as it is until the run writes it
                pass
        else:
            with tempfile.NamedTemporaryFile(dir=parent, prefix=".eqsat-write-check-"):
                pass
    except OSError as e:
        what = f"file '{text}'" if p.exists() else f"folder '{parent}'"
        raise argparse.ArgumentTypeError(
            f"{what} is not writable ({e.strerror or type(e).__name__}): choose another path"
        ) from None
    return text


def json_output(text: str) -> str:
    """``--json``: a file to write (``output_file``), or ``-`` for stdout."""
    return text if text == "-" else output_file(text)


MODEL_SUFFIXES = (".onnx", ".eqsat")


def model_output(text: str) -> str:
    """``optimize -o``: an ``.onnx`` file (a standard model onnxruntime runs) or an ``.eqsat`` file (eqsat's exact
    format), checked like every output file (``output_file``); another suffix is refused before any work."""
    if Path(text).suffix.lower() not in MODEL_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"'{text}': the file name must end in .onnx (a standard ONNX model) or .eqsat (eqsat's exact format)"
        )
    return output_file(text)


_DIMS = re.compile(r"^\s*\d+(\s*[x,]\s*\d+)*\s*$")


def parse_shape(spec: str) -> tuple[str, tuple[int, ...]]:
    """``NAME=DIMS`` with DIMS like ``64x1024`` or ``64,1024`` (a scalar-free IR: at least one dim)."""
    if "=" not in spec:
        raise argparse.ArgumentTypeError(f"'{spec}': expected NAME=DIMS, e.g. a=64x1024")
    name, dims = spec.split("=", 1)
    name = name.strip().lstrip("?")
    if not name:
        raise argparse.ArgumentTypeError(f"'{spec}': missing variable name")
    if not _DIMS.match(dims):
        raise argparse.ArgumentTypeError(
            f"'{spec}': DIMS must be positive integers separated by 'x' or ',', e.g. 64x1024"
        )
    shape = tuple(int(d) for d in re.split(r"[x,]", dims.replace(" ", "")))
    if any(d <= 0 for d in shape):
        raise argparse.ArgumentTypeError(f"'{spec}': dimensions must be positive")
    return name, shape


def add_shapes(p: argparse.ArgumentParser, help: str) -> None:
    """``--shape NAME=DIMS`` (repeatable), read by ``shapes_of``."""
    p.add_argument("--shape", action="append", type=parse_shape, metavar="NAME=DIMS", help=help)


def shapes_of(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The ``--shape`` options by name; a name given twice is a usage error."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, shape in args.shape or []:
        if name in shapes:
            raise UsageError(f"--shape: '{name}' is given twice")
        shapes[name] = shape
    return shapes


MODEL_SHAPE_HELP = (
    "an ONNX model's open dimensions: a symbolic dimension's size (batch=8) or an input's whole shape "
    "(input_ids=1x128); the graph is compiled for them (repeatable)"
)


def add_limits(p: argparse.ArgumentParser) -> None:
    """``--iters --nodes --seconds --match-limit``: the saturation limits."""
    p.add_argument("--iters", type=nonneg_int, default=Limits.iterations, help="iteration limit")
    p.add_argument("--nodes", type=positive_int, default=Limits.nodes, help="e-node limit")
    p.add_argument("--seconds", type=positive_float, default=Limits.seconds, help="saturation time limit")
    p.add_argument(
        "--match-limit",
        type=positive_int,
        default=None,
        help="matches one rule may apply per iteration (default: grows with the e-graph)",
    )


def limits_of(args: argparse.Namespace) -> Limits:
    return Limits(iterations=args.iters, nodes=args.nodes, seconds=args.seconds, match_limit=args.match_limit)


def add_rules(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rules",
        action="append",
        metavar="FAMILY|FILE",
        help="rule family name, all, or a .rules file (repeatable; default: all)",
    )


def load_rule_args(specs: Sequence[str] | None, option: str = "--rules") -> list[Rule]:
    """The rules ``--rules`` names (``None``: every shipped family), refusing a rule file with no rules in it
    and a set that loads none: saturating with no rules would run and change nothing, silently."""
    for path in resolve_rule_specs(specs):
        if not load_rule_file(path):
            raise UsageError(f"{option} {path}: the file has no rules in it; write a rule or drop the file")
    rules = load_rules(specs)
    if not rules:
        raise UsageError(f"{option} {' '.join(specs or ['all'])}: no rules were loaded; name a family or a .rules file")
    return rules
