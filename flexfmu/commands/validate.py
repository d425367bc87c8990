"""``flexfmu validate OUT.fmu``: every problem found; exit status 1 if any.

Which checks apply to which FMU: ``flexfmu.targets.validate``.
"""

from __future__ import annotations

from flexfmu.errors import InputError


def add_parser(sub) -> None:
    parser = sub.add_parser(
        "validate", help="validate an FMU (FMPy's checks and flexfmu's own)",
        description="Check an FMU (FMI 2.0 or 3.0) and print every problem; exit status 1 if there is one. "
                    "FMPy's checks (schema, variables, model structure), then flexfmu's own: clean archive paths, "
                    "the source files the model description lists, and every binary: built for its platform and "
                    "x86-64, exporting the FMI functions of the FMU's interfaces and nothing else, with the GUID "
                    "compiled in; and that the shipped sources build with the shipped CMakeLists.txt. A "
                    "Python-backed FMU (flexfmu export --target pythonfmu) carries PythonFMU's generic C++ "
                    "binaries, which read the GUID when they run and export symbols of their own: for it those "
                    "two checks are skipped, and the command says so.")
    parser.add_argument("fmu", help="the .fmu to check")
    parser.add_argument("--no-build", action="store_true", help="do not rebuild the shipped sources")
    parser.set_defaults(run=run)


def run(args) -> int:
    from pathlib import Path

    from flexfmu.targets.validate import validate_fmu

    if not Path(args.fmu).is_file():
        raise InputError(f"{args.fmu!r} is not a file")
    result = validate_fmu(args.fmu, build_sources=not args.no_build)
    for note in result.skipped:
        print(f"skipped: {note}")
    for problem in result.problems:
        print(f"problem: {problem}")
    print(f"{args.fmu}: {len(result.problems)} problem(s)")
    return 1 if result.problems else 0
