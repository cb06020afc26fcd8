"""The ``eqsat`` command's options, run in-process on tiny models."""
