"""``flexfmu export ARM.toml -o OUT.fmu``: a native C FMU (FMI 2.0, CS and ME)."""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    parser = sub.add_parser("export", help="export an arm as an FMU with native C binaries")
    parser.add_argument("arm", help="arm specification (TOML)")
    parser.add_argument("-o", "--output", required=True, help="the .fmu to write")
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
