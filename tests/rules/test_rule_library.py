"""The shipped rule library: every family parses, the TASO/Tensat port is complete.

rules/README.md has a table with one row per Tensat rule (converted.txt lines
1-120, converted_multi.txt line pairs 1-2 ... 25-26): the eqsat rule that
carries it, or why it is not shipped.  These tests parse that table and hold
it against the rule files, so a renamed or deleted rule cannot silently drop a
Tensat rule.  Parsing only: fast.
"""

import re
from pathlib import Path

import pytest

from rewrite.rulelang.loader import RULES_DIR, load_rules, rule_files
from rewrite.rulelang.syntax import load_rule_file

TASO_FAMILIES = ("algebra", "layout", "multi")
N_SINGLE, N_MULTI_PAIRS = 120, 13
# converted.txt: 87 new rules, 5 existing; converted_multi.txt: 3 new, 1 existing
MIN_DIRECTIONS = 133  # named directions in the three families, counting :reverse
MIN_TASO_DIRECTIONS = 90  # directions of the taso-* rules alone (taso-mul-distrib-1..5 are opt-in)
STATUSES = {"shipped", "shipped (existing)", "duplicate", "trivial", "not shipped"}
ROW = re.compile(r"^\|\s*(converted(?:_multi)?\.txt):(\d+)(?:-(\d+))?\s*\|(.*)\|(.*)\|(.*)\|\s*$")
SOURCE = re.compile(r"#\s*tensat\s+(converted(?:_multi)?\.txt):(\d+)(?:-(\d+))?")


def _directions(families=TASO_FAMILIES) -> set[str]:
    return {d.name for r in load_rules(list(families)) for d in r.directions()}


def _table() -> dict[tuple[str, int], tuple[str, str, str]]:
    rows: dict[tuple[str, int], tuple[str, str, str]] = {}
    for line in (RULES_DIR / "README.md").read_text().splitlines():
        m = ROW.match(line)
        if not m:
            continue
        file, first, last, target, status, note = m.groups()
        key = (file, int(first))
        assert key not in rows, f"{file}:{first} appears twice in the README table"
        if file == "converted_multi.txt":
            assert last is not None and int(last) == int(first) + 1, f"multi rows are line pairs: {line}"
        rows[key] = (target.strip(), status.strip(), note.strip())
    return rows


def _backticked(text: str) -> str | None:
    m = re.search(r"`([^`]+)`", text)
    return m.group(1) if m else None


@pytest.mark.parametrize("family", sorted(rule_files()))
def test_every_family_file_parses(family):
    rules = load_rule_file(rule_files()[family])
    assert rules, f"{family}.rules has no rules"


def test_shipped_rule_counts():
    names = _directions()
    assert len(names) >= MIN_DIRECTIONS
    assert len([n for n in names if n.startswith("taso-")]) >= MIN_TASO_DIRECTIONS
    # names unique across every shipped family (load_rules raises otherwise)
    load_rules()


def test_every_tensat_rule_is_accounted_for():
    rows = _table()
    single = sorted(n for f, n in rows if f == "converted.txt")
    multi = sorted(n for f, n in rows if f == "converted_multi.txt")
    assert single == list(range(1, N_SINGLE + 1))
    assert multi == list(range(1, 2 * N_MULTI_PAIRS, 2))
    names = _directions()
    for (file, line), (target, status, note) in rows.items():
        where = f"{file}:{line}"
        assert status in STATUSES, f"{where}: unknown status {status!r}"
        if status.startswith("shipped"):
            assert _backticked(target) in names, f"{where}: {target} is not a shipped rule"
        elif status == "duplicate":
            assert target.startswith("duplicate of") and _backticked(target) in names, f"{where}: {target}"
            assert note, f"{where}: a duplicate says why"
        else:
            assert note, f"{where}: a rule that is not shipped needs a reason"


def test_source_comments_match_the_table():
    """``# tensat converted.txt:N`` above a rule and the README row N name the same rule."""
    rows = _table()
    seen = 0
    for family in TASO_FAMILIES:
        pending = None
        for raw in rule_files()[family].read_text().splitlines():
            m = SOURCE.search(raw)
            if m:
                pending = (m.group(1), int(m.group(2)))
                continue
            head = re.match(r"^([A-Za-z][\w.\-]*):", raw)
            if head and pending:
                target, status, _ = rows[pending]
                assert status == "shipped" and _backticked(target) == head.group(1), (
                    f"{family}.rules: {head.group(1)} says {pending[0]}:{pending[1]}, the README says {target}"
                )
                seen += 1
                pending = None
    assert seen == sum(1 for _, status, _ in rows.values() if status == "shipped")


def test_line_counts_match_the_reference_files_when_present():
    ref = Path(RULES_DIR).resolve().parent.parent / "shared" / "reference" / "tensat"
    if not ref.is_dir():
        pytest.skip("Tensat reference files not present next to the repository")
    assert len((ref / "converted.txt").read_text().splitlines()) == N_SINGLE
    assert len((ref / "converted_multi.txt").read_text().splitlines()) == 2 * N_MULTI_PAIRS


@pytest.mark.slow
@pytest.mark.parametrize("k", range(1, 6))
def test_opt_in_distribution_orders_are_derived_by_the_shipped_rules(k):
    """rules/optional/taso-mul-distrib-orders.rules is out of the default set because the default set derives
    it: each operand order of TASO's mul-over-add expansion, proven equal with the shipped rules."""
    from rewrite.egraph.limits import Limits
    from rewrite.verification.prove import prove_equal

    path = RULES_DIR / "optional" / "taso-mul-distrib-orders.rules"
    line = next(x for x in path.read_text().splitlines() if x.startswith(f"taso-mul-distrib-{k}:"))
    lhs, rhs = (side.strip() for side in line.split(":", 1)[1].split(" if ")[0].split("=>"))
    r = prove_equal(lhs, rhs, {v: (3, 4) for v in "abc"}, limits=Limits(iterations=4, nodes=20_000, seconds=20))
    assert r.equal, r
