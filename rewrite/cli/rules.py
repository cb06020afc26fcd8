"""``eqsat rules list|check|prove|synthesize|effect``: the rule library, the rule checker, the prover and rule
synthesis (``rewrite/cli/synth.py``) on the command line.

    eqsat rules list [--json]               # every rule: name, family, file:line
    eqsat rules check                       # every shipped rule
    eqsat rules check my.rules --json
    eqsat rules prove "(matmul ?a (matmul ?b ?c))" "(matmul (matmul ?a ?b) ?c)" \\
        --shape a=64x1024 --shape b=1024x512 --shape c=512,8

Exit codes: ``check`` 0 when every rule passes, 1 when one fails, 2 on errors
(unreadable or malformed rule files, or ones with no rules); ``prove`` 0 when the sides are proven
equal, 1 when not proven within the limits, 2 on errors (parse errors as
``<lhs>:line:col`` / ``<rhs>:line:col``, unknown variables, shape mismatch).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rewrite.cli import synth
from rewrite.cli.args import add_limits, add_rules, add_shapes, limits_of, load_rule_args, positive_int, shapes_of
from rewrite.cli.main import Parser, report_error
from rewrite.ir.errors import EqsatError
from rewrite.verification.prove import prove_equal
from rewrite.verification.rulecheck.check import CheckResult, check_rule


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


# ------------------------------------------------------------------ list


def cmd_list(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    for r in load_rule_args(args.rules):
        for d in r.directions():
            path = _relative(d.loc.path)
            rows.append(
                {"name": d.name, "family": d.family, "file": path, "line": d.loc.line, "where": f"{path}:{d.loc.line}"}
            )
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        w = max((len(row["name"]) for row in rows), default=0)
        for row in rows:
            print(f"{row['name']:<{w}}  {row['family']:<10}  {row['where']}")
        print(f"{len(rows)} rules")
    return 0


# ------------------------------------------------------------------ check


def cmd_check(args: argparse.Namespace) -> int:
    rules = load_rule_args(args.files or None, option="rules check")
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
        report = {"ok": not failed, "failed": [r.rule for r in failed], "rules": [r.to_dict() for r in results]}
        print(json.dumps(report, indent=1))
    return 1 if failed else 0


# ------------------------------------------------------------------ prove


def cmd_prove(args: argparse.Namespace) -> int:
    shapes = shapes_of(args)
    rules = load_rule_args(args.rules) if args.rules else None  # an empty rule file is refused, not used
    res = prove_equal(args.lhs, args.rhs, shapes, rules=rules, limits=limits_of(args), weights=set(args.weight or []))
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


# ------------------------------------------------------------------ parser


def parser(prog: str) -> argparse.ArgumentParser:
    p = Parser(prog=prog, description="List, check and prove rules.")
    sub = p.add_subparsers(dest="rules_command", required=True, metavar="{list,check,prove,synthesize,effect}")
    ls = sub.add_parser("list", help="list every rule with its family and file:line")
    add_rules(ls)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(fn=cmd_list)

    c = sub.add_parser(
        "check",
        help="check rules numerically on random shapes and tensors",
        description="Instantiate each rule on random shapes, attributes and float64 tensors and compare both "
        "sides. Exits 1 if a rule fails.",
    )
    c.add_argument("files", nargs="*", metavar="FILES", help="rule files or family names (default: every shipped rule)")
    c.add_argument(
        "--draws", type=positive_int, default=3, help="random shape draws per direction compared on every seed"
    )
    c.add_argument("--seeds", type=positive_int, default=2, help="random input tensors per draw")
    c.add_argument("--json", action="store_true", help="print the results as JSON (progress goes to stderr)")
    c.set_defaults(fn=cmd_check)

    pr = sub.add_parser(
        "prove",
        help="prove two expressions equal by equality saturation",
        description="Saturate LHS and RHS (rule syntax, e.g. '(matmul ?a (matmul ?b ?c))') together until they "
        "are in one e-class. Exits 0 if proven, 1 if not within the limits, 2 on errors.",
    )
    pr.add_argument("lhs", metavar="LHS")
    pr.add_argument("rhs", metavar="RHS")
    add_shapes(pr, "shape of variable ?NAME, e.g. a=64x1024 or a=64,1024 (repeatable)")
    pr.add_argument(
        "--weight", action="append", metavar="NAME", help="treat ?NAME as a weight, not an input (repeatable)"
    )
    add_rules(pr)
    add_limits(pr)
    pr.add_argument("--json", action="store_true", help="print equal, iterations, stop_reason, seconds as JSON")
    pr.set_defaults(fn=cmd_prove)
    synth.add_parsers(sub)
    return p


def main(argv: list[str], prog: str = "eqsat rules") -> int:
    args = parser(prog).parse_args(argv)
    args.argv = list(argv)
    try:
        return int(args.fn(args))
    except EqsatError as e:  # exit 1 means "a rule failed" / "not proven": every error here is 2
        if getattr(args, "json", False):  # a --json caller reads stdout: say what failed there too
            print(json.dumps({"error": str(e)}))
        report_error(e)
        return 2
