"""Reference motions a control law tracks: t -> (theta_d, dtheta_d, ddtheta_d).

Shared by the harness scenarios, the tuning graph (sampled once per
controller sample) and the planner's initial guess.
"""

from __future__ import annotations

import casadi as ca
import numpy as np


def circle_reference(center, radius: float, frequency: float, lengths, elbow: float = -1.0):
    """Joint angles and rates that put a rigid two-link arm's tip on a circle.

    x = cx + r cos(2 pi f t), y = cy + r sin(2 pi f t) (paper 000 case 2),
    through the rigid inverse kinematics with the elbow sign ``elbow``
    (-1: elbow as in paper 000's start pose (45 deg, -45 deg)). Rates by the
    inverse Jacobian.

    Parameters
    ----------
    center : pair of float
        The circle's centre (cx, cy), m, in the base frame.
    radius : float
        The circle's radius r, m.
    frequency : float
        Revolutions per second f, Hz.
    lengths : pair of float
        The two link lengths (l1, l2), m.
    elbow : float
        The elbow sign, -1 or 1.

    Returns
    -------
    callable
        t -> (theta_d, dtheta_d, ddtheta_d), the accelerations left zero; it raises ValueError at a time
        where the circle leaves the arm's reach.
    """
    l1, l2 = lengths
    w = 2 * np.pi * frequency

    def reference(t: float):
        x, y = center[0] + radius * np.cos(w * t), center[1] + radius * np.sin(w * t)
        xd, yd = -radius * w * np.sin(w * t), radius * w * np.cos(w * t)
        c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2 * l1 * l2)
        if abs(c2) >= 1.0:
            raise ValueError(f"the circle's point ({x:.4g}, {y:.4g}) m at t = {t:g} s is {np.hypot(x, y):.4g} m "
                             f"from the base, not strictly between {abs(l1 - l2):.4g} and {l1 + l2:.4g} m, where "
                             "the two links reach")
        t2 = elbow * np.arccos(c2)
        t1 = np.arctan2(y, x) - np.arctan2(l2 * np.sin(t2), l1 + l2 * np.cos(t2))
        J = np.array([[-l1 * np.sin(t1) - l2 * np.sin(t1 + t2), -l2 * np.sin(t1 + t2)],
                      [l1 * np.cos(t1) + l2 * np.cos(t1 + t2), l2 * np.cos(t1 + t2)]])
        return np.array([t1, t2]), np.linalg.solve(J, [xd, yd]), np.zeros(2)

    return reference


def quintic_reference(start, goal, duration: float):
    """theta_d(t) = start + (goal - start)(10 s^3 - 15 s^4 + 6 s^5), s = t / T
    (paper 004, eq. 71), with its rates and accelerations; held after T.

    Parameters
    ----------
    start, goal : array
        Joint angles at t = 0 and from t = T on, rad.
    duration : float
        The move time T, s.

    Returns
    -------
    callable
        t -> (theta_d, dtheta_d, ddtheta_d).
    """
    start, goal = np.asarray(start, float), np.asarray(goal, float)

    def reference(t: float):
        s = min(max(t / duration, 0.0), 1.0)
        shape = 10 * s**3 - 15 * s**4 + 6 * s**5
        rate = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
        accel = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
        return start + shape * (goal - start), rate * (goal - start), accel * (goal - start)

    return reference


def septic(s):
    """The septic rest-to-rest blend 35 s^4 - 84 s^5 + 70 s^6 - 20 s^7 of the normalised time ``s`` clamped to
    [0, 1] (zero velocity, acceleration and jerk at both ends; held outside), for a number or a CasADi
    expression."""
    s = ca.fmin(ca.fmax(s, 0.0), 1.0)
    return 35 * s**4 - 84 * s**5 + 70 * s**6 - 20 * s**7


