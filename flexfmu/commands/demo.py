"""``flexfmu demo --out DIR``: the README's main job.

Exports the native FMU of paper 000's arm, validates it, and cross-validates
it (co-simulation, model exchange, Python-backed FMU, controller FMU) against
the reference in paper 000's circle-tracking scenario, and paper 004's arm in
its bang-bang scenario; writes DIR/report.md, report.json and the plots.
Every FMU build, the validation and every run is a task on a local Dask
cluster (one worker process per core), so the job uses the whole machine.
"""

from __future__ import annotations

from flexfmu.commands._common import add_campaign, add_out, campaign_settings

CASES = (("yu_chen_2dof", "pd_circle"), ("subudhi_morris_2link", "bang_bang"))


def add_parser(sub) -> None:
    parser = sub.add_parser("demo", help="export, validate and cross-check the example arms (the main job)")
    add_out(parser, "out/main")
    add_campaign(parser)
    parser.set_defaults(run=run)


def _validate(fmu_file) -> list[str]:
    from flexfmu.targets.validate import validate_fmu

    return validate_fmu(fmu_file.path()).problems


def run(args) -> int:
    import time

    from flexfmu import load_arm
    from flexfmu.data import resolve_arm, resolve_scenario
    from flexfmu.harness.campaign import dask_client
    from flexfmu.harness.crosscheck import fmu_file, crosscheck_on, run_case
    from flexfmu.harness.fmu_cache import native_fmu
    from flexfmu.harness.report import write_report
    from flexfmu.targets.validate import validate_fmu

    began = time.perf_counter()
    settings = campaign_settings(args)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    cases = [(resolve_arm(arm), scenario) for arm, scenario in CASES]
    fmu = out / "yu_chen_2dof.fmu"
    if settings.serial:  # --workers 0: everything in this process, one after another
        fmu.write_bytes(native_fmu(load_arm("yu_chen_2dof")).read_bytes())
        problems = validate_fmu(fmu).problems
        cases_done = [run_case(arm_file, scenario, out) for arm_file, scenario in cases]
        return _summary(write_report(out, cases_done, time.perf_counter() - began), fmu, problems)
    with dask_client(settings) as client:
        arm_file = resolve_arm("yu_chen_2dof")
        native = client.submit(fmu_file, "native", arm_file, resolve_scenario("pd_circle"), None, pure=False,
                               priority=20)
        builds = {("native", str(arm_file), ""): native}
        validation = client.submit(_validate, native, pure=False, priority=15)
        cases_done = crosscheck_on(client, cases, out, builds=builds)
        fmu.write_bytes(native.result().data)
        problems = validation.result()
    return _summary(write_report(out, cases_done, time.perf_counter() - began), fmu, problems)


def _summary(data: dict, fmu, problems: list[str]) -> int:
    """Print what the demo found; its exit status."""
    print(f"exported {fmu}")
    for problem in problems:
        print(f"problem: {problem}")
    print(f"validated {fmu}: {len(problems)} problem(s)")
    for case in data["cases"]:
        worst = max(c["max_abs"] / c["tolerance"] for c in case["comparisons"])
        print(f"{case['arm']}/{case['scenario']}: worst difference {worst:.2g} x its tolerance")
    print(f"{'PASS' if data['passed'] else 'FAIL'}: report in {fmu.parent}/report.md ({data['wall_time_s']:.0f} s)")
    return 0 if data["passed"] and not problems else 1
