"""Discrete-time control laws as casadi.Functions (y, r, k) -> tau.

A law reads the named plant outputs ``measured`` (y), the reference sample
r = [theta_d; dtheta_d; ddtheta_d] (one entry per joint each) and its gains k,
and returns the joint torques. It is evaluated once per controller sample and
held (sample and hold), in the harness, in the FMU runs and inside the
closed-loop graph that tuning differentiates, so all of them apply one law.

The model-based laws are designed on the arm's *rigid* model at nominal
parameters: modal coordinates zero and stiff joints (the rotor follows the
link, its inertia added), q = S theta. Its numbers are baked into the law; the
plant's parameters stay free, as a real controller's model would.

- ``joint_pd``: tau = kp e + kd de, e = theta_d - theta.
- ``pd_gravity``: the same plus the rigid model's gravity torque g(theta).
- ``computed_torque``: tau = M_r(theta) (ddtheta_d + kd de + kp e) + h_r(theta, dtheta).
- ``composite``: paper 004's singular-perturbation controller: the computed
  torque above (slow part) plus kf times a discrete LQR of the fast subsystem
  (joint-spring deflections and modal coordinates), fed back on the fast
  state's deviation from its quasi-steady value.

Each law is a row of :data:`LAWS`: its keys (gains with their defaults and
options, checked where a scenario loads), which of them are gains, what an
arm must offer (from the Model's metadata) and its builder. Adding a law:
its function here and one row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np
import scipy.linalg

from flexfmu.codegen.buffered import BufferedFunction
from flexfmu.dynamics import metadata as md
from flexfmu.errors import FlexfmuError
from flexfmu.spec.keys import Key, check_row, joint_count_problems, read_keys

MEASURES = tuple(md.ENCODERS)
MAX_GAIN = 1e9  # the largest gain a scenario may give: beyond it a sampled loop is a numerical accident


class ControlLawError(FlexfmuError, ValueError):
    """A law that cannot be built for this arm; the message says why."""


@dataclass(frozen=True)
class ControlLaw:
    """A control law and what it needs.

    Attributes
    ----------
    kind : str
    measured : list of str
        Output names fed back, in y order.
    gains : dict
        Gain names and default values, in k order.
    function : casadi.Function
        (y, r, k) -> tau.
    torques : list of str
        The plant inputs tau drives, in order.
    """

    kind: str
    measured: list[str]
    gains: dict[str, float]
    function: ca.Function
    torques: list[str]

    def __call__(self, y, r, k) -> np.ndarray:
        return self._numeric(y, r, k)

    @cached_property
    def _numeric(self) -> BufferedFunction:
        return BufferedFunction(self.function)

    def gain_vector(self, overrides: dict[str, float] | None = None) -> np.ndarray:
        """k at the default gains with the entries named in ``overrides`` replaced."""
        unknown = set(overrides or {}) - set(self.gains)
        if unknown:
            raise ControlLawError(f"{self.kind} has no gain {', '.join(sorted(unknown))}; "
                                  f"its gains: {', '.join(self.gains)}")
        return np.array([float((overrides or {}).get(name, value)) for name, value in self.gains.items()])


def rigid_selection(model) -> np.ndarray:
    """S with q = S theta: joint angles to coordinates, rotors following their
    joint, modal coordinates zero, for the coordinate layout of ``model``."""
    S = np.zeros((len(model.layout), len(model.inputs)))
    for k, coordinate in enumerate(model.layout):
        if coordinate.kind in ("joint", "rotor"):
            S[k, coordinate.link - 1] = 1.0
    return S


def rigid_terms(model) -> ca.Function:
    """(theta, dtheta) -> (M_r, h_r) of the rigid model of ``model`` at nominal parameters."""
    nj = len(model.inputs)
    theta, rate = ca.SX.sym("theta", nj), ca.SX.sym("rate", nj)
    S, p = rigid_selection(model), model.nominal_parameters
    q, qd = ca.mtimes(S, theta), ca.mtimes(S, rate)
    M_r = ca.mtimes([S.T, model.mass_matrix(q, p), S])
    h_r = ca.mtimes(S.T, model.bias(q, qd, p))
    return ca.Function("rigid_terms", [theta, rate], [M_r, h_r])


def rigid_computed_torque(model, reference, times) -> np.ndarray:
    """The rigid model's computed torque M_r(theta_d) ddtheta_d + h_r(theta_d, dtheta_d) of ``reference``
    (t -> (theta_d, dtheta_d, ddtheta_d)) at each of ``times``, one row each: the feedforward of a move on the
    arm of ``model`` taken as rigid."""
    terms, rows = rigid_terms(model), []
    for t in times:
        theta, rate, acceleration = reference(t)
        M_r, h_r = (np.array(v) for v in terms(theta, rate))
        rows.append(M_r @ acceleration + h_r.ravel())
    return np.array(rows)


def _encoder_names(model, measure: str) -> list[str]:
    """The angles, then the rates, of the ``measure`` encoders of every joint."""
    if measure not in MEASURES:
        raise ControlLawError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    angles, rates = (model.outputs_of(group) for group in md.ENCODERS[measure])
    if len(angles) != len(model.inputs):
        raise ControlLawError(f"measure = {measure!r} needs a {measure} encoder on every joint; arm "
                              f"{model.arm.name!r} has {len(angles)} for {len(model.inputs)} joints "
                              f"(motor encoders exist on flexible joints only)")
    return angles + rates


def _symbols(nj: int, ny: int, nk: int):
    y, r, k = ca.SX.sym("y", ny), ca.SX.sym("r", 3 * nj), ca.SX.sym("k", nk)
    return y, r, k, r[:nj], r[nj:2 * nj], r[2 * nj:]


def _law(model, kind, measured, gains, y, r, k, tau) -> ControlLaw:
    function = ca.Function(kind, [y, r, k], [tau], ["y", "r", "k"], ["tau"])
    return ControlLaw(kind, measured, gains, function, list(model.inputs))


def joint_pd(model, kp: float = 1.0, kd: float = 0.1, measure: str = "joint") -> ControlLaw:
    """tau = kp (theta_d - theta) + kd (dtheta_d - dtheta) on every joint.

    Parameters
    ----------
    model : Model
    kp, kd : float
        Default position and rate gains (the law's gains ``kp``, ``kd``, overridable per run).
    measure : str
        Which encoders are fed back: ``"joint"`` (link side) or ``"motor"`` (rotor side, flexible joints only).

    Raises
    ------
    ControlLawError
        If some joint has no encoder of that kind.
    """
    nj = len(model.inputs)
    measured = _encoder_names(model, measure)
    y, r, k, theta_d, rate_d, _ = _symbols(nj, 2 * nj, 2)
    tau = k[0] * (theta_d - y[:nj]) + k[1] * (rate_d - y[nj:])
    return _law(model, "joint_pd", measured, {"kp": kp, "kd": kd}, y, r, k, tau)


def pd_gravity(model, kp: float = 1.0, kd: float = 0.1, measure: str = "joint") -> ControlLaw:
    """Joint PD plus the rigid model's gravity torque at the measured angles.

    Parameters
    ----------
    model : Model
    kp, kd : float
        Default position and rate gains (the law's gains ``kp``, ``kd``, overridable per run).
    measure : str
        Which encoders are fed back: ``"joint"`` (link side) or ``"motor"`` (rotor side, flexible joints only).

    Raises
    ------
    ControlLawError
        If some joint has no encoder of that kind.
    """
    nj = len(model.inputs)
    measured = _encoder_names(model, measure)
    y, r, k, theta_d, rate_d, _ = _symbols(nj, 2 * nj, 2)
    _, gravity = rigid_terms(model)(y[:nj], ca.SX.zeros(nj))
    tau = k[0] * (theta_d - y[:nj]) + k[1] * (rate_d - y[nj:]) + gravity
    return _law(model, "pd_gravity", measured, {"kp": kp, "kd": kd}, y, r, k, tau)


def _computed_torque(terms: ca.Function, theta, rate, theta_d, rate_d, accel_d, kp, kd):
    """Computed torque on the rigid model ``terms`` (see ``rigid_terms``)."""
    M_r, h_r = terms(theta, rate)
    return ca.mtimes(M_r, accel_d + kd * (rate_d - rate) + kp * (theta_d - theta)) + h_r


def computed_torque(model, kp: float = 36.0, kd: float = 12.0, measure: str = "joint") -> ControlLaw:
    """tau = M_r(theta) (ddtheta_d + kd e' + kp e) + h_r(theta, dtheta).

    Parameters
    ----------
    model : Model
    kp, kd : float
        Default position and rate gains (the law's gains ``kp``, ``kd``, overridable per run).
    measure : str
        Which encoders are fed back: ``"joint"`` (link side) or ``"motor"`` (rotor side, flexible joints only).

    Raises
    ------
    ControlLawError
        If some joint has no encoder of that kind.
    """
    nj = len(model.inputs)
    measured = _encoder_names(model, measure)
    y, r, k, theta_d, rate_d, accel_d = _symbols(nj, 2 * nj, 2)
    tau = _computed_torque(rigid_terms(model), y[:nj], y[nj:], theta_d, rate_d, accel_d, k[0], k[1])
    return _law(model, "computed_torque", measured, {"kp": kp, "kd": kd}, y, r, k, tau)


def composite(model, kp: float = 36.0, kd: float = 12.0, kf: float = 1.0, sample_step: float = 1e-3,
              design_pose=None, fast_effort: float = 0.01) -> ControlLaw:
    """Paper 004's composite controller: slow computed torque + fast LQR.

    With q = S theta + T z, the fast coordinates z are the joint-spring
    deflections (alpha - theta) and the modal coordinates. The slow part is
    computed torque on the link-side angles. On the slow manifold along the
    reference (z'' = 0, q = S theta_d, q'' = S ddtheta_d, tau_d its rigid
    computed torque) the fast coordinates sit at
    z_bar = K_zz^-1 T'(B tau_d - M S ddtheta_d - h(S theta_d, S dtheta_d));
    the fast part is tau_f = -kf K_lqr [z - z_bar; z'], with K_lqr the
    discrete LQR (zero-order hold at ``sample_step``) of the fast subsystem
    z'' = -H_zz (K_zz z + D_zz z') + (H T'B)_z tau_f (H = (T'MT)^-1, slow
    part frozen) at ``design_pose``, weighting its elastic plus kinetic
    energy against ``fast_effort`` |tau_f|^2 (units: J against (N m)^2).
    The law measures the whole state: joint, motor and modal outputs.

    Parameters
    ----------
    model : Model
        An arm with at least one flexible link or joint.
    kp, kd : float
        Default gains of the slow computed-torque part.
    kf : float
        Default scale of the fast LQR feedback (0 turns it off).
    sample_step : float
        The controller's sample step, s, for the LQR's discretisation.
    design_pose : array, optional
        Joint angles at which the fast subsystem is linearised (zero when None).
    fast_effort : float
        The LQR's weight on |tau_f|^2.

    Raises
    ------
    ControlLawError
        If the arm is rigid or its outputs do not determine its state.
    """
    nj, n = len(model.inputs), len(model.coordinates)
    S = rigid_selection(model)
    T_z = np.eye(n)[:, [k for k, c in enumerate(model.layout) if c.kind != "joint"]]
    if T_z.shape[1] == 0:
        raise ControlLawError("composite control needs flexible links or joints; this arm is rigid")
    measured, C = _state_measurement(model)
    T = np.hstack([S, T_z])  # q = T [theta; z]; invertible
    p = model.nominal_parameters
    K, D = (np.array(m) for m in model.structure_matrices(p))
    K_zz, D_zz = T_z.T @ K @ T_z, T_z.T @ D @ T_z

    pose = np.zeros(nj) if design_pose is None else np.asarray(design_pose, float)
    M0 = T.T @ np.array(model.mass_matrix(S @ pose, p)) @ T
    M0_inv = np.linalg.inv(M0)
    H = M0_inv[nj:, nj:]
    B_z = (M0_inv @ T.T @ np.array(model.input_matrix(S @ pose, p)))[nj:]
    nz = T_z.shape[1]
    A_f = np.block([[np.zeros((nz, nz)), np.eye(nz)], [-H @ K_zz, -H @ D_zz]])
    B_f = np.vstack([np.zeros((nz, nj)), B_z])
    A_d, B_d = _zero_order_hold(A_f, B_f, sample_step)
    Q = scipy.linalg.block_diag(K_zz, M0[nj:, nj:])
    P = scipy.linalg.solve_discrete_are(A_d, B_d, Q, fast_effort * np.eye(nj))
    K_lqr = np.linalg.solve(fast_effort * np.eye(nj) + B_d.T @ P @ B_d, B_d.T @ P @ A_d)

    y, r, k, theta_d, rate_d, accel_d = _symbols(nj, len(measured), 3)
    x = ca.mtimes(np.linalg.pinv(C), y)
    q, qd = x[:n], x[n:]
    links = model.coordinates_of("joint")
    theta, rate = q[links], qd[links]
    terms = rigid_terms(model)
    tau_s = _computed_torque(terms, theta, rate, theta_d, rate_d, accel_d, k[0], k[1])
    # the quasi-steady fast state along the reference (not the measured
    # slow state: through z_bar the large fast gain would feed back the
    # link angles non-collocated, which destabilises the loop)
    q_d, qd_d = ca.mtimes(S, theta_d), ca.mtimes(S, rate_d)
    tau_d = _computed_torque(terms, theta_d, rate_d, theta_d, rate_d, accel_d, 0, 0)
    static = ca.mtimes(model.input_matrix(q_d, p), tau_d) - ca.mtimes(model.mass_matrix(q_d, p), ca.mtimes(S, accel_d)) \
        - model.bias(q_d, qd_d, p)
    z_bar = ca.solve(ca.DM(K_zz), ca.mtimes(T_z.T, static))
    T_inv = np.linalg.inv(T)[nj:]
    z, z_rate = ca.mtimes(T_inv, q), ca.mtimes(T_inv, qd)
    tau = tau_s - k[2] * ca.mtimes(K_lqr, ca.vertcat(z - z_bar, z_rate))
    return _law(model, "composite", measured, {"kp": kp, "kd": kd, "kf": kf}, y, r, k, tau)


def _zero_order_hold(A: np.ndarray, B: np.ndarray, h: float):
    """Discretise x' = A x + B u with u held over h: (e^{Ah}, int_0^h e^{As} ds B)."""
    n, m = B.shape
    block = scipy.linalg.expm(np.block([[A, B], [np.zeros((m, n + m))]]) * h)
    return block[:n, :n], block[:n, n:]


def _state_measurement(model) -> tuple[list[str], np.ndarray]:
    """The outputs that measure the whole state, and C with y = C x.

    Joint encoders, rotor encoders, modal coordinates and their rates are
    linear in x (a joint encoder of a chord-framed link reads theta plus a
    combination of the modes), so x = pinv(C) y exactly when C has full
    column rank. Those of a quasi-static coordinate (its static equilibrium,
    which follows the accelerations) are not measurements of x and are left
    out.
    """
    n = len(model.coordinates)
    groups = (md.JOINT_ANGLE, md.JOINT_RATE, md.MOTOR_ANGLE, md.MOTOR_RATE, md.MODE, md.MODE_RATE)
    x, qdd = ca.SX.sym("x", 2 * n), ca.SX.sym("qdd", n)
    every = model.kinematic_outputs(x[:n], x[n:], qdd, model.nominal_parameters)
    rows = [k for k, s in enumerate(model.output_table)
            if s.group in groups and not ca.depends_on(every[k], qdd)]
    names = [model.output_names[k] for k in rows]
    if len(names) < 2 * n:
        raise ControlLawError(f"the joint, motor and modal outputs ({len(names)}) are fewer than the state's "
                              f"{2 * n} entries")
    y = ca.substitute(every[rows], qdd, ca.SX.zeros(n))
    C = np.array(ca.Function("C", [x], [ca.jacobian(y, x)])(np.zeros(2 * n)))
    if np.linalg.matrix_rank(C) < 2 * n:
        raise ControlLawError("the joint, motor and modal outputs do not determine this arm's state")
    return names, C


@dataclass(frozen=True)
class LawKind:
    """One control law a scenario's ``[controller]`` may name.

    Attributes
    ----------
    name : str
        The controller ``kind``.
    summary : str
        One line for docs and messages.
    keys : tuple of Key
        The keys of its ``[controller]`` table besides ``kind`` and ``reference`` (gains and options, with
        their defaults).
    gains : tuple of str
        Which of ``keys`` are gains: entries of k, overridable per run and tunable.
    position_gains : tuple of str
        The gains that feed the joint angles back: tuning keeps them away from zero (a loop without position
        feedback does not hold the arm where it was sent).
    fits : callable
        (model, values) -> None when the law can be built for ``model`` with the checked ``values``, else why
        not (one phrase), from the Model's metadata alone.
    build : callable
        (model, values, sample_step) -> ControlLaw from the checked ``values`` ({key: value}) and the
        controller's sample step, s.
    """

    name: str
    summary: str
    keys: tuple[Key, ...]
    gains: tuple[str, ...]
    position_gains: tuple[str, ...]
    fits: Callable
    build: Callable

    def __post_init__(self):
        check_row("LAWS", self.name, self.keys, fits=self.fits, build=self.build)
        missing = set(self.gains + self.position_gains) - {key.name for key in self.keys}
        if missing:
            raise TypeError(f"LAWS row {self.name!r}: gains {sorted(missing)} are not among its keys")


def _gain(name: str, default: float, help: str, unit: str) -> Key:
    return Key(name, "number", help, unit, required=False, default=default, ge=0, le=MAX_GAIN)


def _measure() -> Key:
    return Key("measure", "string", "the encoders fed back: link side (joint) or rotor side (motor, flexible "
               "joints only)", required=False, default="joint", choices=MEASURES)


def _encoders_fit(model, values) -> str | None:
    try:
        _encoder_names(model, values["measure"])
    except ControlLawError as error:
        return str(error)
    return None


def _composite_fits(model, values) -> str | None:
    if all(coordinate.kind == "joint" for coordinate in model.layout):
        return f"composite control needs flexible links or joints; arm {model.arm.name!r} is rigid"
    try:
        _state_measurement(model)
    except ControlLawError as error:
        return f"composite control measures the whole state; on arm {model.arm.name!r} {error}"
    return None


def _pd_keys(kp: float, kd: float, position_unit: str, rate_unit: str) -> tuple[Key, ...]:
    return (_gain("kp", kp, "position gain", position_unit), _gain("kd", kd, "rate gain", rate_unit), _measure())


JOINT_PD = LawKind(
    "joint_pd", "tau = kp e + kd e' on every joint, e = theta_d - theta",
    _pd_keys(1.0, 0.1, "N.m/rad", "N.m.s/rad"), ("kp", "kd"), ("kp",), _encoders_fit,
    lambda model, values, step: joint_pd(model, **values))
PD_GRAVITY = LawKind(
    "pd_gravity", "joint PD plus the rigid model's gravity torque at the measured angles",
    _pd_keys(1.0, 0.1, "N.m/rad", "N.m.s/rad"), ("kp", "kd"), ("kp",), _encoders_fit,
    lambda model, values, step: pd_gravity(model, **values))
COMPUTED_TORQUE = LawKind(
    "computed_torque", "tau = M_r (ddtheta_d + kd e' + kp e) + h_r on the rigid model",
    _pd_keys(36.0, 12.0, "1/s^2", "1/s"), ("kp", "kd"), ("kp",), _encoders_fit,
    lambda model, values, step: computed_torque(model, **values))
COMPOSITE = LawKind(
    "composite", "paper 004: computed torque on the link angles plus kf times a discrete LQR of the fast "
    "subsystem (joint springs and modes)",
    (_gain("kp", 36.0, "position gain of the slow computed torque", "1/s^2"),
     _gain("kd", 12.0, "rate gain of the slow computed torque", "1/s"),
     _gain("kf", 1.0, "scale of the fast LQR feedback (0: off)", "1"),
     Key("design_pose", "numbers", "joint angles where the fast subsystem is linearised (default: zero)", "rad",
         required=False, default=None, per_joint=True),
     Key("fast_effort", "number", "the LQR's weight on |tau_f|^2 against the fast elastic and kinetic energy",
         "J/(N.m)^2", required=False, default=0.01, gt=0)),
    ("kp", "kd", "kf"), ("kp",), _composite_fits,
    lambda model, values, step: composite(model, sample_step=step, **values))

LAWS: dict[str, LawKind] = {row.name: row for row in (JOINT_PD, PD_GRAVITY, COMPUTED_TORQUE, COMPOSITE)}


def build_law(model, kind: str, sample_step: float = 1e-3, **options) -> ControlLaw:
    """The law named ``kind`` (a row of :data:`LAWS`) for ``model`` with ``options`` (its keys: gains as
    defaults), sampled at ``sample_step`` s; every joint of the arm must be torque-driven.

    Raises
    ------
    ControlLawError
        For an unknown kind, options its row does not take or out of range, or an arm the law does not fit.
    """
    if kind not in LAWS:
        raise ControlLawError(f"controller kind must be one of {', '.join(LAWS)}, got {kind!r}")
    prescribed = model.inputs_of(md.PRESCRIBED_ANGLE)
    if prescribed:
        raise ControlLawError(f"{kind}: control laws drive joint torques; arm {model.arm.name!r} has prescribed "
                              f"joints ({', '.join(prescribed)})")
    row, problems = LAWS[kind], []
    values = read_keys(problems, options, "", row.keys)
    problems += joint_count_problems(values, "", row.keys, len(model.inputs_of(md.TORQUE)), model.arm.name)
    why = None if problems else row.fits(model, values)
    if problems or why:
        raise ControlLawError(f"{kind}: " + "; ".join(problems or [why]))
    return row.build(model, values, sample_step)
