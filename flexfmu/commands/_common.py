"""What the subcommands share: the arm and output arguments, parsing of
values given on the command line, and the usage error they raise.

Every user-facing problem is a :class:`flexfmu.errors.FlexfmuError`; the
``flexfmu`` entry point prints its message on one line (a spec error lists
its problems under it) and exits with status 2, so no subcommand prints
errors or exits by itself. A check that runs and fails returns 1.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

from flexfmu.errors import FlexfmuError
from flexfmu.targets.export import can_write_in


class UsageError(FlexfmuError):
    """An option value that cannot be used; the message names the option."""


def add_arm(parser, optional: bool = False) -> None:
    """The positional arm argument: a TOML file or an example arm's name."""
    parser.add_argument("arm", nargs="?" if optional else None,
                        help="arm specification (TOML file) or the name of an example arm "
                             "(`flexfmu info` lists them)")


def add_out(parser, default: str) -> None:
    """The --out folder argument, checked when parsed (see :func:`output_folder`)."""
    parser.add_argument("--out", default=default, type=_out_folder, help="output folder (default: %(default)s)")


def _out_folder(text: str) -> Path:
    try:
        return output_folder("--out", text)
    except UsageError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--out ")) from None


def output_folder(option: str, path: str) -> Path:
    """The folder ``path`` given with ``option``, checked before any work: it
    must be a folder or creatable as one (no file in its way)."""
    folder = Path(path)
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            if not candidate.is_dir():
                raise UsageError(f"{option} {path!r}: {str(candidate)!r} is a file, not a folder")
            if not can_write_in(candidate):
                raise UsageError(f"{option} {path!r}: {str(candidate)!r} is not writable")
            return folder
    return folder


def add_campaign(parser) -> None:
    """--workers and --scheduler: where the tasks of a campaign run (see flexfmu.harness.campaigns.campaign)."""
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes of the local Dask cluster (default: one per core; 0: run serially "
                             "in this process)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run on the Dask cluster whose scheduler is at ADDRESS (e.g. tcp://10.0.0.5:8786)")


def campaign_settings(args):
    """The CampaignSettings of ``args`` (parsed with :func:`add_campaign`)."""
    from flexfmu.harness.campaigns.campaign import CampaignSettings

    if args.workers is not None and args.workers < 0:
        raise UsageError(f"--workers must be >= 0, got {args.workers}")
    return CampaignSettings(args.workers, args.scheduler)


def positive(option: str, value: float) -> float:
    """``value`` if it is a finite number > 0, else a UsageError naming ``option``."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise UsageError(f"{option} must be a number > 0, got {value!r}")
    return float(value)


def parse_angle(item: str, option: str) -> float:
    """'1.2', '90deg', 'pi/2', '-pi', '2*pi/3' -> radians."""
    match = re.fullmatch(r"([-+]?\d*\.?\d*)\*?pi(?:/(\d+\.?\d*))?", item)
    try:
        if match:
            factor = match.group(1)
            factor = -1.0 if factor == "-" else float(factor) if factor not in ("", "+") else 1.0
            return factor * math.pi / float(match.group(2) or 1.0)
        if item.endswith("deg"):
            return math.radians(float(item[:-3]))
        return float(item)
    except ValueError:
        raise UsageError(f"{option}: {item!r} is not an angle (use 1.2, 90deg or pi/2)") from None


def parse_angles(text: str, option: str) -> list[float]:
    """'0,pi/2,-45deg,1.2' -> radians; the message names the bad entry."""
    return [parse_angle(part.strip(), option) for part in text.split(",")]


def parse_assignments(text: str, names: list[str], option: str) -> dict[str, float]:
    """'name=value,...' (a value may end in 'deg'); the message names the bad part."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise UsageError(f"{option} {item!r}: expected NAME=VALUE with NAME one of {', '.join(names)}")
        values[name] = parse_angle(value.strip(), f"{option} {name}")
    return values


class DeprecatedFlag(argparse.Action):
    """An old option name kept working: stores into the new one's dest and
    says once, on stderr, which name to use."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"note: {option_string} is deprecated here; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)