def platform_circle(center, radius: float, frequency: float):
    """t -> (P, P', P''): the platform centre on a horizontal circle about ``center`` (m) of ``radius`` (m) at
    ``frequency`` revolutions per second, starting at ``center + (radius, 0, 0)`` (paper 003, section 5.3)."""
    center, w = np.asarray(center, float), 2 * np.pi * frequency

    def path(t: float):
        c, s = np.cos(w * t), np.sin(w * t)
        return (center + radius * np.array([c, s, 0.0]), radius * w * np.array([-s, c, 0.0]),
                -radius * w * w * np.array([c, s, 0.0]))

    return path


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
    t0, t1, t2, t3, tf = times
    xy = septic((t - t1) / (t3 - t1))
    z = ca.if_else(t < t2, septic((t - t0) / (t2 - t0)), 1 - septic((t - t2) / (tf - t2)))
    return ca.DM(start) + ca.DM(travel) * ca.vertcat(xy, xy, z)


def inverted_u(start, travel, times):
    """t -> (P, P', P''): :func:`inverted_u_expression` with its rates and accelerations (automatic
    differentiation), as numbers.

    Parameters
    ----------
    start, travel : sequence of 3 floats
        (X0, Y0, Z0) and (dX, dY, dZ), m.
    times : sequence of 5 floats
        (t0, t1, t2, t3, tf), s.
    """
    t = ca.SX.sym("t")
    position = inverted_u_expression(t, start, travel, times)
    rate = ca.jacobian(position, t)
    motion = ca.Function("inverted_u", [t], [position, rate, ca.jacobian(rate, t)])

    def path(time: float):
        return tuple(np.array(value).ravel() for value in motion(time))

    return path


def platform_reference(path, kinematics, step: float = 1e-5):
    """t -> (theta_d, dtheta_d, ddtheta_d): the motor angles of a Delta robot whose platform follows ``path``
    (t -> (P, P', P'')), through its inverse kinematics and Jacobian; the accelerations by a central difference
    of the rates over ``step`` s.

    Parameters
    ----------
    path : callable
        t -> (P, P', P''), m, m/s, m/s^2, base frame.
    kinematics : flexfmu.dynamics.delta.kinematics.DeltaKinematics
        The robot's kinematics.
    step : float
        Time step of the difference, s.
    """

    def rates(t: float):
        P, P_rate, _ = path(t)
        return kinematics.motion(P, P_rate)

    def reference(t: float):
        theta, rate = rates(t)
        accel = (rates(t + step)[1] - rates(max(t - step, 0.0))[1]) / (t + step - max(t - step, 0.0))
        return theta, rate, accel

    return reference


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
    final_rate : float
        w0, rad/s.
    ramp_time : float
        T, s.

    Returns
    -------
    tuple
        (theta, dtheta, ddtheta), floats or CasADi expressions like ``t``.
    """
    import casadi as ca

    symbolic = isinstance(t, (ca.SX, ca.MX))
    math = ca if symbolic else np
    w0, T = float(final_rate), float(ramp_time)
    w = 2 * np.pi / T
    ramp = (w0 / T * (t**2 / 2 + (math.cos(w * t) - 1) / w**2), w0 / T * (t - math.sin(w * t) / w),
            w0 / T * (1 - math.cos(w * t)))
    hold = (w0 * (t - T / 2), w0 + 0 * t, 0 * t)
    if symbolic:
        return tuple(ca.if_else(t < T, a, b) for a, b in zip(ramp, hold))
    return tuple(float(v) for v in (ramp if t < T else hold))


def spinup_reference(final_rate: float, ramp_time: float, joints: int = 1):
    """t -> (theta, dtheta, ddtheta) of :func:`spinup_motion` for each of ``joints`` prescribed joints.

    Parameters
    ----------
    final_rate : float
        w0, rad/s.
    ramp_time : float
        T, s.
    joints : int
        How many joints follow the profile (each gets the same one).

    Returns
    -------
    callable
        t -> three arrays of ``joints`` entries.
    """
    def reference(t: float):
        return tuple(np.full(joints, value) for value in spinup_motion(t, final_rate, ramp_time))

    return reference
