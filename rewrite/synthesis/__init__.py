"""Rule synthesis: enumerate graphs over a set of ops, group equal ones, keep checked, non-redundant rules.

    >>> from rewrite.synthesis import synthesize
    >>> res = synthesize(["add", "relu"], max_ops=2, worlds=["ew"], workers=1)  # doctest: +SKIP
    >>> print(res.text())                                                      # doctest: +SKIP

Stages in :mod:`rewrite.synthesis.synthesize`; what is enumerated in :mod:`rewrite.synthesis.space`.
"""

from rewrite.synthesis.space import WORLDS, World, parse_world
from rewrite.synthesis.synthesize import SynthesisResult, synthesize

__all__ = ["WORLDS", "SynthesisResult", "World", "parse_world", "synthesize"]
