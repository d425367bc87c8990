"""Write the parts of the docs that flexfmu's own tables and parsers know better than a person typing them.

- ``docs/cli.md``: every command's ``--help``, from the argument parsers;
- the lists in ``README.md`` between ``<!-- generated: NAME -->`` and
  ``<!-- end generated -->``: the arm kinds, the example arms, the
  scenarios, the scenario references and motion profiles, the
  reproductions, each from its registry.

    python scripts/docs.py           # rewrite them
    python scripts/docs.py --check   # exit 1, naming each stale part, if a rewrite would change them

``tests/test_docs.py`` runs the check, so the committed docs cannot drift
from the code.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CLI = ROOT / "docs" / "cli.md"
HELP_WIDTH = "100"  # columns of the help texts, whatever terminal runs the script
BLOCK = re.compile(r"(<!-- generated: (?P<name>\w+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


def cli_page() -> str:
    """docs/cli.md: the top-level help and each command's, in the order ``flexfmu --help`` lists them."""
    from flexfmu.cli import build_parser

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        return _cli_page(build_parser())
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def _cli_page(parser) -> str:
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    parts = ["# Command line reference", "",
             "<!-- written by scripts/docs.py from the argument parsers; do not edit by hand -->", "",
             "Every command, as `--help` prints it. Errors in what you give (a missing file, a bad field, a wrong",
             "option) are one line naming the file, field or option, with exit status 2; a check that runs and",
             "fails (validate, crosscheck, tune, plan, reproduce) exits with 1; `flexfmu --debug ...` shows the",
             "traceback. Examples of each command: README.md.", "",
             "```text", parser.format_help().rstrip(), "```"]
    for name, sub in commands.choices.items():
        parts += ["", f"## flexfmu {name}", "", "```text", sub.format_help().rstrip(), "```"]
    return "\n".join(parts) + "\n"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def kinds_table() -> str:
    """The arm kinds: what each is, its planner and the references its scenarios may use."""
    from flexfmu.kinds import KINDS

    return _table(["kind", "what", "`flexfmu plan` runs", "scenario references"],
                  [[f"`{kind.name}`", kind.summary, f"`{kind.planner.name}`",
                    ", ".join(f"`{row.name}`" for row in kind.references)] for kind in KINDS.values()])


def arms_table() -> str:
    """The example arms that ship with flexfmu, with their kinds and descriptions."""
    from flexfmu.data import arm_names
    from flexfmu.kinds import load_arm

    rows = []
    for name in arm_names():
        arm = load_arm(name)
        rows.append([f"`{name}`", f"`{arm.kind}`", arm.description])
    return _table(["arm", "kind", "what"], rows)


def scenarios_table() -> str:
    """The shipped scenarios: arm, controller, what it follows, sample step, length."""
    from flexfmu.control.scenario import load_scenario
    from flexfmu.data import scenario_names

    rows = []
    for name in scenario_names():
        scenario = load_scenario(name)
        follows = scenario.controller.get("reference", {}).get("kind") or scenario.motion.get("kind")
        rows.append([f"`{name}`", f"`{scenario.arm}`", f"`{scenario.controller['kind']}`",
                     f"`{follows}`" if follows else "-", f"{scenario.step * 1e3:g} ms",
                     f"{scenario.duration:g} s", scenario.description])
    return _table(["scenario", "arm", "controller", "follows", "sample step", "length", "what"], rows)


def references_table() -> str:
    """The scenario controllers (``[controller]``), references (``[controller.reference]``) and motion
    profiles (``[motion]``), their keys."""
    from flexfmu.control.controllers import CONTROLLERS
    from flexfmu.control.motions import MOTIONS
    from flexfmu.control.reference_kinds import REFERENCES

    def keys(row) -> str:
        return "; ".join(f"`{key.name}`" + (f" ({key.unit})" if key.unit not in ("", "1") else "")
                         + ("" if key.required else " (optional)" if key.default is None else f" = {key.default!r}")
                         for key in row.keys)

    rows = [[f"`[{table}]` `{row.name}`", row.summary, keys(row)]
            for table, registry in (("controller", CONTROLLERS), ("controller.reference", REFERENCES),
                                    ("motion", MOTIONS)) for row in registry.values()]
    return _table(["kind", "what", "keys (= default)"], rows)


def reproductions_table() -> str:
    """The registry of reproductions ``flexfmu reproduce`` runs."""
    from flexfmu.harness.reproductions import REPRODUCTIONS

    return _table(["reproduction", "what"], [[f"`{entry.name}`", entry.title] for entry in REPRODUCTIONS])


BLOCKS = {"kinds": kinds_table, "arms": arms_table, "scenarios": scenarios_table,
          "references": references_table, "reproductions": reproductions_table}


def readme(text: str) -> str:
    """``text`` (the README) with every generated block written anew from :data:`BLOCKS`."""
    def body(match):
        name = match.group("name")
        if name not in BLOCKS:
            raise SystemExit(f"README.md: no generator for block {name!r} (known: {', '.join(BLOCKS)})")
        return match.group(1) + BLOCKS[name]() + match.group(4)

    return BLOCK.sub(body, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is stale")
    args = parser.parse_args(argv)
    wanted = {CLI: cli_page(), README: readme(README.read_text())}
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run python scripts/docs.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
