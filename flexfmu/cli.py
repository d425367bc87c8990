"""The ``flexfmu`` command line: each command module adds its own parser."""

from __future__ import annotations

import argparse
import sys

from flexfmu.commands import crosscheck, demo, export, info, plan, simulate, tune, validate
from flexfmu.spec.errors import SpecError

COMMANDS = (info, simulate, export, validate, crosscheck, tune, plan, demo)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flexfmu", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    args = parser.parse_args(argv)
    try:
        return args.run(args) or 0
    except SpecError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
