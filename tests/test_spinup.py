"""Paper 001's spin-up benchmark: bounded and converging with geometric stiffening, diverging without
it above the first cantilever frequency as the linear analysis says, in agreement with EXUDYN's
geometrically exact ANCF beam, and the same through the FMU."""

from __future__ import annotations

import numpy as np
import pytest

import flexfmu
from flexfmu.dynamics.linear import natural_frequencies
from flexfmu.harness.reproductions.spinup import DIVERGED, beam_variant, minimum, spinup_run, tip_deflection_name

BEAM = flexfmu.load_arm("spinup_beam")
LENGTH, RHO, EI = BEAM.links[0].length, BEAM.links[0].mass_per_length, BEAM.links[0].EI
# first cantilever frequency, (beta_1 L)^2 sqrt(EI / (rho L^4)) with beta_1 L = 1.8751041
OMEGA_1 = 1.8751041**2 * np.sqrt(EI / (RHO * LENGTH**4))


def model_of(modes: int, stiffening: bool = True):
    return flexfmu.build_model(beam_variant(BEAM, modes, stiffening))


def test_the_beam_and_its_first_frequency():
    """Paper 001's beam: rho A and EI from A, I, rho, E of the papers README; its clamped-free
    fundamental is 2.9108 rad/s = 0.4633 Hz (paper 001: 0.464 Hz)."""
    assert RHO == pytest.approx(2766.67 * 7.2968e-5, rel=1e-6)
    assert EI == pytest.approx(6.8952e10 * 8.2189e-9, rel=1e-6)
    assert OMEGA_1 == pytest.approx(2.9108, abs=1e-4)
    assert natural_frequencies(model_of(4), locked=["theta[1]"])[0] == pytest.approx(OMEGA_1, rel=1e-7)


@pytest.fixture(scope="module")
def minima():
    """Minimum tip deflection of the stiffened model per (w0, modes), 9 s runs (the minimum falls at
    6-7 s)."""
    table = {}
    for modes in (2, 3, 4, 6):
        model = model_of(modes)
        for w0 in (4.0, 6.0, 10.0):
            table[w0, modes] = minimum(spinup_run(model, w0, duration=9.0, step=1e-2), tip_deflection_name(model))[0]
    return table


@pytest.mark.parametrize("w0", [4.0, 6.0, 10.0])
def test_with_stiffening_the_minimum_converges_as_modes_are_added(minima, w0):
    """2, 3, 4 and 6 modes: the minimum changes less and less, 4 to 6 modes by under 0.05 %; it grows
    with w0 but stays a fraction of the length."""
    values = [minima[w0, modes] for modes in (2, 3, 4, 6)]
    steps = np.abs(np.diff(values))
    assert steps[-1] < steps[0] and steps[-1] < 5e-4 * abs(values[-1])
    assert -0.15 * LENGTH < values[-1] < -0.05 * LENGTH * w0 / 10


@pytest.mark.parametrize("w0", [4.0, 6.0, 10.0])
def test_with_stiffening_the_tip_stays_bounded_after_the_spin_up(w0):
    """20 s, 4 modes: after the ramp (T = 15 s) the beam spins at w0 and only rings about the straight
    shape, a few cm at most."""
    model = model_of(4)
    result = spinup_run(model, w0, duration=20.0, step=1e-2)
    deflection = result[tip_deflection_name(model)]
    assert np.abs(deflection).max() < 0.15 * LENGTH
    assert np.abs(deflection[result.time > 15.5]).max() < 0.05


def test_without_stiffening_the_beam_diverges_above_its_first_frequency():
    """The model without the term: its first modal stiffness at rate w is rho L (omega_1^2 - w^2), so
    above omega_1 = 2.911 rad/s it diverges (paper 001: 'above about 3 rad/s'): at w0 = 4 the tip passes
    100 m before the ramp ends; at w0 = 3 it grows after the ramp as exp(sqrt(w0^2 - omega_1^2) t),
    to 1 %; at w0 = 2.5, below omega_1, it stays bounded, and at w0 = 2 it overshoots the stiffened
    model by over 20 %."""
    model = model_of(2, stiffening=False)
    name = tip_deflection_name(model)
    fast = spinup_run(model, 4.0, duration=20.0, step=1e-2, stop_above=DIVERGED)
    assert fast.time[-1] < 15.0 and np.abs(fast[name]).max() > DIVERGED
    after = spinup_run(model, 3.0, duration=17.5, step=1e-2)
    window = after.time >= 15.5
    slope = np.polyfit(after.time[window], np.log(np.abs(after[name][window])), 1)[0]
    assert slope == pytest.approx(np.sqrt(3.0**2 - OMEGA_1**2), rel=1e-2)
    below = spinup_run(model, 2.5, duration=20.0, step=1e-2)
    assert np.abs(below[name]).max() < 0.1 * LENGTH
    slow = minimum(spinup_run(model, 2.0, duration=10.0, step=1e-2), name)[0]
    stiffened = minimum(spinup_run(model_of(2), 2.0, duration=10.0, step=1e-2), name)[0]
    assert slow / stiffened - 1 > 0.2


