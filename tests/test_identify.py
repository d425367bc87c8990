"""flexfmu identify: exact sensitivities, checked data, honest intervals, a calibrated arm that round-trips.

The fast tests use a one-link flexible arm on a hub (one clamped-free mode,
10 ms samples) driven by a known torque; the synthetic data come from the
same discretisation with Gaussian noise of known level, so the statistics of
the fit can be checked against the truth. The EXUDYN test (slow) fits data
that flexfmu did not make.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from flexfmu import arm_from_dict, build_model, load_arm
from flexfmu.control.identification import Z95, Identification, IdentificationError
from flexfmu.control.measurements import Experiment, MeasurementError, read_experiment
from flexfmu.control.open_loop import OpenLoopRun
from flexfmu.dynamics.equilibrium import holding_equilibrium, rest_state
from flexfmu.integrate import INTEGRATORS
from flexfmu.spec.write import FieldError, to_toml, with_fields

BEAM = {"name": "hub_beam", "gravity": [0.0, 0.0], "link": [{
    "kind": "flexible", "length": 1.0, "mass_per_length": 0.5, "EI": 20.0,
    "modes": {"family": "clamped-free", "count": 1, "damping_ratio": 0.02},
    "joint": {"rotor_inertia": 0.05, "viscous_friction": 0.01}}]}
ANGLE, DEFLECTION = "joint[1].angle", "link[1].deflection"
MEASURED = [ANGLE, DEFLECTION]
NOISE = np.array([1e-3, 2e-4])  # rad, m
TRUTH = {"link[1].EI": 23.0, "link[1].damping_ratio[1]": 0.035}
STEP, COUNT = 0.01, 200


@pytest.fixture(scope="module")
def beam():
    return build_model(arm_from_dict(BEAM))


def torque(t):
    return (0.25 * np.sin(2 * np.pi * 0.7 * t) + 0.15 * np.sign(np.sin(2 * np.pi * 1.9 * t)))[:, None]


def synthetic(model, truth, seed, inputs=torque, count=COUNT, step=STEP, noise=NOISE, integrator="rk4") -> Experiment:
    """An experiment of ``model`` with parameters ``truth``, run as the FMU runs it (with ``integrator``), with
    Gaussian noise."""
    t = np.arange(count) * step
    U = inputs(t)
    Y = OpenLoopRun(model, step, count, MEASURED, [], integrator=integrator).outputs(model.start_state, U,
                                                                                   model.parameter_vector(truth))
    Y = Y + np.random.default_rng(seed).normal(size=Y.shape) * noise
    return Experiment(f"seed{seed}", t, U, dict(zip(MEASURED, Y.T)))


def write_csv(path, header, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


# ------------------------------------------------------------------------------------------- sensitivities

@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_sensitivities_are_the_derivatives_of_the_discretised_run(beam, integrator):
    """Forward sensitivities of the outputs to EI, a damping ratio and the initial state equal central
    differences of the same discrete run (to the differences' own truncation error), for every integrator an
    FMU may use: the implicit rule's Newton iterations and the Rosenbrock step's factorisation included."""
    names = ["link[1].EI", "link[1].damping_ratio[1]"]
    t = np.arange(120) * STEP
    run = OpenLoopRun(beam, STEP, 120, MEASURED, names, fit_initial=True, integrator=integrator)
    p, x0 = beam.parameter_vector(TRUTH), beam.start_state + 0.01
    Y, dY = run.outputs_and_sensitivities(x0, torque(t), p)
    assert np.allclose(Y, run.outputs(x0, torque(t), p), rtol=0, atol=1e-14)
    index = [list(beam.parameters).index(name) for name in names]
    for k in range(run.directions):
        if k < len(names):
            h = 1e-5 * p[index[k]]
            plus, minus = p.copy(), p.copy()
            plus[index[k]] += h
            minus[index[k]] -= h
            fd = (run.outputs(x0, torque(t), plus) - run.outputs(x0, torque(t), minus)) / (2 * h)
        else:
            e = np.zeros(len(x0))
            e[k - len(names)] = h = 1e-6
            fd = (run.outputs(x0 + e, torque(t), p) - run.outputs(x0 - e, torque(t), p)) / (2 * h)
        scale = np.max(np.abs(dY[:, :, k]))
        assert scale > 0
        assert np.max(np.abs(fd - dY[:, :, k])) < 1e-6 * scale, f"direction {k}"


def test_an_experiment_moved_by_initial_starts_at_rest_at_that_pose():
    """``--initial`` moves the joints (``rest_state``): the link then sags as gravity there asks, at rest under
    the holding torque: none hanging straight down, about cos 45 deg of the horizontal sag at -45 deg (the
    start pose's is ``Model.start_state``, where the FMU starts)."""
    model = build_model(arm_from_dict(BEAM | {"gravity": [0.0, -9.81]}))
    joint, mode = model.states
    assert np.array_equal(rest_state(model), model.start_state)
    horizontal = model.start_state[1]
    assert horizontal < -1e-3  # the horizontal link sags
    pc = np.concatenate([model.nominal_parameters, np.array(model.compiled.constants(model.nominal_parameters)).ravel()])
    for angle, sag in ((-np.pi / 2, 0.0), (-np.pi / 4, np.cos(np.pi / 4) * horizontal)):
        x0 = rest_state(model, {joint: angle})
        _, tau = holding_equilibrium(model, {joint: angle})
        assert x0[0] == angle and np.all(x0[2:] == 0.0)
        assert x0[1] == pytest.approx(sag, rel=0.03, abs=1e-12 * abs(horizontal))
        assert np.max(np.abs(np.array(model.compiled.state_derivative(x0, tau, pc)))) < 1e-9


@pytest.mark.slow
def test_the_delta_robot_is_refused_with_its_reason():
    """A Delta robot's parameters have no field of its arm file to write a calibrated value to: refused
    before any run is built, naming the arm."""
    model = build_model(load_arm("kuo_delta"))
    experiment = Experiment("delta", np.arange(3) * 1e-3, np.zeros((3, len(model.inputs))),
                            {model.output_names[0]: np.zeros(3)})
    with pytest.raises(IdentificationError, match="kuo_delta.*delta.*cannot be identified.*none of its parameters"):
        Identification(model, [experiment], [next(row.name for row in model.parameter_table if row.tunable)])


# ------------------------------------------------------------------------------------------------- fitting

@pytest.mark.parametrize("start", [None, {"link[1].EI": 28.0, "link[1].damping_ratio[1]": 0.1}])
def test_fit_recovers_the_truth_within_its_interval(beam, start):
    fit = Identification(beam, [synthetic(beam, TRUTH, 0)], list(TRUTH), start).fit()
    for name, value in TRUTH.items():
        low, high = fit.interval(name)
        assert low <= value <= high
        assert fit.standard_error[name] < 0.2 * value  # the data pin them down
        assert abs(fit.start[name] - value) > 4 * fit.standard_error[name]  # and the start was far off
    assert fit.sigma[ANGLE] == pytest.approx(NOISE[0], rel=0.15)
    assert fit.sigma[DEFLECTION] == pytest.approx(NOISE[1], rel=0.15)
    assert fit.warnings == []


def test_a_fit_through_the_rosenbrock_step_recovers_the_truth(beam):
    """Data made by the Rosenbrock step a stiff arm's FMU takes (one step per 10 ms sample) are fitted through
    that step: the truth lies in the intervals."""
    data = synthetic(beam, TRUTH, 0, integrator="rosenbrock")
    fit = Identification(beam, [data], list(TRUTH), integrator="rosenbrock").fit()
    for name, value in TRUTH.items():
        low, high = fit.interval(name)
        assert low <= value <= high
        assert fit.standard_error[name] < 0.2 * value
    assert fit.sigma[ANGLE] == pytest.approx(NOISE[0], rel=0.15)


def test_intervals_cover_the_truth_and_errors_are_standard_normal(beam):
    """Over 20 noise draws: the 95 % intervals hold the truth in at least 34 of 40 cases (the chance of 33 or
    fewer is 0.5 % for honest intervals) and (estimate - truth) / standard error has a spread near 1, which
    intervals too wide or too narrow would miss."""
    identification = Identification(beam, [synthetic(beam, TRUTH, 0)], list(TRUTH))
    z = []
    for seed in range(20):
        fit = identification.with_data([synthetic(beam, TRUTH, 1000 + seed)]).fit()
        z.append([(fit.estimate[n] - TRUTH[n]) / fit.standard_error[n] for n in TRUTH])
    z = np.array(z)
    assert np.sum(np.abs(z) <= Z95) >= 34
    assert 0.7 < np.std(z) < 1.3


@pytest.mark.slow
def test_intervals_cover_the_truth_over_many_draws(beam):
    """300 draws: coverage of each parameter's 95 % interval within [0.92, 0.98] (3 binomial standard errors
    about 0.95), the standardised errors' spread within 0.1 of 1 and their mean within 3 standard errors
    (3 / sqrt(300)) of 0: the estimates are not biased."""
    identification = Identification(beam, [synthetic(beam, TRUTH, 0)], list(TRUTH))
    z = []
    for seed in range(300):
        fit = identification.with_data([synthetic(beam, TRUTH, 5000 + seed)]).fit()
        z.append([(fit.estimate[n] - TRUTH[n]) / fit.standard_error[n] for n in TRUTH])
    z = np.array(z)
    coverage = np.mean(np.abs(z) <= Z95, axis=0)
    assert np.all((0.92 <= coverage) & (coverage <= 0.98)), coverage
    assert np.all(np.abs(np.std(z, axis=0) - 1) < 0.1)
    assert np.all(np.abs(np.mean(z, axis=0)) < 3 / np.sqrt(len(z))), np.mean(z, axis=0)


def test_a_fit_cut_short_says_so(beam):
    fit = Identification(beam, [synthetic(beam, TRUTH, 0)], list(TRUTH)).fit(max_iterations=1)
    assert any("without converging" in w for w in fit.warnings)


def test_several_experiments_and_the_initial_state_fit_together(beam):
    """Two experiments, each starting from its own unknown state: the states are fitted with the parameters."""
    t = np.arange(COUNT) * STEP
    x0s = [beam.start_state + np.array([0.1, 0.002, 0.0, 0.0]), beam.start_state + np.array([-0.05, 0.0, 0.2, 0.0])]
    experiments = []
    for seed, x0 in enumerate(x0s):
        run = OpenLoopRun(beam, STEP, COUNT, MEASURED, [])
        Y = run.outputs(x0, torque(t) * (1 + seed), beam.parameter_vector(TRUTH))
        Y += np.random.default_rng(seed).normal(size=Y.shape) * NOISE
        experiments.append(Experiment(f"e{seed}", t, torque(t) * (1 + seed), dict(zip(MEASURED, Y.T))))
    fit = Identification(beam, experiments, list(TRUTH), fit_initial=True).fit()
    for name, value in TRUTH.items():
        low, high = fit.interval(name)
        assert low <= value <= high
    for fitted, true in zip(fit.initial_states, x0s):
        assert np.allclose(fitted[:2], true[:2], atol=5e-3)


def test_inputs_that_never_move_a_parameter_make_it_unidentifiable(beam):
    """At rest with no torque nothing moves: the fit refuses rather than return the start values."""
    still = synthetic(beam, TRUTH, 0, inputs=lambda t: np.zeros((len(t), 1)), noise=np.array([1e-3, 1e-3]))
    with pytest.raises(IdentificationError, match=r"unidentifiable: link\[1\].EI, link\[1\].damping_ratio\[1\]"):
        Identification(beam, [still], list(TRUTH)).fit()


def test_parameters_that_only_act_together_are_named():
    """A rigid link's mass and a lumped mass at its tip move the arm only as one inertia when the arm turns
    in a horizontal plane about its joint (each adds m x^2): the fit warns and names both."""
    arm = build_model(arm_from_dict({"name": "pair", "link": [{"kind": "rigid", "length": 1.0, "mass": 1.0,
                                                                "com": [1.0, 0.0], "inertia": 1e-6,
                                                                "joint": {"viscous_friction": 0.1}}],
                                     "lumped_mass": [{"link": 1, "position": 1.0, "mass": 0.5}]}))
    t = np.arange(COUNT) * STEP
    Y = OpenLoopRun(arm, STEP, COUNT, [ANGLE], []).outputs(arm.start_state, torque(t), arm.nominal_parameters)
    Y += np.random.default_rng(0).normal(size=Y.shape) * 1e-3
    fit = Identification(arm, [Experiment("pair", t, torque(t), {ANGLE: Y[:, 0]})],
                         ["link[1].mass", "lumped_mass[1].mass"]).fit()
    assert any("link[1].mass" in w and "lumped_mass[1].mass" in w for w in fit.warnings), fit.warnings


def test_unknown_or_fixed_parameters_and_bad_starts_are_refused(beam):
    experiment = synthetic(beam, TRUTH, 0)
    with pytest.raises(IdentificationError, match=r"'link\[1\].stiffness' is not a parameter"):
        Identification(beam, [experiment], ["link[1].stiffness"])
    with pytest.raises(IdentificationError, match=r"'link\[1\].Ei' is not a parameter .*did you mean 'link\[1\].EI'"):
        Identification(beam, [experiment], ["link[1].Ei"])
    with pytest.raises(IdentificationError, match=r"start values outside their ranges: link\[1\].EI = 1e\+13"):
        Identification(beam, [experiment], ["link[1].EI"], start={"link[1].EI": 1e13})
    with pytest.raises(IdentificationError, match=r"'link\[1\].length' is fixed geometry"):
        Identification(beam, [experiment], ["link[1].length"])


# ------------------------------------------------------------------------------------------------ bad data

@pytest.fixture()
def good_rows():
    return [[f"{0.01 * k:.2f}", "0.1", "0.0", "0.0"] for k in range(5)]


@pytest.mark.parametrize("change, message", [
    (lambda h, r: (h[:3] + ["link[1].deflectoin"], r), r"unknown column\(s\) 'link\[1\].deflectoin'"),
    (lambda h, r: ([h[0], h[2], h[3]], [[a, c, d] for a, _, c, d in r]), r"missing column\(s\) 'tau\[1\]'"),
    (lambda h, r: (h, r[:2] + [["0.01", *r[2][1:]]] + r[3:]), r"time is not increasing: row 4 has t = 0.01"),
    (lambda h, r: (h, r[:3] + [["0.031", *r[3][1:]]] + r[4:]), "time is not equally spaced"),
    (lambda h, r: (h, r[:1] + [[r[1][0], "", *r[1][2:]]] + r[2:]), r"column 'tau\[1\]': 1 empty.*first at row 3"),
    (lambda h, r: (h, r[:4] + [[*r[4][:3], "nan"]]), r"column 'link\[1\].deflection': 1 .*NaN.*row 6"),
    (lambda h, r: (h[:2], [row[:2] for row in r]), "no measured output"),
])
def test_bad_data_is_refused_naming_column_and_row(beam, tmp_path, good_rows, change, message):
    header, rows = change(["time", "tau[1]", ANGLE, DEFLECTION], good_rows)
    write_csv(tmp_path / "bad.csv", header, rows)
    with pytest.raises(MeasurementError, match=message):
        read_experiment(tmp_path / "bad.csv", beam)


def test_the_command_refuses_bad_data_before_any_work(tmp_path, capsys):
    from flexfmu.cli import main

    write_csv(tmp_path / "bad.csv", ["time", "tau[1]", "joint[1].angel"], [["0", "0", "0"], ["0.01", "0", "0"],
                                                                         ["0.02", "0", "0"]])
    code = main(["identify", "cantilever", "--data", str(tmp_path / "bad.csv"), "--params", "link[1].EI",
                 "--out", str(tmp_path / "out")])
    assert code == 2
    assert "unknown column(s) 'joint[1].angel'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# -------------------------------------------------------------------------------------- the calibrated file

def test_fields_rewrite_an_arm_file_that_loads_back():
    data = {"name": "a", "link": [{"kind": "flexible", "length": 0.5, "mass": 0.2, "E": 7e10, "I": 1e-10,
                                   "modes": {"family": "pinned-pinned", "count": 2, "damping_ratio": 0.01}}]}
    written = to_toml(with_fields(data, {"link[1].EI": 8.5, "link[1].modes.damping_ratio[1]": 0.03,
                                         "link[1].modes.damping_ratio[2]": 0.01, "link[1].mass_per_length": 0.5}),
                      header="calibrated")
    import tomllib

    arm = arm_from_dict(tomllib.loads(written))
    assert written.startswith("# calibrated")
    assert arm.links[0].EI == 8.5 and arm.links[0].mass_per_length == 0.5
    assert arm.links[0].modes.damping == (0.03, 0.01)
    assert data["link"][0]["E"] == 7e10  # the original is not touched
    with pytest.raises(FieldError, match="every element must be given"):
        with_fields(data, {"link[1].modes.damping_ratio[2]": 0.01})
    with pytest.raises(FieldError, match="no table link\\[3\\]"):
        with_fields(data, {"link[3].EI": 1.0})


def spatial_arms():
    from tests.test_spatial import as_spatial, featured_arm

    return {"spatial hub beam": as_spatial(arm_from_dict(BEAM)), "spatial featured": featured_arm()}


@pytest.mark.parametrize("name", ["planar hub beam", "spatial hub beam", "spatial featured"])
def test_every_parameter_with_a_field_writes_back(name):
    """Every parameter with a field, written at 1.1 times its value, is that value in the model built from
    the written file, and no other parameter moves."""
    import tomllib

    from flexfmu.harness.workflows.identify import calibrated_fields

    data = BEAM if name.startswith("planar") else spatial_arms()[name]
    model = build_model(arm_from_dict(data))
    values = {row.name: row.value * 1.1 for row in model.parameter_table if row.field}
    assert len(values) >= 8
    rebuilt = build_model(arm_from_dict(tomllib.loads(to_toml(with_fields(data, calibrated_fields(model, values))))))
    assert rebuilt.parameters == pytest.approx(model.parameters | values, rel=1e-15)


def test_a_spatial_arm_is_identified(beam):
    """The hub beam written as a spatial arm (bending about z): its EI fitted from the planar beam's data."""
    from flexfmu.dynamics.metadata import DEFLECTION

    spatial = build_model(arm_from_dict(spatial_arms()["spatial hub beam"]))
    stiffness = next(row.name for row in spatial.parameter_table if row.field and row.field.endswith(".EI"))
    planar = synthetic(beam, TRUTH, 0)
    names = {ANGLE: ANGLE, DEFLECTION: spatial.outputs_of(DEFLECTION)[0]}  # the deflection is named by its axis
    experiment = Experiment("spatial", planar.time, planar.inputs,
                            {names[k]: v for k, v in zip((ANGLE, DEFLECTION), planar.outputs.values())})
    with pytest.raises(IdentificationError, match=r"not outputs of arm 'hub_beam': link\[1\].deflection$"):
        Identification(spatial, [planar], [stiffness])
    damping = stiffness.replace(".EI", ".damping_ratio[1]")
    fit = Identification(spatial, [experiment], [stiffness, damping]).fit()
    for name, truth in ((stiffness, TRUTH["link[1].EI"]), (damping, TRUTH["link[1].damping_ratio[1]"])):
        low, high = fit.interval(name)
        assert low <= truth <= high


# ------------------------------------------------------------------------------ independent data: EXUDYN

@pytest.mark.slow
def test_bending_stiffness_and_damping_from_exudyn_data():
    """EXUDYN (ANCF cable elements, generalized-alpha) turns a 1 m aluminium strip on a free hub under a held
    torque; flexfmu's assumed-mode arm (three clamped-free modes), started 20 % soft, fits EI and the first
    mode's damping ratio to its hub angle and tip deflection with noise.

    EI comes back within 0.1 % of EXUDYN's (found: 0.02 %): both are Euler-Bernoulli beams of the same mass
    and hub, the ANCF mesh is converged for the first modes and three assumed modes resolve the first
    free-hub mode, so the residual difference is the truncation of the modes and EXUDYN's axial flexibility.
    The damping ratio comes back within 5 % of the Kelvin-Voigt value d omega_1 / (2 EI) (found: 2 %): the
    assumed-mode model damps each clamped-free mode by its own ratio while EXUDYN's damping acts on the free
    hub's mode shape, the fixed ratios of modes 2 and 3 follow the start's EI, and generalized-alpha adds a
    little numerical damping. The intervals (noise only) are much narrower than these model differences, as
    they should be: they do not claim to cover a model error."""
    pytest.importorskip("exudyn", reason="EXUDYN is the independent reference (pip install exudyn)")
    from benchmarks.exudyn_hub_beam import HubBeam, exudyn_hub_beam

    beam, step, count = HubBeam(), 5e-3, 801
    t = np.arange(count) * step
    tau = 0.05 * np.sin(2 * np.pi * 0.9 * t) + 0.03 * np.sign(np.sin(2 * np.pi * 2.7 * t))
    _, angle, deflection = exudyn_hub_beam(tau, step, beam)
    rng = np.random.default_rng(0)
    measured = {ANGLE: angle + rng.normal(size=count) * 1e-4, DEFLECTION: deflection + rng.normal(size=count) * 2e-5}
    model = build_model(arm_from_dict(beam.arm(EI=0.8 * beam.EI)))
    names = ["link[1].EI", "link[1].damping_ratio[1]"]
    fit = Identification(model, [Experiment("exudyn", t, tau[:, None], measured)], names).fit()
    assert fit.estimate["link[1].EI"] == pytest.approx(beam.EI, rel=1e-3)
    assert fit.estimate["link[1].damping_ratio[1]"] == pytest.approx(beam.damping_ratio(1), rel=0.05)
    assert fit.sigma[DEFLECTION] < 2e-5 * 1.5  # the model leaves little besides the noise


# ------------------------------------------------------------------------- the calibrated FMU, end to end

@pytest.mark.slow
@pytest.mark.compiler
def test_the_calibrated_fmu_reproduces_the_fit_and_beats_the_nominal_arm(tmp_path, beam):
    """flexfmu identify on CSV files, then flexfmu export of the calibrated arm file with the report's export
    command: the FMU, driven by the recorded torques, gives the fit's prediction to round-off, and on a
    held-out experiment the calibrated arm predicts better than the nominal one, leaving only the noise."""
    import json
    import shlex

    from flexfmu.cli import main
    from flexfmu.harness.running.runner import run_fmu

    arm_file = tmp_path / "hub_beam.toml"
    arm_file.write_text(to_toml(BEAM))
    files = {}
    for name, seed, inputs in (("swing", 1, torque), ("held_out", 2, lambda t: 0.3 * np.sign(np.sin(3 * t))[:, None])):
        e = synthetic(beam, TRUTH, seed, inputs=inputs)
        files[name] = tmp_path / f"{name}.csv"
        write_csv(files[name], ["time", "tau[1]", *MEASURED],
                  [[repr(float(v)) for v in row] for row in np.column_stack([e.time, e.inputs, *e.outputs.values()])])
    out = tmp_path / "out"
    assert main(["identify", str(arm_file), "--data", str(files["swing"]), "--validate", str(files["held_out"]),
                 "--params", ",".join(TRUTH), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    command = shlex.split(report["export"][0])
    fmu = tmp_path / "calibrated.fmu"
    command[command.index("-o") + 1] = str(fmu)
    assert main([*command[1:], "--platforms", "linux64"]) == 0

    experiment = read_experiment(files["swing"], beam)

    class Replay:
        inputs, outputs = [], ["tau[1]"]

        def __call__(self, t, measured):
            return experiment.inputs[round(t / STEP)]

    result = run_fmu(fmu, beam, Replay(), experiment.time, record=MEASURED)
    with open(out / "prediction_swing.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    prediction = np.array(rows[1:], float)
    assert rows[0] == ["time", *MEASURED]
    for j, name in enumerate(MEASURED, start=1):
        scale = np.max(np.abs(prediction[:, j]))
        assert np.max(np.abs(result[name] - prediction[:, j])) < 1e-9 * scale
    validation = report["validation"][0]
    for name, noise in zip(MEASURED, NOISE):
        assert validation["calibrated_rms"][name] < validation["nominal_rms"][name]
        assert validation["calibrated_rms"][name] < 1.1 * noise  # what is left is the noise
    assert (out / "validation_held_out.png").stat().st_size > 10_000
