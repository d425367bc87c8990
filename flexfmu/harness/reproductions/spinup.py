"""Paper 001's spin-up benchmark as figures: the spinning beam's tip deflection.

The hub of a clamped-free beam (``spinup_beam``) is spun up along the
profile of :func:`flexfmu.control.references.spinup_motion` to the rate w0
in T = 15 s and held there. A model with geometric stiffening keeps the tip
deflection bounded and converges as modes are added; without it the beam
diverges for every w0 above its first cantilever frequency (2.911 rad/s).

:func:`spinup_run` integrates a Model under the continuous profile (the
profile is an expression of time inside CVODES, no sample and hold), and
:func:`spinup_figures` returns the minimum tip deflection per mode count and
final rate: the numbers a registry of published results can hold
(``tests/test_spinup.py`` checks them against EXUDYN's ANCF beam).
"""

from __future__ import annotations

import dataclasses

import casadi as ca
import numpy as np

from flexfmu.control.references import spinup_motion
from flexfmu.dynamics import metadata as md
from flexfmu.harness.running.reference import integrator_options, labelled_result
from flexfmu.harness.running.result import Result

ARM = "spinup_beam"
RAMP_TIME = 15.0  # T of paper 001, s
MODE_COUNTS = (2, 3, 4, 6)
RATES = (4.0, 6.0, 10.0)
DIVERGED = 100.0  # m: a tip deflection this large (over 12 beam lengths) has diverged


def beam_variant(arm, modes: int | None = None, stiffening: bool | None = None):
    """``arm`` with every flexible link's mode count set to ``modes`` and its geometric stiffening to
    ``stiffening`` (None keeps what the arm has)."""
    def change(link):
        if not hasattr(link, "geometric_stiffening"):
            return link
        modes_entry = link.modes if modes is None else dataclasses.replace(
            link.modes, count=modes, damping=(link.modes.damping[0],) * modes if link.modes.damping else ())
        return dataclasses.replace(link, modes=modes_entry, geometric_stiffening=(
            link.geometric_stiffening if stiffening is None else stiffening))

    return dataclasses.replace(arm, links=tuple(change(link) for link in arm.links))


def _inputs_of_time(model, t, w0: float, ramp_time: float) -> ca.MX:
    """u(t): the spin-up profile on every prescribed joint, zero torques elsewhere (input order)."""
    angle, rate, acceleration = spinup_motion(t, w0, ramp_time)
    value = {md.TORQUE: 0 * t, md.PRESCRIBED_ANGLE: angle, md.PRESCRIBED_RATE: rate,
             md.PRESCRIBED_ACCELERATION: acceleration}
    return ca.vertcat(*[value[signal.group] for signal in model.input_table])


def spinup_run(model, w0: float, ramp_time: float = RAMP_TIME, duration: float = 20.0, step: float = 1e-3,
               rtol: float = 1e-10, atol: float = 1e-9, p=None, stop_above: float | None = None) -> Result:
    """The spin-up of ``model`` (an arm whose prescribed joints follow the profile) from rest.

    Parameters
    ----------
    model : Model
        With at least one prescribed joint; torque inputs are held at zero.
    w0 : float
        Final hub rate, rad/s.
    ramp_time : float
        T of the profile, s.
    duration, step : float
        End time and output interval, s.
    rtol, atol : float
        CVODES (BDF) tolerances.
    p : array, optional
        Parameters (nominal by default).
    stop_above : float, optional
        End the run at the first second in which a tip deflection exceeds this (m): a diverging model
        grows until round-off in its largest coordinate swamps the tolerance on the others, and CVODES
        then crawls.

    Returns
    -------
    Result
        States, inputs and outputs on 0, step, ..., duration (or up to where the run stopped).

    Raises
    ------
    ValueError
        If the model has no prescribed joint.
    """
    if not model.drives.prescribed:
        raise ValueError(f"arm {model.arm.name!r} has no prescribed joint to spin up")
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    n = len(model.states)
    x, t, start = ca.MX.sym("x", 2 * n), ca.MX.sym("t"), ca.MX.sym("start")
    ode = model.state_derivative(x, _inputs_of_time(model, start + t, w0, ramp_time), p)
    per_second = int(round(1.0 / step))
    chunk = np.arange(1, per_second + 1) * step
    run = ca.integrator("spinup", "cvodes", {"t": t, "x": x, "p": start, "ode": ode}, 0.0, chunk,
                        integrator_options(rtol, atol, "bdf"))
    profile = ca.Function("u", [t], [_inputs_of_time(model, t, w0, ramp_time)])
    samples = int(round(duration / step))
    states, offset = [np.zeros(2 * n)], 0.0
    deflections = [model.output_names.index(name) for name in model.outputs_of(md.DEFLECTION)]
    while len(states) <= samples:
        block = run(x0=states[-1], p=offset)["xf"].full().T[:samples + 1 - len(states)]
        states.extend(block)
        offset += 1.0
        if stop_above is not None:
            y = model.outputs(block[-1, :n], block[-1, n:], profile(offset).full().ravel(), p).full().ravel()
            if np.abs(y[deflections]).max() > stop_above:
                break
    grid = np.arange(len(states)) * step
    u_grid = profile.map(len(grid))(grid).full().T
    return labelled_result(model, grid, np.array(states), u_grid, p)


