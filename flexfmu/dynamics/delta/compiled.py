"""The Delta robot's dynamics as generated C wants them (the FMU's C contract).

The Model's M and h come from one global Lagrangian through automatic
differentiation: right for Python, but every entry then carries the forward
kinematics' derivatives, which makes large C and a long compile. Here the
same energies (:class:`flexfmu.dynamics.delta.body_energies.BodyEnergies`)
are split the way the robot is built, into three templates that the C code
holds once:

* kinematics: theta -> the platform centre P, its Jacobian J and the
  velocity-product acceleration dJ/dt theta', the chains' passive angles
  (phi2, phi3) with the same, and the lower links' static tensions with
  their derivatives (for the axial-load term);
* one chain, called for each of the three chains with its angle: in its
  D-H coordinates z = (motor angle, phi2, phi3, the platform's six elastic
  coordinates, the chain's own) each link is a flexible body whose
  velocities v = (a, omega, xi') (origin velocity and angular velocity in
  the link frame, the body's coordinate rates) are linear in z': v = A z'.
  Its Boltzmann-Hamel equations M_b(xi) v' + Q_b(xi, v) = F (the body's
  mass matrix from its invariants, Q_b the quadratic velocity terms of the
  moving frame: Mdot v + (omega x p_a, omega x p_omega + a x p_a, -dT/dxi)
  with the momenta p = M_b v) carried to z give the chain's
  M_z = sum A' M_b A and c_z = sum A' (M_b dA/dt z' + Q_b) plus the
  potential's gradient, in half the arithmetic of differentiating T twice;
* the assembly by the chain rule z = Z(q), z' = G(q) q': M = sum G' M_z G,
  h = sum G' (c_z + M_z dG/dt q'), plus the platform, the rotors, friction
  and Rayleigh damping, block by block (small dense products: G is the
  identity but for three rows).

The solves are CasADi's sparse LDL' (compact loops in C). The result equals
the Model's M and h (tests check it): a second assembly of the same
energies.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.delta.assembly import LINKS, chain_frames_from_angles
from flexfmu.dynamics.delta.geometry import CHAIN_ANGLES, rot_z
from flexfmu.dynamics.delta.kinematics import chain_frame, forward_kinematics
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
    """(theta, theta', p) -> (J, dJ/dt theta', the passive angles' Jacobian and velocity-product rates,
    passive angles [phi2; phi3], tensions f, df/dtheta, the passive angles' Hessians (6 x 9, each row one
    angle's 3 x 3 Hessian in theta, column-major))."""
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
                       [J, drift(J), J_angles, drift(J_angles), angles, tensions, ca.jacobian(tensions, theta),
                        ca.vertcat(*(ca.vec(ca.hessian(angles[k], theta)[0]).T for k in range(6)))],
                       {"cse": True})


def _body_template(body, p, name: str) -> ca.Function:
    """(xi, v, p) -> (M_b, Q_b) of one flexible link (see the module docstring), v = (a, omega, xi')."""
    k = body.inv.size
    xi, v = ca.SX.sym("xi", k), ca.SX.sym("v", 6 + k)
    a, omega = v[0:3], v[3:6]
    T = body.kinetic(a, omega, xi, v[6:])
    M, momentum = ca.hessian(T, v)
    p_a, p_omega = momentum[0:3], momentum[3:6]
    frame = ca.vertcat(ca.cross(omega, p_a), ca.cross(omega, p_omega) + ca.cross(a, p_a), -ca.gradient(T, xi))
    return ca.Function(name, [xi, v, p], [M, ca.jtimes(momentum, xi, v[6:]) + frame], {"cse": True})


# the blocks of one chain's terms over theta (t), the platform's elastic coordinates (p) and its own (o)
CHAIN_BLOCKS = ("M_tt", "M_tp", "M_to", "M_pp", "M_po", "M_oo", "h_t", "h_p", "h_o", "K_tt", "K_tp", "K_to", "K_pp",
                "K_po", "K_oo", "D_pp", "D_po", "D_oo")
SHARED = ("M_tt", "M_tp", "M_pp", "h_t", "h_p", "K_tt", "K_tp", "K_pp", "D_pp")  # summed over the chains


