"""The rule checker: draw random well-formed instances of a rule and compare both sides numerically."""
