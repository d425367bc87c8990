"""``flexfmu demo --out DIR``: the README's main job.

Exports the native FMU of paper 000's arm, validates it, and cross-validates
it (co-simulation, model exchange, Python-backed FMU, controller FMU) against
the reference in paper 000's circle-tracking scenario, and paper 004's arm in
its bang-bang scenario; writes DIR/report.md, report.json and the plots.
"""

from __future__ import annotations


from flexfmu.commands._common import add_out

CASES = (("yu_chen_2dof", "pd_circle"), ("subudhi_morris_2link", "bang_bang"))
# the FMI 2.0 runs: `flexfmu crosscheck` adds the FMI 3.0 FMU's
RUNS = ("reference", "native-cs", "native-me", "pythonfmu-cs", "controller-fmu")


def add_parser(sub) -> None:
    parser = sub.add_parser("demo", help="export, validate and cross-check the example arms (the main job)")
    add_out(parser, "out/main")
    parser.set_defaults(run=run)


def run(args) -> int:
    from flexfmu import build_model, load_arm
    from flexfmu.data import resolve_arm
    from flexfmu.harness.crosscheck import crosscheck
    from flexfmu.targets import export_fmu
    from flexfmu.targets.validate import validate_fmu

    out = args.out
    fmu = out / "yu_chen_2dof.fmu"
    report = export_fmu(build_model(load_arm("yu_chen_2dof")), fmu)
    print(f"exported {fmu} (internal step {report.internal_step:.6g} s, {report.total_s:.1f} s)")
    validation = validate_fmu(fmu)
    for problem in validation.problems:
        print(f"problem: {problem}")
    print(f"validated {fmu}: {len(validation.problems)} problem(s)")
    data = crosscheck([(resolve_arm(arm), scenario) for arm, scenario in CASES], out, runs=RUNS)
    for case in data["cases"]:
        worst = max(c["max_abs"] / c["tolerance"] for c in case["comparisons"])
        print(f"{case['arm']}/{case['scenario']}: worst difference {worst:.2g} x its tolerance")
    print(f"{'PASS' if data['passed'] else 'FAIL'}: report in {out}/report.md ({data['wall_time_s']:.0f} s)")
    return 0 if data["passed"] and not validation.problems else 1