def _chain_template(graph) -> ca.Function:
    """(angles, elastic, z', g, the passive angles' drift, tension, df/dtheta row, chain angle, p) -> the
    :data:`CHAIN_BLOCKS` of one chain: its terms M_z, c_z in its coordinates z = (angles, elastic) (c_z with
    the potential's gradient) carried to (theta; elastic) by G = [g 0; 0 I] (g: the angles' rows over
    theta), M = G' M_z G, h = G' (c_z + M_z dG/dt q') and the axial load's share through the tension; K the
    elastic stiffness (strain and axial load) and D the Rayleigh damping alpha M + beta K_strain of the
    chain's links, whose force D e' is in h. The blocks come out dense and apart (each symmetric matrix's
    lower blocks are the transposes of its upper ones), so the assembly only adds and places them."""
    energy, p = graph.energy, graph.p
    m = energy.layout.chain_size
    angles, elastic, rates = ca.SX.sym("angles", 3), ca.SX.sym("elastic", 6 + m), ca.SX.sym("rates", 9 + m)
    g, angle_drift, curvature = ca.SX.sym("g", 3, 3), ca.SX.sym("angle_drift", 2), ca.SX.sym("curvature", 2, 9)
    tension, dtension, chain_angle = ca.SX.sym("tension"), ca.SX.sym("dtension", 3), ca.SX.sym("chain_angle")
    z = ca.vertcat(angles, elastic)
    f = chain_frames_from_angles(rot_z(chain_angle), angles[0], angles[1], angles[2], energy.dims)
    coordinates = energy.link_coordinates(f, elastic[0:6], elastic[6:])
    M, c = ca.SX(9 + m, 9 + m), ca.SX(9 + m, 1)
    for link in LINKS:
        origin, R = energy.link_frame(f, link)
        xi = coordinates[link]
        W = ca.mtimes(R.T, ca.jtimes(R, z, rates))
        v = ca.vertcat(ca.mtimes(R.T, ca.jtimes(origin, z, rates)), W[2, 1], W[0, 2], W[1, 0], ca.jtimes(xi, z, rates))
        A = ca.jacobian(v, rates)
        M_b, Q_b = _body_template(energy.bodies[link], p, f"delta_{link}_body")(xi, v, p)
        M += ca.mtimes([A.T, M_b, A])
        c += ca.mtimes(A.T, ca.mtimes(M_b, ca.jtimes(v, z, rates)) + Q_b)
    gravity, strain, axial = energy.chain_potential(f, elastic[0:6], elastic[6:], tension)
    c += ca.gradient(gravity + strain + axial, z) + ca.mtimes(M[:, 1:3], angle_drift)
    # the elastic potential's Hessian over every coordinate: the stiff part of the Jacobian (the strain of a
    # deformed chain also resists its joint angles), carried to (theta; elastic) with the passive angles'
    # curvature
    K_z, gradient = ca.hessian(strain + axial, z)
    K_strain = ca.hessian(strain, elastic)[0]
    K_tt = ca.mtimes([g.T, K_z[0:3, 0:3], g]) + ca.reshape(ca.mtimes(gradient[1:3].T, curvature), 3, 3)
    h_t = ca.mtimes(g.T, c[0:3])
    if energy.axial_load:
        h_t += dtension * ca.gradient(axial, tension)
    D = energy.P["damping.alpha"] * M[3:, 3:] + energy.P["damping.beta"] * K_strain
    h_e = c[3:] + ca.mtimes(D, rates[3:])
    M_te = ca.mtimes(g.T, M[0:3, 3:])
    # t: theta, p: the platform's elastic coordinates, o: the chain's own
    blocks = {"M_tt": ca.mtimes([g.T, M[0:3, 0:3], g]), "M_tp": M_te[:, 0:6], "M_to": M_te[:, 6:], "h_t": h_t,
              "h_p": h_e[0:6], "h_o": h_e[6:]}
    K_te = ca.mtimes(g.T, K_z[0:3, 3:])
    blocks |= {"K_tt": K_tt, "K_tp": K_te[:, 0:6], "K_to": K_te[:, 6:]}
    for key, matrix in (("M", M[3:, 3:]), ("K", K_z[3:, 3:]), ("D", D)):
        blocks |= {f"{key}_pp": matrix[0:6, 0:6], f"{key}_po": matrix[0:6, 6:], f"{key}_oo": matrix[6:, 6:]}
    return ca.Function("delta_chain",
                       [angles, elastic, rates, g, angle_drift, curvature, tension, dtension, chain_angle, p],
                       [ca.densify(blocks[key]) for key in CHAIN_BLOCKS], ["angles", "elastic", "rates", "g",
                       "angle_drift", "curvature", "tension", "dtension", "chain_angle", "p"], list(CHAIN_BLOCKS),
                       {"cse": True})


