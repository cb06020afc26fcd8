"""``eqsat config``: every ``EQSAT_*`` setting, its current value, default and meaning.

eqsat config [--json]
"""

from __future__ import annotations

import json

from rewrite import config
from rewrite.cli.main import Parser


def main(argv: list[str], prog: str = "eqsat config") -> int:
    p = Parser(prog=prog, description="Show every EQSAT_* setting with its current value.")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = [
        {"name": s.name, "value": s.describe(), "set": s.raw is not None, "default": s.default, "meaning": s.meaning}
        for s in config.SETTINGS.values()
    ]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(len(name) for name in config.SETTINGS)
    for r in rows:
        where = "set" if r["set"] else "default"
        print(f"{r['name']:<{width}}  {r['value']}  ({where})\n{'':<{width}}  {r['meaning']}")
    return 0
