"""Rule files: parsing into Rule objects and their consumers (egglog, checking)."""

from rewrite.rulelang.syntax import Rule, RuleError, load_rule_file, parse_rules

__all__ = ["Rule", "RuleError", "load_rule_file", "parse_rules"]
