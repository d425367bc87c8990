"""Reference motions a control law tracks, t -> (theta_d, dtheta_d, ddtheta_d), as CasADi expressions.

Each reference is written once, as an expression of the time and of its
parameters that takes numbers or CasADi symbols alike; the scenario table
(``flexfmu.control.reference_kinds``) turns it into a Profile
(``flexfmu.control.profile``), whose rates and accelerations follow by
automatic differentiation. The harness scenarios, the tuning graph, the
planner's initial guess and the closed-loop FMU's generated C all evaluate
the same expression.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.control.profile import Profile, profile


def _column(value):
    """``value`` as a CasADi column: a symbol as it is, numbers as a DM."""
    return value if isinstance(value, (ca.SX, ca.MX, ca.DM)) else ca.DM(value)


def circle_angles(t, center, radius, frequency, lengths, elbow: float = -1.0):
    """Joint angles that put a rigid two-link arm's tip on a circle at the time ``t``.

    x = cx + r cos(2 pi f t), y = cy + r sin(2 pi f t) (paper 000 case 2),
    through the rigid inverse kinematics with the elbow sign ``elbow``
    (-1: elbow as in paper 000's start pose (45 deg, -45 deg)).

    Parameters
    ----------
    t : float or casadi expression
        Time, s.
    center : pair of numbers or a CasADi column of 2
        The circle's centre (cx, cy), m, in the base frame.
    radius : number or expression
        The circle's radius r, m.
    frequency : number or expression
        Revolutions per second f, Hz.
    lengths : pair of float
        The two link lengths (l1, l2), m.
    elbow : float
        The elbow sign, -1 or 1.

    Returns
    -------
    casadi expression
        (theta_1, theta_2), rad; NaN where the circle leaves the arm's reach (:func:`circle_reach` says why).
    """
    l1, l2 = lengths
    center = _column(center)
    w = 2 * np.pi * frequency
    x, y = center[0] + radius * ca.cos(w * t), center[1] + radius * ca.sin(w * t)
    c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2 * l1 * l2)
    t2 = elbow * ca.acos(ca.if_else(ca.fabs(c2) < 1, c2, np.nan))
    t1 = ca.atan2(y, x) - ca.atan2(l2 * ca.sin(t2), l1 + l2 * ca.cos(t2))
    return ca.vertcat(t1, t2)


def circle_reach(t: float, center, radius: float, frequency: float, lengths) -> str | None:
    """Why the circle of :func:`circle_angles` leaves a two-link arm's reach at the time ``t`` (s), or None.

    Parameters
    ----------
    t : float
        Time, s.
    center : sequence of float
        The circle's centre (x, y), m, base frame.
    radius : float
        The circle's radius, m.
    frequency : float
        Turns per second.
    lengths : sequence of float
        The two links' lengths, m.
    """
    l1, l2 = lengths
    w = 2 * np.pi * frequency
    x, y = center[0] + radius * np.cos(w * t), center[1] + radius * np.sin(w * t)
    if abs(x * x + y * y - l1 * l1 - l2 * l2) < 2 * l1 * l2:
        return None
    return (f"the circle's point ({x:.4g}, {y:.4g}) m at t = {t:g} s is {np.hypot(x, y):.4g} m from the base, not "
            f"strictly between {abs(l1 - l2):.4g} and {l1 + l2:.4g} m, where the two links reach")


def quintic_angles(t, start, goal, duration):
    """theta_d(``t``) = ``start`` + (``goal`` - ``start``)(10 s^3 - 15 s^4 + 6 s^5), s = t / T clamped to
    [0, 1] (paper 004, eq. 71): held after the move time T = ``duration``; numbers or CasADi expressions."""
    start, goal = _column(start), _column(goal)
    s = ca.fmin(ca.fmax(t / duration, 0.0), 1.0)
    return start + (10 * s**3 - 15 * s**4 + 6 * s**5) * (goal - start)


def quintic_reference(start, goal, duration: float) -> Profile:
    """The rest-to-rest quintic of :func:`quintic_angles` from ``start`` to ``goal`` (rad) in ``duration`` (s)
    as a Profile: t -> (theta_d, dtheta_d, ddtheta_d)."""
    values = {"start": [float(v) for v in start], "goal": [float(v) for v in goal], "move_time": float(duration)}
    return profile(values, "the quintic reference",
                   lambda t, v: quintic_angles(t, v["start"], v["goal"], v["move_time"]))


def septic(s):
    """The septic rest-to-rest blend 35 s^4 - 84 s^5 + 70 s^6 - 20 s^7 of the normalised time ``s`` clamped to
    [0, 1] (zero velocity, acceleration and jerk at both ends; held outside), for a number or a CasADi
    expression."""
    s = ca.fmin(ca.fmax(s, 0.0), 1.0)
    return 35 * s**4 - 84 * s**5 + 70 * s**6 - 20 * s**7


def platform_circle(t, center, radius, frequency):
    """P(``t``): the platform centre at the time ``t`` (s) on a horizontal circle about ``center`` (m) of
    ``radius`` (m) at ``frequency`` revolutions per second, starting at ``center + (radius, 0, 0)`` (paper 003,
    section 5.3); numbers or CasADi expressions."""
    w = 2 * np.pi * frequency
    return _column(center) + radius * ca.vertcat(ca.cos(w * t), ca.sin(w * t), 0)


def inverted_u_expression(t, start, travel, times):
    """Paper 003's pick-and-place path (section 5.4) at the time ``t`` (a number or a CasADi expression): X and
    Y go from ``start`` to ``start + travel`` between ``times[1]`` and ``times[3]``; Z goes to ``start +
    travel`` between ``times[0]`` and ``times[2]`` and back between ``times[2]`` and ``times[4]``; each move
    a septic blend, so the path is three times continuously differentiable in ``t``.

    Parameters
    ----------
    t : float or casadi expression
        Time, s.
    start, travel : sequence of 3 floats
        (X0, Y0, Z0) and (dX, dY, dZ), m.
    times : sequence of 5 floats
        (t0, t1, t2, t3, tf), s.
    """
    t0, t1, t2, t3, tf = ca.vertsplit(_column(times))
    xy = septic((t - t1) / (t3 - t1))
    z = ca.if_else(t < t2, septic((t - t0) / (t2 - t0)), 1 - septic((t - t2) / (tf - t2)))
    return _column(start) + _column(travel) * ca.vertcat(xy, xy, z)


def inverted_u(start, travel, times) -> Profile:
    """t -> (P, P', P''): :func:`inverted_u_expression` with its rates and accelerations, as a Profile with
    the parameters ``start``, ``travel`` (m) and ``times`` (s), each a sequence (3, 3 and 5 numbers)."""
    values = {"start": list(start), "travel": list(travel), "times": list(times)}
    return profile(values, "the inverted U", lambda t, v: inverted_u_expression(t, v["start"], v["travel"], v["times"]))


def spinup_motion(t, final_rate: float, ramp_time: float):
    """Paper 001's spin-up (Section 4.1, after Kane, Ryan and Banerjee): the
    hub angle, rate and acceleration at time ``t``.

    theta(t) = (w0 / T) (t^2 / 2 + (T / (2 pi))^2 (cos(2 pi t / T) - 1)) for t < T,
    theta(t) = w0 (t - T / 2) after: the rate rises smoothly from 0 to w0
    with zero acceleration at both ends, then stays at w0.

    Parameters
    ----------
    t : float or casadi.SX/MX
        Time, s; a CasADi symbol gives the expressions (for a continuous reference run).
    final_rate : float or casadi.SX
        w0, rad/s.
    ramp_time : float or casadi.SX
        T, s.

    Returns
    -------
    tuple
        (theta, dtheta, ddtheta), floats or CasADi expressions like ``t``.
    """
    symbolic = any(isinstance(value, (ca.SX, ca.MX)) for value in (t, final_rate, ramp_time))
    math = ca if symbolic else np
    w0, T = (final_rate, ramp_time) if symbolic else (float(final_rate), float(ramp_time))
    w = 2 * np.pi / T
    ramp = (w0 / T * (t**2 / 2 + (math.cos(w * t) - 1) / w**2), w0 / T * (t - math.sin(w * t) / w),
            w0 / T * (1 - math.cos(w * t)))
    hold = (w0 * (t - T / 2), w0 + 0 * t, 0 * t)
    if symbolic:
        return tuple(ca.if_else(t < T, a, b) for a, b in zip(ramp, hold))
    return tuple(float(v) for v in (ramp if t < T else hold))


def spinup_reference(final_rate: float, ramp_time: float, joints: int = 1) -> Profile:
    """t -> (theta, dtheta, ddtheta) of :func:`spinup_motion` for each of ``joints`` prescribed joints, as a
    Profile with the parameters ``w0`` (rad/s) = ``final_rate`` and ``ramp_time`` (s)."""
    def motion(t, v):
        return tuple(ca.repmat(entry, joints, 1) for entry in spinup_motion(t, v["w0"], v["ramp_time"]))

    return profile({"w0": float(final_rate), "ramp_time": float(ramp_time)}, "the spin-up motion", motion,
                   derivatives=False)
