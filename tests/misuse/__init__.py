"""Misuse, as a new user commits it (issue 46): every case ends in one line from an ``EqsatError`` (or the right
result), never a traceback, and the CLI exits 2 for a usage error and 1 for a failure."""
