"""Rule files on disk: the shipped families in ``rules/`` and the user's own files.

>>> sorted(rule_files())[:2]
['algebra', 'fusion']
>>> len(load_rules(["algebra"])) > 10
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rewrite.ir.errors import RuleError, UsageError
from rewrite.rulelang.syntax import Rule, load_rule_file

RULES_DIR = Path(__file__).resolve().parent.parent.parent / "rules"


def rule_files() -> dict[str, Path]:
    """Shipped rule families: name → file."""
    return {p.stem: p for p in sorted(RULES_DIR.glob("*.rules"))}


def resolve_rule_specs(spec: Sequence[str | Path] | None) -> list[Path]:
    """Family names (``algebra``), ``all`` (every shipped family) and/or file paths → files; ``None`` is ``all``.

    Raises ``UsageError`` naming a spec that is neither a family nor an existing file.
    """
    families = rule_files()
    paths: list[Path] = []
    for item in spec if spec is not None else list(families):
        s = str(item)
        if s == "all":
            paths.extend(p for p in families.values() if p not in paths)
        elif s in families:
            paths.append(families[s])
        elif Path(s).is_file():
            paths.append(Path(s))
        else:
            raise UsageError(
                f"no rule family or file '{s}'",
                hint=f"families: {', '.join(families)}, or all; or give the path of a .rules file",
            )
    return paths


def load_rules(spec: Sequence[str | Path] | None = None) -> list[Rule]:
    """Rules from family names and/or file paths; ``None`` loads every shipped family.

    A rule name defined twice (in two files) is a ``RuleError`` at its second definition.
    """
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    for p in resolve_rule_specs(spec):
        for r in load_rule_file(p):
            if r.name in seen:
                raise RuleError(r.loc, f"rule '{r.name}' is also defined at {seen[r.name].loc}")
            seen[r.name] = r
            rules.append(r)
    return rules
