"""The ``eqsat`` command: a table of sub-commands, one module each, and the one place errors become exit codes.

    eqsat optimize bert --json out.json
    eqsat rules check
    eqsat --help                 # prints at once: no torch or egglog is imported for it

A sub-command's module (``rewrite/cli/<command>.py``) is imported only when it
runs: it builds its own parser and does the work.  Every error a user can
cause is an ``EqsatError``; it is printed as one line (``eqsat: error: ...``
and, where there is one, ``; `` and a hint) and the exit code is the error's: 2
for usage errors, 1 for failures.  An argument error is one line too (``Parser``),
and ``eqsat`` alone prints the usage with the command list (exit 2).  Any other exception is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NamedTuple, NoReturn

from rewrite.ir.errors import EqsatError
from rewrite.progress import set_quiet


class Command(NamedTuple):
    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "optimize": Command("rewrite.cli.optimize", "optimize a model, verify it, print a before/after table"),
    "rules": Command("rewrite.cli.rules", "list, check and prove rules"),
    "costs": Command("rewrite.cli.costs", "measure operator costs on this machine and inspect the cache"),
    "bench": Command("rewrite.cli.bench", "benchmarks: the Tensat table, fidelity, kernels, e2e"),
    "tune": Command(
        "rewrite.cli.tune", "search each kernel's schedule, measured, and keep the fastest (--ray: on a cluster)"
    ),
    "report": Command("rewrite.cli.htmlpage", "optimize a model and write a before/after HTML report"),
    "diff": Command("rewrite.cli.diff", "structural diff of two graphs (models, .onnx files, saved graphs)"),
    "config": Command("rewrite.cli.config", "show every EQSAT_* setting with its current value"),
}


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (no usage block) naming ``--help``; exit code 2.
    Every sub-command's parser is one (``add_subparsers`` makes its sub-parsers of the same class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    width = max(len(c) for c in COMMANDS)
    listing = "\n".join(f"  {name:<{width}}  {c.help}" for name, c in COMMANDS.items())
    p = Parser(
        prog="eqsat",
        description="Equality-saturation superoptimizer for deep-learning graphs.",
        epilog=f"commands:\n{listing}\n\n'eqsat COMMAND --help' describes one command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars (they show only on a terminal)")
    p.add_argument("command", choices=list(COMMANDS), metavar="COMMAND", help="one of: " + ", ".join(COMMANDS))
    p.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


def report_error(e: EqsatError) -> int:
    """Print an ``EqsatError`` as one line (its hint, when it has one, after a ``;``) and return its exit code."""
    msg = " ".join(str(e).split()) or type(e).__name__
    hint = " ".join(e.hint.split())
    print(f"eqsat: error: {msg}{f'; {hint}' if hint else ''}", file=sys.stderr)
    return e.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``eqsat`` command; returns the exit code (argparse's own exits become return values)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not [a for a in argv if a not in ("-q", "--quiet")]:  # no command: say what the commands are
        print(_parser().format_help(), end="", file=sys.stderr)
        return 2
    try:
        ns = _parser().parse_args(argv)
        rest = [a for a in ns.args if a not in ("-q", "--quiet")]  # also accepted after the command
        set_quiet(ns.quiet or len(rest) < len(ns.args))
        ns.args = rest
        # deferred: a command's module imports torch and egglog, which `eqsat --help` must not wait for
        module = importlib.import_module(COMMANDS[ns.command].module)
        return int(module.main(ns.args, prog=f"eqsat {ns.command}"))
    except SystemExit as e:  # argparse: --help (0) and usage errors (2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except EqsatError as e:
        return report_error(e)
    except KeyboardInterrupt:
        print("eqsat: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
