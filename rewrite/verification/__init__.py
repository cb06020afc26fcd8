"""Checking results: numeric comparison of graphs, the rule checker (``rulecheck``) and the prover."""
