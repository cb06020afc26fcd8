"""Layer 1 of eqsat: the op registry (``ops``), the graph IR (``graph``), the builder and the errors.

Import the modules themselves (``from rewrite.ir.graph import Graph``); this package
file imports nothing, so importing the errors alone stays cheap.
"""
