"""``eqsat rules check`` and ``eqsat rules prove``: the rule checker and the prover on the command line.

    eqsat rules check                       # every shipped rule
    eqsat rules check my.rules --json
    eqsat rules prove "(matmul ?a (matmul ?b ?c))" "(matmul (matmul ?a ?b) ?c)" \\
        --shape a=64x1024 --shape b=1024x512 --shape c=512,8

Exit codes: ``check`` 0 when every rule passes, 1 when one fails, 2 on errors
(unreadable or malformed rule files); ``prove`` 0 when the sides are proven
equal, 1 when not proven within the limits, 2 on errors (parse errors as
``<lhs>:line:col`` / ``<rhs>:line:col``, unknown variables, shape mismatch).

``add_rules_commands(rsub)`` registers both under the ``rules`` sub-parser.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from rewrite.egraph.saturate import Limits, SaturationError
from rewrite.graph import GraphError
from rewrite.ops import ShapeError
from rewrite.rulelang.syntax import RuleError

_ERRORS = (RuleError, GraphError, ShapeError, SaturationError, FileNotFoundError, ValueError)


def _error(msg: str, as_json: bool) -> int:
    print(f"eqsat: error: {msg}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": msg}))
    return 2


# ------------------------------------------------------------------ check


def cmd_rules_check(args: argparse.Namespace) -> int:
    from rewrite.api import load_rules
    from rewrite.rulelang.check import CheckResult, check_rule

    if args.draws < 1 or args.seeds < 1:
        return _error("--draws and --seeds must be at least 1", args.json)
    try:
        rules = load_rules(args.files or None)
    except _ERRORS as e:
        return _error(str(e), args.json)
    if not rules:
        return _error("no rules to check", args.json)
    out = sys.stderr if args.json else sys.stdout
    width = len(str(len(rules)))
    results: list[CheckResult] = []
    for i, rule in enumerate(rules, start=1):
        res = check_rule(rule, draws=args.draws, seeds=tuple(range(args.seeds)))
        results.append(res)
        print(f"[{i:>{width}}/{len(rules)}] {res}", file=out, flush=True)
    failed = [r for r in results if not r.ok]
    summary = f"{len(results)} rules: {len(results) - len(failed)} ok, {len(failed)} failed"
    if failed:
        summary += " (" + ", ".join(r.rule for r in failed) + ")"
    print(summary, file=out)
    if args.json:
        print(
            json.dumps(
                {"ok": not failed, "failed": [r.rule for r in failed], "rules": [r.to_dict() for r in results]},
                indent=1,
            )
        )
    return 1 if failed else 0


# ------------------------------------------------------------------ prove

_DIMS = re.compile(r"^\s*\d+(\s*[x,]\s*\d+)*\s*$")


def parse_shape(spec: str) -> tuple[str, tuple[int, ...]]:
    """``NAME=DIMS`` with DIMS like ``64x1024`` or ``64,1024`` (a scalar-free IR: at least one dim)."""
    if "=" not in spec:
        raise ValueError(f"--shape '{spec}': expected NAME=DIMS, e.g. a=64x1024")
    name, dims = spec.split("=", 1)
    name = name.strip().lstrip("?")
    if not name:
        raise ValueError(f"--shape '{spec}': missing variable name")
    if not _DIMS.match(dims):
        raise ValueError(f"--shape '{spec}': DIMS must be positive integers separated by 'x' or ',', e.g. 64x1024")
    shape = tuple(int(d) for d in re.split(r"[x,]", dims.replace(" ", "")))
    if any(d <= 0 for d in shape):
        raise ValueError(f"--shape '{spec}': dimensions must be positive")
    return name, shape


def cmd_rules_prove(args: argparse.Namespace) -> int:
    from rewrite.prove import ProveError, prove_equal

    try:
        shapes: dict[str, tuple[int, ...]] = {}
        for spec in args.shape or []:
            name, shape = parse_shape(spec)
            if name in shapes:
                raise ValueError(f"--shape: '{name}' is given twice")
            shapes[name] = shape
        limits = Limits(iterations=args.iters, nodes=args.nodes, seconds=args.seconds)
        res = prove_equal(args.lhs, args.rhs, shapes, rules=args.rules, limits=limits, weights=set(args.weight or []))
    except (ProveError, *_ERRORS) as e:
        return _error(str(e), args.json)
    if args.json:
        d: dict[str, Any] = res.to_dict()
        d["seconds"] = round(d["seconds"], 4)
        print(json.dumps(d, indent=1))
    elif res.equal:
        print(f"equal: proven after {res.iterations} iteration(s) ({res.seconds:.2f}s)")
    else:
        print(
            f"not proven: {res.stop_reason} after {res.iterations} iteration(s), "
            f"{res.enodes} e-nodes ({res.seconds:.2f}s)"
        )
    return 0 if res.equal else 1


# ------------------------------------------------------------------ registration


def add_rules_commands(rules_subparsers: Any) -> None:
    """Add ``check`` and ``prove`` to the ``eqsat rules`` sub-parsers."""
    c = rules_subparsers.add_parser(
        "check",
        help="check rules numerically on random shapes and tensors",
        description="Instantiate each rule on random shapes, attributes and float64 tensors and compare both "
        "sides. Exits 1 if a rule fails.",
    )
    c.add_argument("files", nargs="*", metavar="FILES", help="rule files or family names (default: every shipped rule)")
    c.add_argument("--draws", type=int, default=3, help="random shape draws per direction compared on every seed")
    c.add_argument("--seeds", type=int, default=2, help="random input tensors per draw")
    c.add_argument("--json", action="store_true", help="print the results as JSON (progress goes to stderr)")
    c.set_defaults(fn=cmd_rules_check)

    p = rules_subparsers.add_parser(
        "prove",
        help="prove two expressions equal by equality saturation",
        description="Saturate LHS and RHS (rule syntax, e.g. '(matmul ?a (matmul ?b ?c))') together until they "
        "are in one e-class. Exits 0 if proven, 1 if not within the limits, 2 on errors.",
    )
    p.add_argument("lhs", metavar="LHS")
    p.add_argument("rhs", metavar="RHS")
    p.add_argument(
        "--shape",
        action="append",
        metavar="NAME=DIMS",
        help="shape of variable ?NAME, e.g. a=64x1024 or a=64,1024 (repeatable)",
    )
    p.add_argument(
        "--weight", action="append", metavar="NAME", help="treat ?NAME as a weight, not an input (repeatable)"
    )
    p.add_argument("--rules", action="append", help="rule family name or file (repeatable; default: all)")
    p.add_argument("--iters", type=int, default=Limits.iterations, help="iteration limit")
    p.add_argument("--nodes", type=int, default=Limits.nodes, help="e-node limit")
    p.add_argument("--seconds", type=float, default=Limits.seconds, help="saturation time limit")
    p.add_argument("--json", action="store_true", help="print equal, iterations, stop_reason, seconds as JSON")
    p.set_defaults(fn=cmd_rules_prove)