def minimum(result: Result, name: str) -> tuple[float, float]:
    """(value, time) of the smallest sample of ``name`` in ``result``, refined by the parabola through it
    and its two neighbours."""
    values, time = result[name], result.time
    k = int(np.clip(np.argmin(values), 1, len(values) - 2))
    a, b, c = values[k - 1:k + 2]
    curvature = a - 2 * b + c
    shift = 0.5 * (a - c) / curvature if curvature > 0 else 0.0
    return float(b - 0.25 * (a - c) * shift), float(time[k] + shift * (time[1] - time[0]))


def tip_deflection_name(model) -> str:
    """The output of the (first) flexible link's tip deflection of ``model``."""
    return model.outputs_of(md.DEFLECTION)[0]


def spinup_figures(mode_counts=MODE_COUNTS, rates=RATES, stiffening: bool = True, arm=ARM,
                   duration: float = 20.0) -> dict:
    """Minimum tip deflection of the spin-up per mode count and final rate.

    Parameters
    ----------
    mode_counts : iterable of int
        Clamped-free modes of the beam.
    rates : iterable of float
        Final hub rates w0, rad/s.
    stiffening : bool
        Geometric stiffening on the beam.
    arm : str or Path
        The arm (an example's name or a TOML file), with one prescribed joint.
    duration : float
        Simulated time, s (the ramp takes 15 s).

    Returns
    -------
    dict
        ``{"arm", "stiffening", "ramp_time_s", "duration_s", "minimum_m": {w0: {modes: value}},
        "time_s": {w0: {modes: time of the minimum}}, "largest_m": {w0: {modes: largest |deflection|}},
        "end_s": {w0: {modes: end of the run}}}``, keys as strings (JSON). Without stiffening a run ends
        in the second its tip deflection passes 100 m (diverged); the minimum is then the last value.
    """
    from flexfmu.kinds import build_model, load_arm

    base = load_arm(arm)
    figures = {"arm": base.name, "stiffening": stiffening, "ramp_time_s": RAMP_TIME, "duration_s": duration,
               "minimum_m": {}, "time_s": {}, "largest_m": {}, "end_s": {}}
    for count in mode_counts:
        model = build_model(beam_variant(base, count, stiffening))
        name = tip_deflection_name(model)
        for w0 in rates:
            result = spinup_run(model, w0, duration=duration, stop_above=None if stiffening else DIVERGED)
            value, when = minimum(result, name)
            key = f"{w0:g}"
            figures["minimum_m"].setdefault(key, {})[str(count)] = value
            figures["time_s"].setdefault(key, {})[str(count)] = when
            figures["largest_m"].setdefault(key, {})[str(count)] = float(np.abs(result[name]).max())
            figures["end_s"].setdefault(key, {})[str(count)] = float(result.time[-1])
    return figures
