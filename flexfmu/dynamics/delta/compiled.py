"""The Delta robot's dynamics as generated C wants them (the FMU's C contract).

The Model's M and h come from one global Lagrangian through automatic
differentiation: right for Python, but every entry then carries the forward
kinematics' derivatives, which makes large C (and a long compile, more so
for the directional derivatives). Here the same energies are split the way
the robot is built:

* a kinematics template: theta -> the platform centre P, its Jacobian J
  and the velocity-product acceleration dJ/dt theta', the chains' passive
  angles (phi2, phi3) with the same, and the lower links' static tensions
  with their derivatives (for the axial-load term);
* one chain template, called for each of the three chains with its angle:
  the chain's energies in its D-H coordinates z = (motor angle, phi2,
  phi3, the platform's six elastic coordinates, the chain's own), where
  its frames are short products of rotations, give its local mass matrix
  M_z and Lagrange terms c_z;
* the assembly by the chain rule z = Z(q), z' = G(q) q': M = sum G' M_z G,
  h = sum G' (c_z + M_z dG/dt q'), plus the platform, the rotors, friction and
  Rayleigh damping, and M qdd = B u - h solved by CasADi's sparse LDL.

The result equals the Model's M and h (tests check it): a second assembly
of the same energies. The templates' C appears once (their calls are kept
in the MX graphs, and so are their derivatives in the directional
derivatives). The implicit integrator's Newton matrix M + h/2 D + h^2/4 K
uses the elastic stiffness and damping at the current pose.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.delta.geometry import CHAIN_ANGLES
from flexfmu.dynamics.delta.kinematics import chain_frame, forward_kinematics
from flexfmu.dynamics.delta.templates import ChainAssembly
from flexfmu.dynamics.model import CompiledDynamics


def passive_angles(theta, P, dims):
    """The passive angles (phi2, phi3) of the three chains (paper 003 eq. 4) for the motor angles ``theta``
    and the platform centre ``P``: in chain i's frame, L2 sin phi3 = y and
    L2 (cos(phi1 + phi2), -sin(phi1 + phi2)) cos phi3 = (x - r - L1 cos phi1, z + L1 sin phi1)."""
    r = dims.base_radius - dims.platform_radius
    L1, L2 = dims.upper_length, dims.lower_length
    phi2, phi3 = [], []
    for i in range(3):
        x, y, z = ca.vertsplit(ca.mtimes(chain_frame(i).T, P))
        phi3.append(ca.asin(y / L2))
        phi12 = ca.atan2(-(z + L1 * ca.sin(theta[i])), x - r - L1 * ca.cos(theta[i]))
        phi2.append(phi12 - theta[i])
    return ca.vertcat(*phi2), ca.vertcat(*phi3)


def _kinematics_template(graph) -> ca.Function:
    """(theta, theta', p) -> (P, J, dJ/dt theta', passive angles [phi2; phi3], their Jacobian and
    velocity-product rates, tensions f, df/dtheta)."""
    theta, rate, p = ca.SX.sym("theta", 3), ca.SX.sym("rate", 3), graph.p
    energy = graph.energy
    P = forward_kinematics(theta, energy.dims)
    J = ca.jacobian(P, theta)
    angles = ca.vertcat(*passive_angles(theta, P, energy.dims))
    J_angles = ca.jacobian(angles, theta)
    tensions = energy.tensions(theta, P) if energy.axial_load else ca.SX.zeros(3)

    def drift(jacobian):
        return ca.jtimes(ca.mtimes(jacobian, rate), theta, rate)

    return ca.Function("delta_kinematics", [theta, rate, p],
                       [P, J, drift(J), angles, J_angles, drift(J_angles), tensions, ca.jacobian(tensions, theta)])


class _Assembly:
    """The global M, h and elastic K, D of the Delta from its templates (MX, see the module docstring)."""

    def __init__(self, graph):
        self.graph = graph
        self.kinematics = _kinematics_template(graph)
        self.chain = ChainAssembly(graph.energy)
        self.m = graph.elastic.chain_size
        self.n = 3 + graph.elastic.size
        self.index = {row.name: k for k, row in enumerate(graph.parameter_table)}

    def selection(self, i: int, J_angles: ca.MX) -> ca.MX:
        """G_i with z_i' = G_i q' for chain ``i``: its motor rate, its passive angles' rates (from
        J_angles, the passive angles' Jacobian), the platform's and its own elastic rates."""
        m, n = self.m, self.n
        G = ca.MX(9 + m, n)
        G[0, i] = 1
        G[1, 0:3] = J_angles[i, :]
        G[2, 0:3] = J_angles[3 + i, :]
        G[3:9, 3:9] = ca.MX.eye(6)
        offset = 3 + 6 + i * m
        G[9:, offset:offset + m] = ca.MX.eye(m)
        return G

    def terms(self, q, qd, p):
        """(M, h, K_strain, K_elastic) at (q, qd): M qdd + h = B u, and the strain and strain + axial-load
        stiffness of the elastic coordinates embedded in q x q."""
        n, m = self.n, self.m

        def P_(name):
            return p[self.index[name]]

        theta, rate = q[:3], qd[:3]
        _, J, drift, angles, J_angles, angle_drift, tensions, dtension = self.kinematics(theta, rate, p)
        M, h = ca.MX(n, n), ca.MX(n, 1)
        K_strain, K_axial = ca.MX(n, n), ca.MX(n, n)
        for i in range(3):
            offset = 9 + i * m
            z = ca.vertcat(theta[i], angles[i], angles[3 + i], q[3:9], q[offset:offset + m])
            G = self.selection(i, J_angles)
            z_rate = ca.mtimes(G, qd)
            M_z, c_z, Ks, Ka, dV = self.chain(z, z_rate, tensions[i], CHAIN_ANGLES[i], p)
            drift_z = ca.vertcat(0, angle_drift[i], angle_drift[3 + i], ca.MX(6 + m, 1))
            M += ca.mtimes([G.T, M_z, G])
            h += ca.mtimes(G.T, c_z + ca.mtimes(M_z, drift_z))
            h[0:3] += dtension[i, :].T * dV
            E = G[3:, :]  # the elastic coordinates of z among q
            K_strain += ca.mtimes([E.T, Ks, E])
            K_axial += ca.mtimes([E.T, Ka, E])
        # platform: T = m/2 |J theta' + dP'|^2 + 1/2 rot' I rot', V = -m g . (P + dP)
        mass = P_("platform.mass")
        G_P = ca.horzcat(J, ca.MX.eye(3), ca.MX(3, n - 6))
        inertia = ca.vertcat(*(P_(f"platform.inertia.{axis}") for axis in "xyz"))
        g = ca.vertcat(*(P_(f"gravity.{axis}") for axis in "xyz"))
        M += mass * ca.mtimes(G_P.T, G_P)
        M[6:9, 6:9] += ca.diag(inertia)
        h += ca.mtimes(G_P.T, mass * (drift - g))
        M[0:3, 0:3] += P_("motor.gear_ratio") ** 2 * P_("motor.rotor_inertia") * ca.MX.eye(3)
        # dissipation: motor friction, Rayleigh damping of the elastic rates
        elastic_rate = qd[3:]
        h[0:3] += P_("motor.viscous_friction") * rate
        h[3:] += (P_("damping.alpha") * ca.mtimes(M[3:, 3:], elastic_rate)
                  + P_("damping.beta") * ca.mtimes(K_strain[3:, 3:], elastic_rate))
        return M, h, K_strain, K_strain + K_axial


def delta_compiled(graph, model) -> CompiledDynamics:
    """The Functions of the C contract for ``model``, built from its Delta ``graph``
    (:class:`flexfmu.dynamics.delta.graph.DeltaGraph`); use ``model.compiled``, which caches the result."""
    n, nu, npar = len(model.coordinates), len(model.inputs), len(model.parameters)
    assembly = _Assembly(graph)
    # the outputs' parameter-only parts hoisted into the constants c(p)
    qdd = ca.SX.sym("qdd", n)
    packed, symbols, parametric = ca.extract_parametric(graph.outputs(qdd)[1], graph.p)
    hoisted = ca.vertcat(*symbols)
    c = ca.densify(ca.vertcat(*parametric)) if parametric else ca.DM.zeros(1)
    constants = ca.Function("constants", [graph.p], [c], ["p"], ["c"], {"cse": True})
    observed = ca.Function("observed", [graph.q, graph.qd, qdd, graph.p, hoisted if parametric else ca.SX.sym("c")],
                           [packed], {"cse": True})

    xm, um, pcm = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("pc", npar + c.numel())
    q, qd, p, s = xm[:n], xm[n:], pcm[:npar], pcm[npar:]
    B = ca.vertcat(ca.MX.eye(3), ca.MX(n - 3, 3))

    def accelerations(qv, qdv, uv):
        M, h, _, _ = assembly.terms(qv, qdv, p)
        return ca.solve(M, ca.mtimes(B, uv) - h, "ldl")

    qdd_m = accelerations(q, qd, um)
    state_derivative = ca.Function("state_derivative", [xm, um, pcm], [ca.vertcat(qd, qdd_m)],
                                   ["x", "u", "pc"], ["xdot"])
    y_m = observed(q, qd, qdd_m, p, s)
    outputs = ca.Function("outputs", [xm, um, pcm], [y_m], ["x", "u", "pc"], ["y"])
    dx, du = ca.MX.sym("dx", 2 * n), ca.MX.sym("du", nu)
    seeds = ca.jtimes(ca.vertcat(qd, qdd_m, y_m), ca.vertcat(xm, um), ca.vertcat(dx, du))
    directional = ca.Function("directional", [xm, um, pcm, dx, du], [seeds[:2 * n], seeds[2 * n:]],
                              ["x", "u", "pc", "dx", "du"], ["dxdot", "dy"])

    qn, qdn, v0, step = ca.MX.sym("q", n), ca.MX.sym("qd", n), ca.MX.sym("v0", n), ca.MX.sym("h")
    M, h, K_strain, K_elastic = assembly.terms(qn, qdn, p)
    r = qdn - v0 - step / 2 * ca.solve(M, ca.mtimes(B, um) - h, "ldl")
    def P_(name):
        return p[assembly.index[name]]

    D = ca.MX(n, n)
    D[0:3, 0:3] = P_("motor.viscous_friction") * ca.MX.eye(3)
    D[3:, 3:] = P_("damping.alpha") * M[3:, 3:] + P_("damping.beta") * K_strain[3:, 3:]
    correction = ca.solve(M + step / 2 * D + step**2 / 4 * K_elastic, ca.mtimes(M, r), "ldl")
    newton = ca.Function("newton_correction", [qn, qdn, v0, um, pcm, step], [correction],
                         ["q", "qd", "v0", "u", "pc", "h"], ["dw"])
    return CompiledDynamics(constants, state_derivative, outputs, directional, newton)
