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
import os
import re
from pathlib import Path

from rewrite.egraph.limits import Limits


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
    """A file to write: its folder must exist and be writable, and it must not be a folder."""
    p = Path(text)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is a folder, not a file")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"folder '{parent}' is not writable")
    return text


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