def test_spin_up_agrees_with_exudyn_ancf_beam():
    """EXUDYN (pip exudyn, geometrically exact ANCF cable elements, 8 elements, h = 0.01 s, within
    0.02 % of its converged answer) at w0 = 4: the minimum within 0.5 %, its time within 0.05 s, the
    whole 15 s history within 1 % of the peak; without stiffening the model is over 20 % off at
    w0 = 2, below the first frequency."""
    exudyn = pytest.importorskip("exudyn", reason="EXUDYN is the independent reference (pip install exudyn)")
    assert exudyn  # imported by the reference below
    from benchmarks.exudyn_spinup import exudyn_spinup

    reference = exudyn_spinup(4.0, elements=8, step=1e-2, duration=15.0)
    model = model_of(4)
    ours = spinup_run(model, 4.0, duration=15.0, step=1e-2)
    name = tip_deflection_name(model)
    (value, when), (exact, exact_when) = minimum(ours, name), reference.minimum()
    assert value == pytest.approx(exact, rel=5e-3)
    assert when == pytest.approx(exact_when, abs=0.05)
    history = np.interp(reference.time, ours.time, ours[name])
    assert np.abs(history - reference.tip_deflection).max() < 1e-2 * abs(exact)

    slow = exudyn_spinup(2.0, elements=8, step=1e-2, duration=10.0).minimum()[0]
    plain = minimum(spinup_run(model_of(4, stiffening=False), 2.0, duration=10.0, step=1e-2), name)[0]
    stiffened = minimum(spinup_run(model, 2.0, duration=10.0, step=1e-2), name)[0]
    assert stiffened == pytest.approx(slow, rel=5e-3)
    assert plain / slow - 1 > 0.2


@pytest.mark.compiler
@pytest.mark.slow
def test_spinup_scenario_through_the_fmu(tmp_path):
    """The spinup scenario (20 s, w0 = 4, 10 ms samples) through the native FMU by co-simulation
    against the reference: every compared output within its tolerance; the held 10 ms samples of the
    profile move the minimum by under 1e-5 of the continuous profile's; and, under the continuous
    profile, the hub torque output does the work the beam's energy gains (trapezoid rule, 1e-4)."""
    from flexfmu.control.scenario import load_scenario
    from flexfmu.harness.running.reference import reference_run
    from flexfmu.harness.workflows.crosscheck import run_case

    case = run_case("spinup_beam", "spinup", tmp_path, runs=("reference", "native-cs"))
    assert case["comparisons"] and all(c["passed"] for c in case["comparisons"]), case["comparisons"]

    model = model_of(4)
    scenario = load_scenario("spinup")
    held = reference_run(model, scenario, scenario.build_controller(model))
    smooth = spinup_run(model, 4.0, duration=20.0, step=1e-3)
    continuous = minimum(smooth, "link[1].deflection")[0]
    assert minimum(held, "link[1].deflection")[0] == pytest.approx(continuous, rel=1e-5)
    n, p = len(model.states), model.nominal_parameters
    inputs = np.array([smooth[u] for u in model.inputs])
    q, qd, _, _ = model.motion.map(len(smooth.time))(smooth.values[:, :n].T, smooth.values[:, n:2 * n].T, inputs, p)
    energy = np.array(model.energy.map(len(smooth.time))(q, qd, p)).sum(axis=0)
    power = smooth["tau[1]"] * smooth["der(theta[1])"]
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(smooth.time))])
    assert np.abs(energy - energy[0] - work).max() < 1e-4 * energy.max()
