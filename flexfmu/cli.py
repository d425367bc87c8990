"""The ``flexfmu`` command line: each command module adds its own parser.

One error path for all of them: a problem with the user's input (a
:class:`flexfmu.errors.FlexfmuError`, a file that cannot be read or
written, a wrong option) is printed as ``error: ...`` and exits with status
2; a check that ran and failed exits with 1. ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import sys

from flexfmu.commands import (
    crosscheck,
    demo,
    export,
    identify,
    info,
    plan,
    reproduce,
    simulate,
    sweep,
    tune,
    validate,
)
from flexfmu.errors import FlexfmuError

COMMANDS = (info, simulate, export, validate, crosscheck, tune, plan, identify, demo, sweep, reproduce)
DESCRIPTION = ("Flexible robot arms as differentiable dynamics: export them as FMUs, check the FMUs against a "
               "reference, tune gains and plan moves on them. Each command's --help says more; docs/cli.md lists "
               "them all.")


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (and exit status 2)."""

    def error(self, message: str):
        """Print the usage error ``message`` on one line and exit with status 2."""
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser, with one sub-command per module of :data:`COMMANDS`."""
    parser = Parser(prog="flexfmu", description=DESCRIPTION)
    parser.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (``sys.argv[1:]`` when None); returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, or a usage error already printed
        return stop.code if isinstance(stop.code, int) else 0
    try:
        return args.run(args) or 0
    except (FlexfmuError, OSError) as error:
        if args.debug:
            raise
        print(f"error: {describe(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def describe(error: Exception) -> str:
    """The user-facing message of the input error ``error`` (an OSError names its file)."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