class _Assembly:
    """The global M, h and elastic K, D of the Delta from its templates (see the module docstring)."""

    def __init__(self, graph):
        self.graph = graph
        self.kinematics = _kinematics_template(graph)
        self.chain = _chain_template(graph)
        self.m = graph.elastic.chain_size
        self.n = 3 + graph.elastic.size
        self.index = {row.name: k for k, row in enumerate(graph.parameter_table)}
        self.platform = self._platform_template()

    def _parameter(self, p, name):
        return p[self.index[name]]

    def _platform_template(self) -> ca.Function:
        """(J, dJ/dt theta', theta', dP', p) -> (M_tt, M_tp, M_pp, h_t, h_p, D_pp): the platform, the
        rotors and the motors' friction. The platform's T = m/2 |J theta' + dP'|^2 + 1/2 rot' I rot' and
        V = -m g . (P + dP); its Rayleigh damping alpha diag(m, m, m, I) acts on its elastic rates."""
        P = self.graph.energy.P
        J, drift, rate, platform_rate = (ca.SX.sym(name, *shape) for name, shape in (
            ("J", (3, 3)), ("drift", (3, 1)), ("rate", (3, 1)), ("platform_rate", (6, 1))))
        mass = P["platform.mass"]
        gravity = ca.vertcat(*(P[f"gravity.{axis}"] for axis in "xyz"))
        load = mass * (drift - gravity)
        rotor = P["motor.gear_ratio"] ** 2 * P["motor.rotor_inertia"]
        M_tt = mass * ca.mtimes(J.T, J) + rotor * ca.SX.eye(3)
        M_tp = ca.horzcat(mass * J.T, ca.SX.zeros(3, 3))
        M_pp = ca.diag(ca.vertcat(mass, mass, mass, *(P[f"platform.inertia.{axis}"] for axis in "xyz")))
        D_pp = P["damping.alpha"] * M_pp
        h_t = ca.mtimes(J.T, load) + P["motor.viscous_friction"] * rate
        h_p = ca.vertcat(load, ca.SX.zeros(3)) + ca.mtimes(D_pp, platform_rate)
        return ca.Function("delta_platform", [J, drift, rate, platform_rate, self.graph.p],
                           [ca.densify(x) for x in (M_tt, M_tp, M_pp, h_t, h_p, D_pp)], {"cse": True})

    def terms(self, q, qd, p):
        """(M, h, K_elastic, D) at (q, qd) (MX: calls of the templates, blocks put together): M qdd + h = B u,
        the elastic stiffness (strain and axial load) and the damping (motor friction, Rayleigh damping of the
        elastic rates). Chain i's own coordinates sit at 9 + i m; the platform's (3..8) are shared."""
        m = self.m
        theta, rate = q[:3], qd[:3]
        J, drift, J_angles, angle_drift, angles, tensions, dtension, curvature = self.kinematics(theta, rate, p)
        shared = dict(zip(("M_tt", "M_tp", "M_pp", "h_t", "h_p", "D_pp"),
                          self.platform(J, drift, rate, qd[3:9], p))) | {
            key: ca.MX(*shape) for key, shape in (("K_tt", (3, 3)), ("K_tp", (3, 6)), ("K_pp", (6, 6)))}
        own = []
        for i in range(3):
            offset = 9 + i * m
            elastic = ca.vertcat(q[3:9], q[offset:offset + m])
            g = ca.vertcat(ca.MX(ca.DM.eye(3)[i, :]), J_angles[i, :], J_angles[3 + i, :])
            rates = ca.vertcat(ca.mtimes(g, rate), qd[3:9], qd[offset:offset + m])
            blocks = dict(zip(CHAIN_BLOCKS, self.chain(
                ca.vertcat(theta[i], angles[i], angles[3 + i]), elastic, rates, g,
                ca.vertcat(angle_drift[i], angle_drift[3 + i]), ca.vertcat(curvature[i, :], curvature[3 + i, :]),
                tensions[i], dtension[i, :].T, CHAIN_ANGLES[i], p)))
            shared = {key: shared[key] + blocks[key] for key in SHARED}
            own.append((9 + i * m, blocks))
        n = self.n

        def placed(key, theta_blocks=True):
            """The placements of the symmetric q x q matrix ``key``: its shared blocks, then each chain's own
            ones, each upper block also transposed below the diagonal."""
            out = [(3, 3, shared[f"{key}_pp"])]
            upper = [(0, 3, shared[f"{key}_tp"])] if theta_blocks else []
            if theta_blocks:
                out.append((0, 0, shared[f"{key}_tt"]))
            for first, blocks in own:
                out.append((first, first, blocks[f"{key}_oo"]))
                upper.append((3, first, blocks[f"{key}_po"]))
                if theta_blocks:
                    upper.append((0, first, blocks[f"{key}_to"]))
            return out + upper + [(column, row, block.T) for row, column, block in upper]

        friction = self._parameter(p, "motor.viscous_friction") * ca.MX.ones(3)
        M = _from_blocks(n, placed("M"))
        K_elastic = _from_blocks(n, placed("K"))
        D = _from_blocks(n, [(0, 0, ca.diag(friction))] + placed("D", theta_blocks=False))
        forces = [blocks["h_o"] for _, blocks in own]
        h_t, h_p = shared["h_t"], shared["h_p"]
        return M, ca.vertcat(h_t, h_p, *forces), K_elastic, D

