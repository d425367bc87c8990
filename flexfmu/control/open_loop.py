"""An open-loop experiment run exactly as the exported FMU runs it, with its forward sensitivities.

The recorded inputs u_k are held over each sample step T (the FMU's
communication step) while the plant advances by the FMU's own step Function
(the same integrator, internal step h and straight-line right-hand side
compiled into the FMU), T / h times; the measured outputs are read at each
sample:

    y_k = y(x_k, u_k, pc),   x_k+1 = step^(T/h)(x_k, u_k, pc),   pc = [p; c(p)]

The sensitivities S_k = dx_k/dtheta of the fitted quantities theta (some
entries of p, and optionally x_0) follow the same recursion differentiated
exactly, forward mode, all directions at once:

    S_k+1 = (dstep/dx) S_k + (dstep/dpc) D,   dy_k/dtheta = (dy/dx) S_k + (dy/dpc) D,

D = dpc/dtheta (the constants' Jacobian, evaluated once per parameter
point). One internal step and the outputs are each an expanded SX graph
holding the values and their derivatives together, so common subexpressions
are shared; only the rows of D that a fitted parameter reaches are inputs,
so the rest of the derivative is pruned. A sample calls the step T/h times
and the outputs once, and the run is a mapaccum over the samples; these
small pieces are what ``native`` compiles to C (:mod:`flexfmu.codegen.native`,
cached per machine; compiling a whole sample as one function took gcc over a
minute, and these pieces are built with -O1 for the same reason).

A step of any of the FMU's integrators (:data:`flexfmu.integrate.INTEGRATORS`)
goes through: the implicit rule's fixed Newton iterations and the Rosenbrock
step's one factorisation (an LDL of a fixed pattern) are straight-line
graphs too, differentiated like the RK4 stages.
"""

from __future__ import annotations

from functools import cached_property

import casadi as ca
import numpy as np

from flexfmu.codegen.native import c_compiler, native_functions
from flexfmu.control.closed_loop import plant_step_size
from flexfmu.errors import FlexfmuError
from flexfmu.integrate import step_function


class SensitivityError(FlexfmuError, ValueError):
    """An arm whose sampled run cannot be differentiated as one straight-line graph; the message says why."""


