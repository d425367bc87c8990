"""A scenario's sampled closed loop as one discrete-time system: what the closed-loop FMU compiles.

The plant (the arm's compiled dynamics under its FMU's fixed-step
integrator) and the scenario's controller (a control law on a reference,
held torques, a prescribed motion) run together, one controller sample per
step, as the harness runs them in Python (``flexfmu.harness.running.runner``):

    u_k = controller(t_k, y(x_k), a),   x_k+1 = step^(T/h)(x_k, u_k),   t_k+1 = t_k + T

The state is x = [q; qd; d]: the plant's states, then discrete states d
that change only from sample to sample: the clock t_k and the running
figures of the run. A sweep point needs numbers, not samples, so the figures
a sweep reports are folded in sample by sample in the same compiled step:
the cost's terms (``flexfmu.control.cost``), the peak torques and link
deflections, the tracking error and the end effector's distance from its
desired path (over the run and after the start transient, largest and RMS),
and the validity envelope (each quantity's peak as a fraction of its limit,
and when the run first left it). An output shows a figure up to the current
sample, so at t_K it covers samples 0..K, as the harness's figures of a
recorded run do (``flexfmu.harness.reports.figures``, the independent check).

Its parameters are the plant's, then the controller's (``controller.kp``,
``reference.radius``, ``motion.w0``, see ``flexfmu.control.controllers``),
then ``figures.settle_time``; its outputs the plant's (at the torque the
controller applies from now on), the applied inputs, the reference angles
and the figures. The Functions follow the C contract (``ffmu_model.h``,
pc = [p; c(p)]): the step is one controller sample; the derivatives are the
plant's under the torque the controller would apply now (the discrete
states' are zero). The closed-loop FMU offers co-simulation only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np

from flexfmu.control.closed_loop import plant_step_size
from flexfmu.control.cost import TERMS, end_effector
from flexfmu.control.run_figures import ENVELOPE_LEFT, SETTLE_TIME, Figure, term_figure
from flexfmu.control.laws import rigid_selection
from flexfmu.dynamics.metadata import DEFLECTION, JOINT_ANGLE, Parameter, Signal
from flexfmu.integrate import step_function

CLOCK = "loop.clock"
FIGURE = "figure"  # the output group of the figures
APPLIED, REFERENCE = "applied_input", "reference_angle"  # output groups of the applied inputs and the reference


@dataclass(frozen=True)
class DiscreteState:
    """One entry of d: name, unit, description and start value."""

    name: str
    unit: str
    description: str
    start: float


class LoopSystem:
    """The closed loop of ``model`` under ``controller`` sampled every ``sample_step`` s.

    Parameters
    ----------
    model : Model
    controller : HeldInputs, SampledController or PrescribedInputs
        The scenario's controller (``Scenario.build_controller``); its references and motions must be
        Profiles.
    sample_step : float
        The controller's sample step T, s.
    start : array
        x0 = [q0; qd0] of the plant (the scenario's initial state): the start values of the FMU's states.
    integrator, internal_step :
        The plant's fixed-step scheme and step, as for ``flexfmu export`` (None: the FMU's default).
    """

    def __init__(self, model, controller, sample_step: float, start, integrator: str = "rk4",
                 internal_step: float | None = None):
        self.model, self.controller, self.sample_step = model, controller, float(sample_step)
        self.integrator = integrator
        self.internal_step = plant_step_size(model, integrator, self.sample_step, internal_step)
        self.substeps = int(round(self.sample_step / self.internal_step))
        self.start = np.asarray(start, float)
        self.closed = not controller.open_loop
        self.figures = self._figures()
        self.discrete = [DiscreteState(CLOCK, "s", "time of the current sample since the run began", 0.0)]
        for figure in self.figures:
            start_value = -1.0 if figure.fold == "first" else 0.0
            self.discrete.append(DiscreteState(f"{figure.name}.before", figure.unit,
                                               f"{figure.label}: over the samples before the current one",
                                               start_value))
            if figure.fold == "rms":
                self.discrete.append(DiscreteState(f"{figure.name}.entries", "1", f"{figure.label}: entries "
                                                   "summed before the current sample", 0.0))

    # ------------------------------------------------------------------ metadata (as a Model's)

    @property
    def arm(self):
        return self.model.arm

    @property
    def states(self) -> list[str]:
        """The plant's state coordinates (x = [q; qd; d] over these and :attr:`discrete`)."""
        return self.model.states

    @property
    def state_layout(self):
        return self.model.state_layout

    @property
    def start_state(self) -> np.ndarray:
        """The plant's x0 = [q0; qd0]."""
        return self.start

    @property
    def start_inputs(self) -> np.ndarray:
        """None: the loop is closed (its controller applies the inputs)."""
        return np.zeros(0)

    @property
    def reduction(self):
        """How the plant's flexible bodies were reduced (the Model's ReductionSummary, or None)."""
        return self.model.reduction

    @property
    def input_table(self) -> list[Signal]:
        """None: the loop is closed."""
        return []

    @property
    def inputs(self) -> list[str]:
        return []

    @property
    def parameters(self) -> dict[str, float]:
        """Every parameter's start value by name."""
        return {row.name: row.value for row in self.parameter_table}

    @property
    def controller_parameters(self) -> dict[str, float]:
        """The controller's parameters by name (gains, reference or motion numbers), in a's order."""
        return self.controller.parameters

    @cached_property
    def parameter_table(self) -> list[Parameter]:
        """The plant's parameters, then the controller's, then the settle time of the figures."""
        rows = [Parameter(name, value, "", f"{name.partition('.')[0]} parameter of the scenario's controller")
                for name, value in self.controller_parameters.items()]
        rows.append(Parameter(SETTLE_TIME, 0.0, "s", "the figures marked 'after the start transient' count the "
                                                     "samples from this time on"))
        return list(self.model.parameter_table) + rows

    @cached_property
    def output_table(self) -> list[Signal]:
        """The plant's outputs, the applied inputs, the reference angles (closed loop) and the figures."""
        model = self.model
        rows = list(model.output_table)
        rows += [Signal(s.name, s.unit, APPLIED, f"{s.description}, as the controller applies it", s.link)
                 for s in model.input_table]
        if self.closed:
            rows += [Signal(f"reference.{name}", "rad", REFERENCE, f"the reference of {name}", k + 1)
                     for k, name in enumerate(self._joint_angles)]
        rows += [Signal(f.name, f.unit, FIGURE, f.label) for f in self.figures]
        return rows

    @property
    def output_names(self) -> list[str]:
        return [s.name for s in self.output_table]

    # ------------------------------------------------------------------ figures

    @property
    def _joint_angles(self) -> list[str]:
        return self.model.outputs_of(JOINT_ANGLE)

    @cached_property
    def _envelope(self) -> list[tuple[Signal, int]]:
        """The envelope quantities with the index of their limit in p."""
        index = {row.name: k for k, row in enumerate(self.model.parameter_table)}
        return [(s, index[s.limit]) for s in self.model.output_table if s.limit is not None]

    def _figures(self) -> list[Figure]:
        """The figures of this loop, in output order (see the module docstring)."""
        model = self.model
        units = {"tracking": ("rad2.s", "tracking [rad^2 s]"), "vibration": ("m2.s", "vibration [m^2 s]"),
                 "effort": ("", "effort [N^2 m^2 s]")}
        figures = [Figure(term_figure(term), *units[term], "sum") for term in TERMS
                   if term != "tracking" or self.closed]
        figures += [Figure(f"figure.peak.{s.name}", s.unit, f"largest {s.name} magnitude [{s.unit}]", "max")
                    for s in model.input_table]
        figures += [Figure(f"figure.peak.{name}", "m", f"largest {name} magnitude [m]", "max")
                    for name in model.outputs_of(DEFLECTION)]
        if self.closed:
            joints = len(self._joint_angles)
            figures += [
                Figure("figure.tracking_error.peak", "rad", "largest joint tracking error [rad]", "max"),
                Figure("figure.tracking_error.settled_peak", "rad", "largest joint tracking error, {settled} [rad]",
                       "max", settled=True),
                Figure("figure.tracking_error.settled_rms", "rad", "RMS joint tracking error, {settled} [rad]",
                       "rms", settled=True, count=joints),
                Figure("figure.path_distance.settled_peak", "m",
                       "largest tip distance from the desired path, {settled} [m]", "max", settled=True),
                Figure("figure.path_distance.settled_rms", "m",
                       "RMS tip distance from the desired path, {settled} [m]", "rms", settled=True),
            ]
        if self._envelope:
            figures += [Figure(f"figure.envelope.{s.name}", "1", f"envelope: largest {s.name} / {s.limit}", "max")
                        for s, _ in self._envelope]
            figures.append(Figure("figure.envelope.left_at", "s", ENVELOPE_LEFT, "first"))
        return figures

    def _sample_values(self, signals: dict, u, theta_d, p) -> list:
        """Each figure's value at one sample (before its window applies), in :attr:`figures` order."""
        T = self.sample_step
        values = {term_figure("vibration"): T * ca.sumsqr(signals["deflections"]),
                  term_figure("effort"): T * ca.sumsqr(u)}
        for k, s in enumerate(self.model.input_table):
            values[f"figure.peak.{s.name}"] = ca.fabs(u[k])
        for k, name in enumerate(self.model.outputs_of(DEFLECTION)):
            values[f"figure.peak.{name}"] = ca.fabs(signals["deflections"][k])
        if self.closed:
            error = theta_d - signals["joints"]
            distance = ca.norm_2(signals["end_effector"] - self._desired_end_effector(theta_d))
            values |= {term_figure("tracking"): T * ca.sumsqr(error),
                       "figure.tracking_error.peak": ca.mmax(ca.fabs(error)),
                       "figure.tracking_error.settled_peak": ca.mmax(ca.fabs(error)),
                       "figure.tracking_error.settled_rms": ca.sumsqr(error),
                       "figure.path_distance.settled_peak": distance,
                       "figure.path_distance.settled_rms": distance**2}
        fractions = [ca.fabs(signals["envelope"][k]) / p[limit] for k, (_, limit) in enumerate(self._envelope)]
        for (s, _), fraction in zip(self._envelope, fractions):
            values[f"figure.envelope.{s.name}"] = fraction
        if fractions:
            values["figure.envelope.left_at"] = ca.mmax(ca.vertcat(*fractions)) - 1.0
        return [values[f.name] for f in self.figures]

    def _desired_end_effector(self, theta_d):
        """Where the rigid arm's end effector is with the joints at ``theta_d`` and the links straight (nominal
        parameters): the desired path (as :func:`flexfmu.harness.reports.figures.desired_tip`)."""
        model = self.model
        n = len(model.coordinates)
        q = ca.mtimes(rigid_selection(model), theta_d)
        y = model.kinematic_outputs(q, ca.DM.zeros(n), ca.DM.zeros(n), model.nominal_parameters)
        return y[[model.output_names.index(name) for name in end_effector(model)]]

    # ------------------------------------------------------------------ the sampled system

    @cached_property
    def _sizes(self) -> tuple[int, int, int, int]:
        """(nx of the plant, nd, np of the plant, na)."""
        return 2 * len(self.model.states), len(self.discrete), len(self.model.parameter_table), \
            len(self.controller_parameters)

    def _signals(self, x, u, p) -> dict:
        """What the controller measures and the figures read, by kind: kinematic outputs of the plant at the
        state ``x`` under the inputs ``u`` (which place prescribed joints) with the parameters ``p``."""
        model = self.model
        n = len(model.states)
        qdd = ca.SX.sym("qdd", len(model.coordinates))
        y = model.kinematic_outputs(*model.drives.coordinates(x[:n], x[n:], u), qdd, p)

        def rows(names):
            return ca.vertcat(*[y[model.output_names.index(name)] for name in names]) if names else ca.SX(0, 1)

        signals = {"measured": rows(self.controller.inputs), "deflections": rows(model.outputs_of(DEFLECTION)),
                   "joints": rows(self._joint_angles if self.closed else []),
                   "end_effector": rows(end_effector(model) if self.closed else []),
                   "envelope": rows([s.name for s, _ in self._envelope])}
        if ca.depends_on(ca.vertcat(*signals.values()), qdd):
            raise ValueError("the controller or a figure reads an acceleration; a sampled loop reads positions and "
                             "rates only")
        return signals

    @cached_property
    def _sample(self) -> ca.Function:
        """(x, d, p, a, settle) -> (u, d after the sample without the clock, figures up to the sample,
        theta_d): the controller and the figures at one sample, one expanded SX graph."""
        nx, nd, npar, na = self._sizes
        x, d, p, a, settle = (ca.SX.sym(name, size) for name, size in (("x", nx), ("d", nd), ("p", npar),
                                                                        ("a", na), ("settle", 1)))
        t = d[0]
        # laws run on arms without prescribed joints, whose outputs do not depend on u
        signals = self._signals(x, ca.SX.zeros(len(self.model.inputs)), p)
        u, theta_d = self.controller.expression(t, signals["measured"], a)
        if self.model.drives.prescribed:  # u places the prescribed joints: read the outputs again under it
            signals = self._signals(x, u, p)
        values = self._sample_values(signals, u, theta_d, p)
        states, figures = self._fold(d, values, t >= settle - 1e-9, t)
        theta_d = ca.SX(0, 1) if theta_d is None else theta_d
        return ca.Function("sample", [x, d, p, a, settle], [u, states, figures, theta_d],
                           ["x", "d", "p", "a", "settle"], ["u", "states", "figures", "theta_d"], {"cse": True})

    def _fold(self, d, values, settled, t):
        """(the figures' discrete states after this sample, the figures up to and with it)."""
        states, figures, k = [], [], 1
        for figure, value in zip(self.figures, values):
            weight = ca.if_else(settled, 1.0, 0.0) if figure.settled else 1.0
            before = d[k]
            if figure.fold == "rms":
                total, entries = before + weight * value, d[k + 1] + weight * figure.count
                states += [total, entries]
                figures.append(ca.sqrt(total / ca.fmax(entries, 1.0)))
            else:
                if figure.fold == "sum":
                    after = before + value
                elif figure.fold == "max":
                    after = ca.fmax(before, weight * value)
                else:  # first: the first time a sample's value is beyond 0
                    after = ca.if_else(ca.logic_and(before < 0, value > 0), t, before)
                states.append(after)
                figures.append(after)
            k += figure.states
        return ca.vertcat(*states), ca.vertcat(*figures)

    @cached_property
    def functions(self) -> dict[str, ca.Function]:
        """The C contract's Functions of the loop by role: ``constants`` (p) -> c, ``step`` (x, u, pc, h) ->
        x_next (one sample), ``derivatives`` (x, u, pc) -> xdot, ``outputs`` (x, u, pc) -> y, ``directional``
        (x, u, pc, dx, du) -> (dxdot, dy); u is empty (the loop has no inputs), pc = [p; a; settle; c]."""
        dynamics = self.model.compiled
        nx, nd, npar, na = self._sizes
        xs, none = ca.MX.sym("x", nx + nd), ca.MX.sym("u", 0)
        pcs, h = ca.MX.sym("pc", npar + na + 1 + dynamics.size), ca.MX.sym("h")
        p_all = ca.MX.sym("p", npar + na + 1)
        constants = ca.Function("constants", [p_all], [dynamics.constants(p_all[:npar])])

        x, d, p, a, settle = xs[:nx], xs[nx:], pcs[:npar], pcs[npar:npar + na], pcs[npar + na]
        pc = ca.vertcat(p, pcs[npar + na + 1:])
        u, states, figures, theta_d = self._sample(x, d, p, a, settle)
        plant_step = step_function(dynamics, self.integrator)
        x_next = x
        for _ in range(self.substeps):
            x_next = plant_step(x_next, u, pc, h / self.substeps)
        step = ca.Function("step", [xs, none, pcs, h], [ca.vertcat(x_next, d[0] + h, states)])

        xdot = ca.vertcat(dynamics.state_derivative(x, u, pc), ca.MX.zeros(nd))
        y = ca.vertcat(dynamics.outputs(x, u, pc), u, theta_d, figures)
        derivatives = ca.Function("derivatives", [xs, none, pcs], [xdot])
        outputs = ca.Function("outputs", [xs, none, pcs], [y])
        # forward derivatives: the plant's own (which never differentiate its factorisations) along the
        # state's seed and the controller's response to it
        dx, du = ca.MX.sym("dx", nx + nd), ca.MX.sym("du", 0)
        du_plant = ca.jtimes(u, xs, dx)
        dxdot, dy = dynamics.directional(x, u, pc, dx[:nx], du_plant)
        dsample = ca.jtimes(ca.vertcat(theta_d, figures), xs, dx)
        directional = ca.Function("directional", [xs, none, pcs, dx, du],
                                  [ca.vertcat(dxdot, ca.MX.zeros(nd)), ca.vertcat(dy, du_plant, dsample)])
        return {"constants": constants, "step": step, "derivatives": derivatives, "outputs": outputs,
                "directional": directional}