def _from_blocks(n: int, placements) -> ca.MX:
    """The n x n MX matrix holding the dense ``placements`` (row, column, block), which must not overlap,
    and zeros elsewhere: one gather of the blocks' entries into the matrix's nonzeros, in column order (a
    vertical concatenation of matrices would transpose them). A block given as ``B.T`` of an MX ``B`` is
    gathered from B's entries, transposed by the gather's indices, not by an operation."""
    entries, rows, columns, index, k = [], [], [], [], 0
    sources = {}  # id of a block's untransposed MX -> where its entries start
    for row, column, block in placements:
        base, transposed = (block.dep(0), True) if block.is_op(ca.OP_TRANSPOSE) else (block, False)
        r, c = base.shape
        if id(base) not in sources:
            sources[id(base)] = k
            entries.append(ca.vec(ca.densify(base)))
            k += r * c
        start = sources[id(base)]
        for b in range(c):
            for a in range(r):
                rows.append(row + (b if transposed else a))
                columns.append(column + (a if transposed else b))
                index.append(start + a + b * r)
    order = sorted(range(len(index)), key=lambda j: (columns[j], rows[j]))
    sparsity = ca.Sparsity.triplet(n, n, [rows[j] for j in order], [columns[j] for j in order])
    return ca.MX(sparsity, ca.vertcat(*entries)[[index[j] for j in order]])


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
    M, h, K, D = assembly.terms(q, qd, p)
    mass_form = ca.Function("mass_form", [xm, um, pcm], [M, ca.mtimes(B, um) - h, K, D],
                            ["x", "u", "pc"], ["M", "f", "K", "D"])
    qdd_m = ca.solve(M, ca.mtimes(B, um) - h, "ldl")
    state_derivative = ca.Function("state_derivative", [xm, um, pcm], [ca.vertcat(qd, qdd_m)],
                                   ["x", "u", "pc"], ["xdot"])
    y_m = observed(q, qd, qdd_m, p, s)
    outputs = ca.Function("outputs", [xm, um, pcm], [y_m], ["x", "u", "pc"], ["y"])
    dx, du = ca.MX.sym("dx", 2 * n), ca.MX.sym("du", nu)
    seeds = ca.jtimes(ca.vertcat(qd, qdd_m, y_m), ca.vertcat(xm, um), ca.vertcat(dx, du))
    directional = ca.Function("directional", [xm, um, pcm, dx, du], [seeds[:2 * n], seeds[2 * n:]],
                              ["x", "u", "pc", "dx", "du"], ["dxdot", "dy"])

    qn, qdn, v0, step = ca.MX.sym("q", n), ca.MX.sym("qd", n), ca.MX.sym("v0", n), ca.MX.sym("h")
    Mn, fn, Kn, Dn = mass_form(ca.vertcat(qn, qdn), um, pcm)
    r = qdn - v0 - step / 2 * ca.solve(Mn, fn, "ldl")
    correction = ca.solve(Mn + step / 2 * Dn + step**2 / 4 * Kn, ca.mtimes(Mn, r), "ldl")
    newton = ca.Function("newton_correction", [qn, qdn, v0, um, pcm, step], [correction],
                         ["q", "qd", "v0", "u", "pc", "h"], ["dw"])
    return CompiledDynamics(constants, state_derivative, outputs, directional, newton, mass_form)
