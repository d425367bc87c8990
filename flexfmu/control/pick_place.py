"""Pick-and-place moves of a Delta robot: paper 003's inverted U, retimed and bent within a tolerance.

A move of the family takes the platform from the inverted U's start to its end in the same time T:

    P(t) = U(T sigma(tau)) + dP(tau),   tau = t / T,
    sigma(tau) = tau + sum_k a_k sin(k pi tau),                            k = 1 .. retiming_terms,
    dP(tau) = 1 mm * w(tau) sum_j b_j (2 tau - 1)^j,  w = 64 tau^3 (1 - tau)^3,   j = 0 .. correction_terms - 1,

U the baseline inverted U (:func:`flexfmu.control.references.inverted_u_expression`, septic blends) and
each b_j a vector of three (X, Y, Z). sigma retimes the baseline: sigma(0) = 0 and sigma(1) = 1, and the
platform runs along the same curve, forwards wherever sigma' > 0. dP bends the curve by a correction
that vanishes with its first two derivatives at both ends (|w| <= 1, so |dP| is about |b| mm), so the
move still starts and ends at rest at the same points. All coefficients zero give the baseline. The
motor reference is the inverse kinematics of P; its rates and accelerations come from automatic
differentiation in tau. The coefficients are ordered a_1..a_Ka, then b for X, for Y and for Z.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.control.references import inverted_u_expression
from flexfmu.dynamics.delta.kinematics import Dimensions, inverse_kinematics

CORRECTION_UNIT = 1e-3  # m per correction coefficient: the coefficients of both kinds are of order one


class PickPlaceMoves:
    """The family of moves above for one inverted U on one Delta robot.

    Parameters
    ----------
    start, travel : sequence of 3 floats
        The inverted U's start and travel, m (base frame, Z down).
    times : sequence of 5 floats
        Its set-point times (t0 = 0, t1, t2, t3, T), s.
    dims : Dimensions
        The robot's dimensions (numbers), for the inverse kinematics.
    retiming_terms, correction_terms : int
        How many sine terms retime the path and how many polynomial terms bend it (per axis).
    """

    def __init__(self, start, travel, times, dims: Dimensions, retiming_terms: int = 8, correction_terms: int = 6):
        if times[0] != 0:
            raise ValueError(f"the inverted U must start at t = 0, got times {list(times)}")
        self.start, self.travel, self.times = np.asarray(start, float), np.asarray(travel, float), tuple(times)
        self.move_time = float(times[-1])
        self.retiming_terms, self.correction_terms = retiming_terms, correction_terms
        self.size = retiming_terms + 3 * correction_terms
        tau, c = ca.SX.sym("tau"), ca.SX.sym("c", self.size)
        a, b = c[:retiming_terms], ca.reshape(c[retiming_terms:], correction_terms, 3)
        sigma = tau + sum(a[k] * ca.sin((k + 1) * np.pi * tau) for k in range(retiming_terms))
        window = 64 * (tau * (1 - tau)) ** 3
        powers = ca.vertcat(*[(2 * tau - 1) ** j for j in range(correction_terms)])
        correction = CORRECTION_UNIT * window * ca.mtimes(b.T, powers)
        platform = inverted_u_expression(self.move_time * sigma, start, travel, times) + correction
        theta = inverse_kinematics(platform, dims)
        rate = ca.jacobian(theta, tau) / self.move_time
        accel = ca.jacobian(rate, tau) / self.move_time
        reference = ca.vertcat(theta, rate, accel)
        self._reference = ca.Function("pick_place", [tau, c], [reference, platform])
        self._shape = ca.Function("shape", [tau, c], [ca.jacobian(sigma, tau), correction])
        self._accel_jacobian = ca.Function("accel_jacobian", [tau, c], [accel, ca.jacobian(accel, c)])
        self._reference_jacobian = ca.Function("reference_jacobian", [tau, c], [ca.jacobian(reference, c)])
        self.goal_angles = np.array(self._reference(1.0, np.zeros(self.size))[0]).ravel()[:3]

    def references(self, coefficients, time) -> np.ndarray:
        """R: [theta_d; dtheta_d; ddtheta_d] of the move ``coefficients`` at the sample ``time``s, one column
        each; from the move time on, the goal at rest."""
        time = np.asarray(time, float)
        moving = time < self.move_time - 1e-12
        R = np.tile(np.concatenate([self.goal_angles, np.zeros(6)])[:, None], (1, len(time)))
        if moving.any():
            sampled = self._reference.map(int(moving.sum()))
            R[:, moving] = np.array(sampled(time[moving] / self.move_time, np.asarray(coefficients, float))[0])
        return R

    def reference_derivatives(self, coefficients, time) -> np.ndarray:
        """dR/dc: the derivatives of :meth:`references` in the ``coefficients`` at the sample ``time``s, one
        (9 x size) block per time (zero from the move time on)."""
        time = np.asarray(time, float)
        moving = time < self.move_time - 1e-12
        out = np.zeros((len(time), 9, self.size))
        if moving.any():
            sampled = self._reference_jacobian.map(int(moving.sum()))
            blocks = np.array(sampled(time[moving] / self.move_time, np.asarray(coefficients, float)))
            out[moving] = blocks.reshape(9, -1, self.size).transpose(1, 0, 2)
        return out

    def reference(self, coefficients):
        """t -> (theta_d, dtheta_d, ddtheta_d) of the move ``coefficients``, for a sampled controller."""
        coefficients = np.asarray(coefficients, float)

        def at(t: float):
            column = self.references(coefficients, [t])[:, 0]
            return column[:3], column[3:6], column[6:]

        return at

    def platform_path(self, coefficients, time) -> np.ndarray:
        """The commanded platform centre (m, 3 x len(time)) of the move ``coefficients`` at the times ``time``
        (s; held at the ends outside the move)."""
        tau = np.clip(np.asarray(time, float) / self.move_time, 0.0, 1.0)
        return np.array(self._reference.map(len(tau))(tau, np.asarray(coefficients, float))[1])

    def shape(self, coefficients, tau) -> tuple[np.ndarray, np.ndarray]:
        """(sigma'(tau), dP(tau) in m, 3 x len(tau)) of the move ``coefficients`` at the normalised times
        ``tau``: the retiming's slope (the platform runs forwards along the curve where it is positive) and
        the bend. Both are linear in the coefficients."""
        slope, correction = self._shape.map(len(tau))(np.asarray(tau, float), np.asarray(coefficients, float))
        return np.array(slope).ravel(), np.array(correction)

    def accelerations(self, coefficients, tau) -> tuple[np.ndarray, np.ndarray]:
        """The motor accelerations (rad/s^2, flat over the three motors and then the times ``tau``) of the move
        ``coefficients`` and their Jacobian with respect to the coefficients."""
        tau = np.asarray(tau, float)
        accel, jacobian = self._accel_jacobian.map(len(tau))(tau, np.asarray(coefficients, float))
        jacobian = np.array(jacobian).reshape(3, len(tau), self.size).transpose(1, 0, 2)
        return np.array(accel).ravel(order="F"), jacobian.reshape(3 * len(tau), self.size)
