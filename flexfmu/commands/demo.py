"""``flexfmu demo --out DIR``: the README's main job.

Exports the native FMU of paper 000's arm (FMI 2.0, a binary for every
platform whose compiler is present), validates it, and cross-validates it
(co-simulation, model exchange, Python-backed FMU, controller FMU) against
the reference in paper 000's circle-tracking scenario, and paper 004's arm in
its bang-bang scenario; writes DIR/report.md, report.json and the plots.
Every FMU build, the validation and every run is a task on a local Dask
cluster (one worker process per core), so the job uses the whole machine.
"""

from __future__ import annotations

from flexfmu.commands._common import add_campaign, add_out, campaign_settings

CASES = (("yu_chen_2dof", "pd_circle"), ("subudhi_morris_2link", "bang_bang"))
# the FMI 2.0 runs: `flexfmu crosscheck` adds the FMI 3.0 FMU's
RUNS = ("reference", "native-cs", "native-me", "pythonfmu-cs", "controller-fmu")


def add_parser(sub) -> None:
    parser = sub.add_parser("demo", help="export, validate and cross-check the example arms (the main job)")
    add_out(parser, "out/main")
    add_campaign(parser)
    parser.set_defaults(run=run)


def _demo_fmu(arm_file):
    """The demo's FMU of the arm in ``arm_file``: the default export, every platform with a compiler
    (FmuFile, to ship to the runs and to the validation)."""
    from flexfmu import load_arm
    from flexfmu.harness.campaigns.campaign import FmuFile
    from flexfmu.harness.running.fmu_cache import native_fmu
    from flexfmu.targets import ExportSettings

    return FmuFile.of(native_fmu(load_arm(arm_file), ExportSettings()))


def _validate(fmu_file) -> list[str]:
    from flexfmu.targets.validate import validate_fmu

    return validate_fmu(fmu_file.path()).problems


def run(args) -> int:
    import time

    from flexfmu.data import resolve_arm
    from flexfmu.harness.campaigns.campaign import dask_client
    from flexfmu.harness.reports.report import write_report
    from flexfmu.harness.workflows.crosscheck import crosscheck_on, run_case
    from flexfmu.targets.validate import validate_fmu

    began = time.perf_counter()
    settings = campaign_settings(args)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    cases = [(resolve_arm(arm), scenario) for arm, scenario in CASES]
    fmu = out / "yu_chen_2dof.fmu"
    if settings.serial:  # --workers 0: everything in this process, one after another
        fmu.write_bytes(_demo_fmu(resolve_arm("yu_chen_2dof")).data)
        problems = validate_fmu(fmu).problems
        cases_done = [run_case(arm_file, scenario, out, runs=RUNS) for arm_file, scenario in cases]
        return _summary(write_report(out, cases_done, time.perf_counter() - began), fmu, problems)
    with dask_client(settings) as client:
        arm_file = resolve_arm("yu_chen_2dof")
        native = client.submit(_demo_fmu, arm_file, pure=False, priority=20)
        builds = {("native", str(arm_file), ""): native}
        validation = client.submit(_validate, native, pure=False, priority=15)
        cases_done = crosscheck_on(client, cases, out, builds=builds, runs=RUNS)
        fmu.write_bytes(native.result().data)
        problems = validation.result()
    return _summary(write_report(out, cases_done, time.perf_counter() - began), fmu, problems)


def _summary(data: dict, fmu, problems: list[str]) -> int:
    """Print what the demo found; its exit status."""
    from flexfmu.harness.reports.report import case_lines

    print(f"exported {fmu}")
    for problem in problems:
        print(f"problem: {problem}")
    print(f"validated {fmu}: {len(problems)} problem(s)")
    for case in data["cases"]:
        print("\n".join(case_lines(case)))
    print(f"{'PASS' if data['passed'] else 'FAIL'}: report in {fmu.parent}/report.md ({data['wall_time_s']:.0f} s)")
    return 0 if data["passed"] and not problems else 1
