"""The sampled closed loop discretised exactly as the exported FMU runs it.

At each sample t_k = k T the law reads the measured outputs of x_k and its
torque u_k is held while the plant advances by the FMU's own step Function
(the same integrator, internal step and straight-line right-hand side that
are compiled into the FMU), called T / h times:

    u_k = law(y(x_k), r(t_k), gains),   x_k+1 = step^(T/h)(x_k, u_k)

The whole run is one casadi graph (a mapaccum over the samples), so its cost
J = sum_k l(x_k, u_k) has an exact gradient, through the FMU's own
discretisation (RK4, or the implicit midpoint rule's fixed simplified Newton
iterations, differentiated as they are computed). The gradient is reverse
mode: a forward sweep that keeps the state before every internal step, then
a discrete adjoint sweep backwards over them,

    lambda_k = (dx_k+1/dx_k)' lambda_k+1 + dl_k/dx_k,
    dJ/dgains = sum_k (dx_k+1/dgains)' lambda_k+1 + dl_k/dgains,

built from two vector-Jacobian products generated once by reverse AD of
expanded SX graphs: the plant step's (with respect to state and input) and
the law's with its stage cost (with respect to state and gains), never the
plant's parameters. The forward sample, the taped sample and the sample's
adjoint are compiled to C (:mod:`flexfmu.codegen.native`) like the FMU's own
code; a gradient then costs two to three forward runs on the scenarios of
benchmarks/gradient.py, where CasADi's generic reverse mode through the
interpreted mapaccum costs 7 to 14.

Its stability is measured on the same sample map, linearised: at rest at
poses along the reference (the rigid configuration of the desired angles,
links straight, the reference held there), the eigenvalues of dx_k+1/dx_k
give each pose's slowest decay rate, -ln(largest |eigenvalue|) / T
(:meth:`ClosedLoop.decay_rate`). A loop without position feedback has an
eigenvalue 1 there (rate 0); an unstable one a negative rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np

from flexfmu.codegen.native import c_compiler, native_functions
from flexfmu.control.cost import TERMS, CostWeights, cost_signals, stage_terms, unit_weights, weight_vector
from flexfmu.control.laws import ControlLaw, rigid_selection
from flexfmu.integrate import default_internal_step, highest_frequency, step_function


@dataclass(frozen=True)
class ClosedLoopRun:
    """A run: ``states[k]`` = x_k and ``torques[k]`` = u_k at ``time[k]``,
    ``stage_costs[k]`` its term of J."""

    time: np.ndarray
    states: np.ndarray
    torques: np.ndarray
    stage_costs: np.ndarray

    @property
    def cost(self) -> float:
        return float(np.sum(self.stage_costs))


def plant_step_size(model, integrator: str, sample_step: float, internal_step: float | None = None) -> float:
    """The FMU's internal step for these settings (as ``flexfmu export`` picks it).

    Parameters
    ----------
    model : Model
    integrator : str
        The plant's fixed-step integrator (``"rk4"`` or ``"implicit"``).
    sample_step : float
        The controller's sample step T, s; the internal step divides it.
    internal_step : float, optional
        An explicit internal step, returned as is; None picks the default from the model's highest natural
        frequency (:func:`flexfmu.integrate.default_internal_step`).

    Returns
    -------
    float
        The internal step h, s.
    """
    if internal_step is not None:
        return internal_step
    return default_internal_step(highest_frequency(model), integrator, sample_step)


class ClosedLoop:
    """A scenario's closed loop over ``time`` (t_0 = 0, ..., t_K, equally spaced).

    Parameters
    ----------
    model : Model
    law : ControlLaw
    reference : callable
        t -> (theta_d, dtheta_d, ddtheta_d), sampled once at ``time``.
    time : array
        Sample times; their spacing is the controller's sample step.
    x0 : array
        Initial state [q; qd].
    weights : CostWeights
    integrator, internal_step :
        As for ``flexfmu export`` (None: the FMU's default step).
    native : bool
        Compile the sample and its adjoint to C (cached per machine); without a C compiler, or False, they
        run in CasADi's virtual machine, several times slower, with the same results.

    Attributes
    ----------
    run_function : casadi.Function
        (x0, R, gains, pc) -> (states, stage costs, torques) over all
        samples, R the reference samples: the graph itself, for other
        derivatives than the gain gradient (CasADi differentiates it only when ``native`` is False: compiled
        code has no derivatives).
    references : array
        R: [theta_d; dtheta_d; ddtheta_d] at each sample, one column each.
    """

    def __init__(self, model, law: ControlLaw, reference, time, x0, weights: CostWeights = CostWeights(),
                 integrator: str = "rk4", internal_step: float | None = None, native: bool = True):
        self.model, self.law, self.time = model, law, np.asarray(time, float)
        self.sample_step = float(self.time[1] - self.time[0])
        self.internal_step = plant_step_size(model, integrator, self.sample_step, internal_step)
        substeps = int(round(self.sample_step / self.internal_step))
        self.x0 = np.asarray(x0, float)
        self._dynamics = model.compiled
        self.references = np.array([np.concatenate(reference(t)) for t in self.time]).T
        self.weights = weights
        control, plant = self._stages(step_function(self._dynamics, integrator))
        self.native = native and c_compiler() is not None
        self._run, self._gradient = self._run_functions(control, plant, substeps, len(self.time), self.native)
        self._sample_stages = (control, plant, substeps)
        x0s, R, g, pc = (ca.MX.sym(name, self._run.size_in(k)) for k, name in enumerate(("x0", "R", "gains", "pc")))
        self.run_function = ca.Function("closed_loop", [x0s, R, g, pc],
                                        self._run(x0s, R, g, pc, weight_vector(weights)))

    def _stages(self, step):
        """The two parts of a sample, each one expanded SX graph: the law and its stage cost
        (x_k, r_k, gains, pc, w) -> (u_k, l_k), w the cost weights, and one plant step (x, u, pc) -> x_next of
        the internal step, taken ``substeps`` times per sample."""
        model, law = self.model, self.law
        n, nj, npar = len(model.coordinates), len(model.inputs), len(model.parameters)
        x, r = ca.SX.sym("x", 2 * n), ca.SX.sym("r", 3 * nj)
        gains, pc = ca.SX.sym("gains", len(law.gains)), ca.SX.sym("pc", npar + self._dynamics.size)
        qdd = ca.SX.sym("qdd", n)
        y = model.kinematic_outputs(x[:n], x[n:], qdd, pc[:npar])
        measured, signals = (ca.vertcat(*[y[model.output_names.index(name)] for name in names])
                             for names in (law.measured, cost_signals(model)))
        if ca.depends_on(ca.vertcat(measured, signals), qdd):
            raise ValueError("the law measures an acceleration; sampled laws read positions and rates only")
        u = law.function(measured, r, gains)
        w = ca.SX.sym("w", len(TERMS))
        term = ca.dot(w, stage_terms(model, self.sample_step)(signals, r[:nj], u))
        control = ca.Function("control", [x, r, gains, pc, w], [u, term]).expand()
        u_held = ca.SX.sym("u", nj)
        plant = ca.Function("plant_step", [x, u_held, pc], [step(x, u_held, pc, self.internal_step)]).expand()
        return control, plant

    def _run_functions(self, control: ca.Function, plant: ca.Function, substeps: int, count: int, native: bool):
        """The forward run and the adjoint gradient as Functions of (x0, R, gains, pc, w).

        A sample calls the plant step ``substeps`` times (MX calls of one SX graph, so generated C holds the
        step once). The gradient's forward sweep also keeps the state before every substep; its backward
        sweep goes through them with the plant step's vector-Jacobian product, then through the law's."""
        nx, nr, ng, npc = (control.size1_in(k) for k in range(4))
        nu = control.size1_out(0)
        x, r, g, pc, w = (ca.MX.sym(name, control.size1_in(k)) for k, name in enumerate(("x", "r", "g", "pc", "w")))
        u, term = control(x, r, g, pc, w)
        states = [x]
        for _ in range(substeps):
            states.append(plant(states[-1], u, pc))
        sample = ca.Function("sample", [x, r, g, pc, w], [states[-1], term, u])
        taped = ca.Function("taped_sample", [x, r, g, pc, w], [states[-1], term, u, ca.vertcat(*states[:-1])])

        # vector-Jacobian products of the two parts, reverse AD of their SX graphs
        xs, us, ps, lam = ca.SX.sym("x", nx), ca.SX.sym("u", nu), ca.SX.sym("pc", npc), ca.SX.sym("lambda", nx)
        plant_vjp = ca.Function("plant_step_vjp", [xs, us, ps, lam],
                                [ca.jtimes(plant(xs, us, ps), ca.vertcat(xs, us), lam, True)], {"cse": True})
        rs, gs, ws, ubar = ca.SX.sym("r", nr), ca.SX.sym("g", ng), ca.SX.sym("w", len(TERMS)), ca.SX.sym("ubar", nu)
        u_s, term_s = control(xs, rs, gs, ps, ws)
        control_vjp = ca.Function("control_vjp", [xs, rs, gs, ps, ws, ubar],
                                  [ca.jtimes(ca.vertcat(u_s, term_s), ca.vertcat(xs, gs), ca.vertcat(ubar, 1), True)],
                                  {"cse": True})
        # one sample backwards over its tape: (lambda_k+1, gain adjoint so far) -> (lambda_k, ...)
        carry, tape, u_k = ca.MX.sym("carry", nx + ng), ca.MX.sym("tape", nx * substeps), ca.MX.sym("u", nu)
        adjoint, u_adjoint = carry[:nx], ca.MX.zeros(nu)
        for j in reversed(range(substeps)):
            step_adjoint = plant_vjp(tape[j * nx:(j + 1) * nx], u_k, pc, adjoint)
            adjoint, u_adjoint = step_adjoint[:nx], u_adjoint + step_adjoint[nx:]
        law_adjoint = control_vjp(tape[:nx], r, g, pc, w, u_adjoint)
        back = ca.Function("sample_adjoint", [carry, tape, u_k, r, g, pc, w],
                           [ca.vertcat(adjoint + law_adjoint[:nx], carry[nx:] + law_adjoint[nx:])])

        if native:
            sample, taped, back = native_functions([sample, taped, back], "closed_loop")
        x0, R = ca.MX.sym("x0", nx), ca.MX.sym("R", nr, count)
        gains, pcs, weights = ca.MX.sym("gains", ng), ca.MX.sym("pc", npc), ca.MX.sym("w", len(TERMS))
        X, L, U = sample.mapaccum("forward", count, [0], [0])(x0, R, gains, pcs, weights)
        run = ca.Function("closed_loop", [x0, R, gains, pcs, weights], [ca.horzcat(x0, X[:, :-1]), L, U])
        _, L, U, tapes = taped.mapaccum("taped_forward", count, [0], [0])(x0, R, gains, pcs, weights)
        backwards = list(range(count - 1, -1, -1))
        sweep = back.mapaccum("adjoint_run", count)(ca.DM.zeros(nx + ng), tapes[:, backwards], U[:, backwards],
                                                    R[:, backwards], gains, pcs, weights)
        gradient = ca.Function("closed_loop_gradient", [x0, R, gains, pcs, weights], [ca.sum2(L), sweep[nx:, -1]])
        return run, gradient

    @cached_property
    def _sample_jacobian(self) -> ca.Function:
        """(x, r, gains, pc) -> dx_k+1/dx_k of one sample (the law, then the plant step ``substeps`` times)."""
        control, plant, substeps = self._sample_stages
        x, r, g, pc, w = (ca.SX.sym(name, control.size1_in(k)) for k, name in enumerate("xrgpw"))
        u, _ = control(x, r, g, pc, w)
        x_next = x
        for _ in range(substeps):
            x_next = plant(x_next, u, pc)
        return ca.Function("sample_jacobian", [x, r, g, pc], [ca.jacobian(x_next, x)])

    def decay_rate(self, gains, poses: int = 21, p=None) -> float:
        """The slowest decay rate (1/s) of the sampled loop with ``gains``, linearised at rest at ``poses``
        poses evenly spread over the reference: at each, the arm at the desired joint angles (rotors with
        their joints, links straight, at rest) with the reference held there, -ln(largest |eigenvalue| of
        dx_k+1/dx_k) / T; the smallest over the poses. Positive: every mode decays at least that fast;
        0: a mode that does not decay (no position feedback); negative: unstable. It is the margin of the
        loop as the FMU runs it, so it linearises the Model's own dynamics (no geometric stiffness of a load
        that they leave out) at these poses, not about the sag under gravity.

        Parameters
        ----------
        gains : array
            The law's gains, in its gain order.
        poses : int
            How many poses along the reference.
        p : array, optional
            Plant parameters (nominal when None).
        """
        nj, S = len(self.model.inputs), rigid_selection(self.model)
        pc, gains = self.parameters_with_constants(p), np.asarray(gains, float)
        slowest = np.inf
        for k in np.unique(np.linspace(0, len(self.time) - 1, poses).round().astype(int)):
            theta = self.references[:nj, k]
            x = np.concatenate([S @ theta, np.zeros(S.shape[0])])
            r = np.concatenate([theta, np.zeros(2 * nj)])
            A = np.array(self._sample_jacobian(x, r, gains, pc))
            if not np.all(np.isfinite(A)):
                return -np.inf
            slowest = min(slowest, -np.log(max(np.max(np.abs(np.linalg.eigvals(A))), 1e-300)) / self.sample_step)
        return float(slowest)

    def parameters_with_constants(self, p=None) -> np.ndarray:
        """pc = [p; c(p)] for the plant parameters ``p`` (the model's nominal ones when None), c(p) the
        compiled dynamics' parameter-dependent constants."""
        p = self.model.nominal_parameters if p is None else np.asarray(p, float)
        return np.concatenate([p, np.array(self._dynamics.constants(p)).ravel()])

    def _weights(self, weights) -> np.ndarray:
        return weight_vector(self.weights if weights is None else weights)

    def run(self, gains, p=None, weights: CostWeights | None = None) -> ClosedLoopRun:
        """Simulate with ``gains`` (in the law's gain order) and plant parameters ``p``; the stage costs
        with ``weights`` (the loop's when None)."""
        X, L, U = self._run(self.x0, self.references, np.asarray(gains, float), self.parameters_with_constants(p),
                            self._weights(weights))
        return ClosedLoopRun(self.time, np.array(X).T, np.array(U).T, np.array(L).ravel())

    def cost(self, gains, p=None, weights: CostWeights | None = None) -> float:
        """J of a run with ``gains`` (in the law's gain order), plant parameters ``p`` (nominal when None)
        and ``weights`` (the loop's when None)."""
        return self.run(gains, p, weights).cost

    def terms(self, gains, p=None) -> dict[str, float]:
        """The unweighted terms of J (tracking in rad^2 s, vibration in m^2 s, effort in (N m)^2 s) of a
        run with ``gains`` and plant parameters ``p`` (nominal when None), by name."""
        return {name: self.cost(gains, p, unit_weights(name)) for name in TERMS}

    def cost_and_gradient(self, gains, p=None, weights: CostWeights | None = None) -> tuple[float, np.ndarray]:
        """J and dJ/dgains, by the adjoint sweep.

        Parameters
        ----------
        gains : array
            The law's gains, in its gain order.
        p : array, optional
            Plant parameters (the model's nominal ones when None).
        weights : CostWeights, optional
            The cost's weights (the loop's when None); ``unit_weights(term)`` gives one term alone.

        Returns
        -------
        tuple of (float, numpy.ndarray)
            The cost J and its gradient with respect to ``gains``.
        """
        J, dJ = self._gradient(self.x0, self.references, np.asarray(gains, float), self.parameters_with_constants(p),
                               self._weights(weights))
        return float(J), np.array(dJ).ravel()
