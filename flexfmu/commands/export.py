"""``flexfmu export ARM.toml -o OUT.fmu``: a native C FMU (FMI 2.0, CS and ME).

``--backend pythonfmu`` writes a Python-backed co-simulation FMU instead
(PythonFMU, CVODES in Python): a desktop cross-check of the native one with
the same variable names, which needs Python with flexfmu where it is imported.
"""

from __future__ import annotations

import sys

# options of the native backend: (attribute, flag, default)
NATIVE_ONLY = (("fmi_version", "--fmi-version", "2"), ("interface", "--interface", "both"),
               ("integrator", "--integrator", "rk4"), ("step", "--step", None))


def add_parser(sub) -> None:
    parser = sub.add_parser("export", help="export an arm as an FMU (native C binaries, or Python-backed)")
    parser.add_argument("arm", help="arm specification (TOML)")
    parser.add_argument("-o", "--output", required=True, help="the .fmu to write")
    parser.add_argument("--backend", choices=("native", "pythonfmu"), default="native",
                        help="native: compiled C, CS and ME; pythonfmu: Python-backed CS with CVODES, a desktop "
                             "cross-check that needs Python with flexfmu where it runs (default: %(default)s)")
    parser.add_argument("--fmi-version", choices=("2", "3"), default="2", help="FMI version (default: %(default)s)")
    parser.add_argument("--interface", choices=("cs", "me", "both"), default="both",
                        help="co-simulation, model exchange or both in one FMU (default: %(default)s)")
    parser.add_argument("--integrator", choices=("rk4", "implicit"), default="rk4",
                        help="fixed-step co-simulation integrator (default: %(default)s)")
    parser.add_argument("--step", type=float, default=None,
                        help="internal co-simulation step in s (default: from the arm's highest frequency)")
    parser.add_argument("--communication-step", type=float, default=1e-3,
                        help="default communication step in s, a multiple of the internal step (default: %(default)s)")
    parser.add_argument("--stop-time", type=float, default=5.0, help="default stop time in s (default: %(default)s)")
    parser.set_defaults(run=run)


def run(args) -> int:
    if args.backend == "pythonfmu":
        return run_pythonfmu(args)
    from flexfmu import build_model, load_arm
    from flexfmu.fmu.build import BuildError
    from flexfmu.fmu.export import ExportError, ExportSettings, export_fmu

    if args.fmi_version == "3":
        print("error: --fmi-version 3 is not implemented yet; FMI 2.0 is", file=sys.stderr)
        return 2
    settings = ExportSettings(
        integrator=args.integrator, internal_step=args.step, communication_step=args.communication_step,
        stop_time=args.stop_time, interface=args.interface,
    )
    model = build_model(load_arm(args.arm))
    try:
        report = export_fmu(model, args.output, settings)
    except (ExportError, BuildError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"wrote {report.path} ({args.interface}, {report.integrator}, internal step {report.internal_step:.6g} s, "
        f"highest frequency {report.omega_max:.1f} rad/s) in {report.total_s:.2f} s "
        f"(codegen {report.codegen_s:.2f} s, compile {report.compile_s:.2f} s)"
    )
    return 0


def run_pythonfmu(args) -> int:
    """The pythonfmu backend: only the arm, output, communication step and stop time apply."""
    from flexfmu.fmu.export import ExportError
    from flexfmu.fmu.pythonfmu_backend import export_pythonfmu

    given = [flag for attribute, flag, default in NATIVE_ONLY if getattr(args, attribute) != default]
    if given:
        verb = "is" if len(given) == 1 else "are"
        print(f"error: {', '.join(given)} {verb} for --backend native only; --backend pythonfmu writes an "
              "FMI 2.0 co-simulation FMU integrated by CVODES", file=sys.stderr)
        return 2
    try:
        path = export_pythonfmu(args.arm, args.output, args.communication_step, args.stop_time)
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path} (pythonfmu, co-simulation, CVODES BDF; needs Python with flexfmu where it is imported)")
    return 0
