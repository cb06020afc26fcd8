"""The ``eqsat`` command line: ``main`` dispatches to one module per sub-command."""

from rewrite.cli.main import main

__all__ = ["main"]