class OpenLoopRun:
    """The sampled run of ``model`` over ``count`` samples ``sample_step`` apart, measuring ``measured``.

    Parameters
    ----------
    model : Model
    sample_step : float
        T, s: the inputs' hold time and the FMU's communication step.
    count : int
        Number of samples K (outputs at t_0 ... t_K-1).
    measured : list of str
        Names of the outputs read at each sample.
    fitted : list of str
        Parameters whose sensitivities are wanted (names of ``model.parameters``).
    fit_initial : bool
        Whether the initial state x_0 is fitted too (its sensitivities follow the parameters').
    integrator, internal_step :
        As for ``flexfmu export`` (None: the FMU's default step for ``sample_step``).
    native : bool
        Compile the per-step pieces (one internal step, the outputs, and their sensitivities) to C before the
        run is assembled from them (:func:`flexfmu.codegen.native.native_functions`): about ten times faster
        runs, the compiler paid once per machine, arm, step and parameter set. False, or no C compiler,
        evaluates them in CasADi's virtual machine, with the same results.
    """

    def __init__(self, model, sample_step: float, count: int, measured: list[str], fitted: list[str],
                 fit_initial: bool = False, integrator: str = "rk4", internal_step: float | None = None,
                 native: bool = False):
        self.model, self.count, self.fitted, self.fit_initial = model, count, list(fitted), fit_initial
        self.integrator, self.native = integrator, native and c_compiler() is not None
        self.sample_step = float(sample_step)
        self.internal_step = plant_step_size(model, integrator, self.sample_step, internal_step)
        self.substeps = round(self.sample_step / self.internal_step)
        dynamics = self._dynamics = model.compiled
        names = list(model.parameters)
        p = ca.SX.sym("p", len(names))
        constants = ca.vertcat(p, dynamics.constants(p))
        fitted_index = [names.index(name) for name in fitted]
        self._constants_jacobian = ca.Function("dpc_dtheta", [p], [ca.jacobian(constants, p[fitted_index])])
        self._reached = sorted(set(self._constants_jacobian.sparsity_out(0).get_triplet()[0]))
        nx, npc = 2 * len(model.states), len(names) + dynamics.size
        self.directions = len(fitted) + (nx if fit_initial else 0)
        output_index = [model.output_names.index(name) for name in measured]
        x, u, pc = ca.SX.sym("x", nx), ca.SX.sym("u", len(model.inputs)), ca.SX.sym("pc", npc)
        try:
            x_next = step_function(dynamics, integrator)(x, u, pc, self.internal_step)
            y = dynamics.outputs(x, u, pc)[output_index]
        except RuntimeError:
            raise SensitivityError(
                f"arm {model.arm.name!r} ({model.arm.kind}) cannot be identified: its compiled dynamics do not "
                "expand into one straight-line graph of (x, u, p), on which the exact sensitivities are built (a "
                "Delta robot's right-hand side calls a sparse linear solver); serial arms (planar, spatial) can be"
            ) from None
        self._substep = ca.Function("substep", [x, u, pc], [x_next])
        self._output = ca.Function("output", [x, u, pc], [y])
        sample = self._sample_function(*self._compiled([self._substep, self._output], "open_loop"), False)
        self._forward = self._run(sample, [0], ["x0", "U", "pc"], [nx, u.numel(), npc])

    def _compiled(self, pieces: list[ca.Function], name: str) -> list[ca.Function]:
        """``pieces`` compiled together into the library ``name`` when :attr:`native`, else as they are."""
        return native_functions(pieces, name, optimisation="-O1") if self.native else pieces

    def _sample_function(self, substep: ca.Function, output: ca.Function, sensitivities: bool) -> ca.Function:
        """One sample: ``substep`` T/h times and ``output``; (x, u, pc) -> (x_next, y), or with
        ``sensitivities`` (x, S, u, pc, D) -> (x_next, S_next, y, dy)."""
        nx, nu, npc = (self._substep.size1_in(k) for k in range(3))
        x, u, pc = ca.MX.sym("x", nx), ca.MX.sym("u", nu), ca.MX.sym("pc", npc)
        carried, constants = [x], []
        if sensitivities:
            carried.append(ca.MX.sym("S", nx, self.directions))
            constants.append(ca.MX.sym("D", len(self._reached), self.directions))
        state = carried
        for _ in range(self.substeps):
            state = _as_list(substep(*state, u, pc, *constants))
        y = _as_list(output(*carried, u, pc, *constants))
        return ca.Function("sample", [*carried, u, pc, *constants], [*state, *y])

    def _sensitivity_pieces(self) -> tuple[ca.Function, ca.Function]:
        """(x, S, u, pc, D) -> (x_next, S_next) of one internal step and -> (y, dy) of the outputs: the
        forward sensitivities of :attr:`_substep` and :attr:`_output`, seeded with S = dx/dtheta and the
        rows of D = dpc/dtheta that a fitted parameter reaches."""
        x, u, pc = (ca.SX.sym(name, self._substep.size1_in(k)) for k, name in enumerate(("x", "u", "pc")))
        S = ca.SX.sym("S", x.numel(), self.directions)
        Dr = ca.SX.sym("D", len(self._reached), self.directions)
        D = ca.SX(pc.numel(), self.directions)
        for k, row in enumerate(self._reached):
            D[row, :] = Dr[k, :]
        seed, arguments = ca.vertcat(S, D), ca.vertcat(x, pc)
        pieces = []
        for name, function in (("substep_sensitivity", self._substep), ("output_sensitivity", self._output)):
            value = function(x, u, pc)
            pieces.append(ca.Function(name, [x, S, u, pc, Dr], [value, ca.jtimes(value, arguments, seed)],
                                      {"cse": True}))
        return tuple(pieces)

    @cached_property
    def _sensitivities(self) -> ca.Function:
        """(x0, S0, U, pc, D) -> (Y, dY): the run with its forward sensitivities (built on first use)."""
        substep, output = self._compiled(list(self._sensitivity_pieces()), "open_loop_sensitivity")
        nx, nu, npc = (self._substep.size1_in(k) for k in range(3))
        sample = self._sample_function(substep, output, True)
        return self._run(sample, [0, 1], ["x0", "S0", "U", "pc", "D"],
                         [nx, (nx, self.directions), nu, npc, (len(self._reached), self.directions)])

    def _run(self, sample: ca.Function, accumulated: list[int], names: list[str], sizes: list) -> ca.Function:
        """The run over all samples: the inputs ``names`` (accumulated ones first, then U, then constants)."""
        K = self.count
        symbols = [ca.MX.sym(name, *(size if isinstance(size, tuple) else (size, 1))) for name, size in
                   zip(names, sizes)]
        U = ca.MX.sym("U", sizes[len(accumulated)], K)
        symbols[len(accumulated)] = U
        constants = [ca.repmat(s, 1, K) for s in symbols[len(accumulated) + 1:]]
        outputs = sample.mapaccum("run", K, accumulated, accumulated)(*symbols[:len(accumulated)], U, *constants)
        return ca.Function(f"{sample.name()}_run", symbols, outputs[len(accumulated):])

    def parameters_with_constants(self, p) -> np.ndarray:
        """pc = [p; c(p)] for the full parameter vector ``p``."""
        p = np.asarray(p, float)
        return np.concatenate([p, np.array(self._dynamics.constants(p)).ravel()])

    def outputs(self, x0, inputs, p) -> np.ndarray:
        """The measured outputs (K x ny) of the run from ``x0`` under ``inputs`` (K x nu) with parameters ``p``."""
        Y = self._forward(np.asarray(x0, float), np.asarray(inputs, float).T, self.parameters_with_constants(p))
        return np.array(Y).T

    def outputs_and_sensitivities(self, x0, inputs, p) -> tuple[np.ndarray, np.ndarray]:
        """The outputs (K x ny) and their derivatives (K x ny x m) with respect to the fitted parameters, then
        (when fitted) the initial state, from ``x0`` under ``inputs`` (K x nu) with parameters ``p``."""
        p = np.asarray(p, float)
        nx = 2 * len(self.model.states)
        S0 = np.zeros((nx, self.directions))
        if self.fit_initial:
            S0[:, len(self.fitted):] = np.eye(nx)
        D = np.zeros((len(self._reached), self.directions))
        D[:, :len(self.fitted)] = np.array(self._constants_jacobian(p))[self._reached, :]
        Y, dY = self._sensitivities(np.asarray(x0, float), S0, np.asarray(inputs, float).T,
                                    self.parameters_with_constants(p), D)
        Y = np.array(Y).T
        return Y, np.array(dY).reshape(Y.shape[1], self.count, self.directions).transpose(1, 0, 2)


def _as_list(result) -> list:
    """The outputs of a casadi.Function call as a list (a call with one output returns it bare)."""
    return list(result) if isinstance(result, (list, tuple)) else [result]
