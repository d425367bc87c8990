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
  and the platform's Rayleigh damping, block by block (small dense
  products: G is the identity but for three rows).

The solves are straight-line LDL' factors (``flexfmu.codegen.ldl``: M, K and
D share one sparsity, so one pair of factor and solve serves the mass matrix
and the iteration matrices). The result equals the Model's M and h (tests
check it): a second assembly of the same energies.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.codegen.ldl import ldl_functions, sparse_product
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
    passive angles [phi2; phi3], tensions f, df/dtheta)."""
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
                       [J, drift(J), J_angles, drift(J_angles), angles, tensions, ca.jacobian(tensions, theta)],
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
CHAIN_BLOCKS = ("M_tt", "M_tp", "M_to", "M_pp", "M_po", "M_oo", "h_t", "h_p", "h_o")
STIFFNESS_BLOCKS = ("K_tt", "K_tp", "K_to", "K_pp", "K_po", "K_oo")


class _ChainSymbols:
    """The symbols of one chain's templates and what both build from them: z = (angles, elastic), the chain's
    frames and its links' coordinates xi."""

    def __init__(self, graph):
        self.energy, self.p = graph.energy, graph.p
        m = self.energy.layout.chain_size
        self.angles, self.elastic = ca.SX.sym("angles", 3), ca.SX.sym("elastic", 6 + m)
        self.g, self.tension, self.chain_angle = ca.SX.sym("g", 3, 3), ca.SX.sym("tension"), ca.SX.sym("chain_angle")
        self.z = ca.vertcat(self.angles, self.elastic)
        self.frames = chain_frames_from_angles(rot_z(self.chain_angle), self.angles[0], self.angles[1],
                                               self.angles[2], self.energy.dims)
        self.coordinates = self.energy.link_coordinates(self.frames, self.elastic[0:6], self.elastic[6:])
        self.potential = self.energy.chain_potential(self.frames, self.elastic[0:6], self.elastic[6:], self.tension)

    def blocks(self, key: str, upper, matrix) -> dict:
        """The blocks ``key``_tt, _tp, _to of ``upper`` (the theta rows, already carried by g) and _pp, _po, _oo of
        the elastic ``matrix``."""
        out = {f"{key}_tt": upper[:, 0:3], f"{key}_tp": upper[:, 3:9], f"{key}_to": upper[:, 9:]} if upper is not None \
            else {}
        return out | {f"{key}_pp": matrix[0:6, 0:6], f"{key}_po": matrix[0:6, 6:], f"{key}_oo": matrix[6:, 6:]}


def _chain_template(graph) -> ca.Function:
    """(angles, elastic, z', g, the passive angles' drift, tension, df/dtheta row, chain angle, p) -> the
    :data:`CHAIN_BLOCKS` of one chain: its terms M_z, c_z in its coordinates z = (angles, elastic) (c_z with
    the potential's gradient) carried to (theta; elastic) by G = [g 0; 0 I] (g: the angles' rows over
    theta), M = G' M_z G, h = G' (c_z + M_z dG/dt q') with the axial load's share through the tension and
    the Rayleigh damping of the chain's links (the gradient of their dissipation function in z'). The blocks
    come out dense and apart (the lower blocks of M are the transposes of its upper ones), so the assembly
    only adds and places them."""
    c_ = _ChainSymbols(graph)
    energy, p, z, elastic, g = c_.energy, c_.p, c_.z, c_.elastic, c_.g
    m = energy.layout.chain_size
    rates, angle_drift, dtension = ca.SX.sym("rates", 9 + m), ca.SX.sym("angle_drift", 2), ca.SX.sym("dtension", 3)
    M, c = ca.SX(9 + m, 9 + m), ca.SX(9 + m, 1)
    for link in LINKS:
        origin, R = energy.link_frame(c_.frames, link)
        xi = c_.coordinates[link]
        W = ca.mtimes(R.T, ca.jtimes(R, z, rates))
        v = ca.vertcat(ca.mtimes(R.T, ca.jtimes(origin, z, rates)), W[2, 1], W[0, 2], W[1, 0], ca.jtimes(xi, z, rates))
        A = ca.jacobian(v, rates)
        M_b, Q_b = _body_template(energy.bodies[link], p, f"delta_{link}_body")(xi, v, p)
        M += ca.mtimes([A.T, M_b, A])
        c += ca.mtimes(A.T, ca.mtimes(M_b, ca.jtimes(v, z, rates)) + Q_b)
    gravity, strain, axial = c_.potential
    c += ca.gradient(gravity + strain + axial, z) + ca.mtimes(M[:, 1:3], angle_drift)
    c += ca.gradient(energy.chain_dissipation(c_.frames, elastic[0:6], elastic[6:], z, rates,
                                              energy.P["damping.alpha"], energy.P["damping.beta"]), rates)
    h_t = ca.mtimes(g.T, c[0:3])
    if energy.axial_load:
        h_t += dtension * ca.gradient(axial, c_.tension)
    h_e = c[3:]
    upper = ca.mtimes(g.T, ca.horzcat(ca.mtimes(M[0:3, 0:3], g), M[0:3, 3:]))
    blocks = c_.blocks("M", upper, M[3:, 3:]) | {"h_t": h_t, "h_p": h_e[0:6], "h_o": h_e[6:]}
    names = ["angles", "elastic", "rates", "g", "angle_drift", "tension", "dtension", "chain_angle", "p"]
    return ca.Function("delta_chain", [c_.angles, elastic, rates, g, angle_drift, c_.tension, dtension,
                                       c_.chain_angle, p],
                       [ca.densify(blocks[key]) for key in CHAIN_BLOCKS], names, list(CHAIN_BLOCKS), {"cse": True})


def _stiffness_template(graph) -> ca.Function:
    """(angles, elastic, g, tension, chain angle, p) -> the :data:`STIFFNESS_BLOCKS` of one chain: the
    Gauss-Newton stiffness of its strain and axial-load energies
    (:meth:`~flexfmu.dynamics.delta.body_energies.BodyEnergies.chain_stiffness`) over every coordinate of z,
    carried to (theta; elastic): the stiff part of the Jacobian, with how the strain of a deformed chain
    resists the joint angles."""
    c_ = _ChainSymbols(graph)
    K_z = c_.energy.chain_stiffness(c_.frames, c_.elastic[0:6], c_.elastic[6:], c_.tension, c_.z)
    upper = ca.mtimes(c_.g.T, ca.horzcat(ca.mtimes(K_z[0:3, 0:3], c_.g), K_z[0:3, 3:]))
    blocks = c_.blocks("K", upper, K_z[3:, 3:])
    names = ["angles", "elastic", "g", "tension", "chain_angle", "p"]
    return ca.Function("delta_chain_stiffness", [c_.angles, c_.elastic, c_.g, c_.tension, c_.chain_angle, c_.p],
                       [ca.densify(blocks[key]) for key in STIFFNESS_BLOCKS], names, list(STIFFNESS_BLOCKS),
                       {"cse": True})


class _Assembly:
    """The global M, h and elastic K, D of the Delta from its templates (see the module docstring)."""

    def __init__(self, graph):
        self.graph = graph
        self.kinematics = _kinematics_template(graph)
        self.chain = _chain_template(graph)
        self.stiffness = _stiffness_template(graph)
        self.platform = self._platform_template()
        self.m = graph.elastic.chain_size
        self.n = 3 + graph.elastic.size
        self.index = {row.name: k for k, row in enumerate(graph.parameter_table)}

    def _platform_template(self) -> ca.Function:
        """(J, dJ/dt theta', theta', dP', p) -> (M_tt, M_tp, M_pp, h_t, h_p): the platform, the rotors and the
        motors' friction. The platform's T = m/2 |J theta' + dP'|^2 + 1/2 rot' I rot' and
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
        h_t = ca.mtimes(J.T, load) + P["motor.viscous_friction"] * rate
        h_p = ca.vertcat(load, ca.SX.zeros(3)) + P["damping.alpha"] * ca.mtimes(M_pp, platform_rate)
        return ca.Function("delta_platform", [J, drift, rate, platform_rate, self.graph.p],
                           [ca.densify(x) for x in (M_tt, M_tp, M_pp, h_t, h_p)], {"cse": True})

    def _chains(self, q, qd, p, template, stiffness=False):
        """Per chain (its first own coordinate in q, its blocks of ``template``), and the kinematics' outputs."""
        m, theta, rate = self.m, q[:3], qd[:3]
        J, drift, J_angles, angle_drift, angles, tensions, dtension = self.kinematics(theta, rate, p)
        chains = []
        for i in range(3):
            offset = 9 + i * m
            elastic = ca.vertcat(q[3:9], q[offset:offset + m])
            g = ca.vertcat(ca.MX(ca.DM.eye(3)[i, :]), J_angles[i, :], J_angles[3 + i, :])
            z_angles = ca.vertcat(theta[i], angles[i], angles[3 + i])
            if stiffness:
                outputs = template(z_angles, elastic, g, tensions[i], CHAIN_ANGLES[i], p)
                names = STIFFNESS_BLOCKS
            else:
                rates = ca.vertcat(ca.mtimes(g, rate), qd[3:9], qd[offset:offset + m])
                outputs = template(z_angles, elastic, rates, g, ca.vertcat(angle_drift[i], angle_drift[3 + i]),
                                   tensions[i], dtension[i, :].T, CHAIN_ANGLES[i], p)
                names = CHAIN_BLOCKS
            chains.append((offset, dict(zip(names, outputs))))
        return chains, (J, drift)

    def dynamics(self, q, qd, p):
        """(M, h, blocks) at (q, qd): M qdd + h = B u (MX: calls of the templates, blocks put together), and
        the blocks of M by name (the shared ones summed over the chains, then per chain) for
        :meth:`structure`. Chain i's own coordinates sit at 9 + i m; the platform's (3..8) are shared."""
        chains, (J, drift) = self._chains(q, qd, p, self.chain)
        shared = dict(zip(("M_tt", "M_tp", "M_pp", "h_t", "h_p"), self.platform(J, drift, qd[:3], qd[3:9], p)))
        for _, blocks in chains:
            shared = {key: shared[key] + blocks[key] for key in shared}
        M = _from_blocks(self.n, _symmetric_placements(shared, chains, "M"))
        h = ca.vertcat(shared["h_t"], shared["h_p"], *(blocks["h_o"] for _, blocks in chains))
        return M, h, (shared, chains)

    def structure(self, q, p, mass_blocks):
        """(K, D) at q, for the stiff integrators' iteration matrices, from the stiffness template and the
        ``mass_blocks`` of :meth:`dynamics` at the same q: K the elastic stiffness (the Gauss-Newton stiffness of
        the strain and axial-load energy over every coordinate), D the damping as
        :meth:`flexfmu.dynamics.delta.graph.DeltaGraph.pose_structure` defines it (the motors' friction and
        alpha M + beta K over the elastic coordinates)."""
        chains, _ = self._chains(q, ca.MX(q.numel(), 1), p, self.stiffness, stiffness=True)
        shared = {key: ca.MX(*shape) for key, shape in (("K_tt", (3, 3)), ("K_tp", (3, 6)), ("K_pp", (6, 6)))}
        for _, blocks in chains:
            shared = {key: shared[key] + blocks[key] for key in shared}
        K = _from_blocks(self.n, _symmetric_placements(shared, chains, "K"))
        alpha, beta = (p[self.index[f"damping.{name}"]] for name in ("alpha", "beta"))
        mass_shared, mass_chains = mass_blocks
        # D has the motor rows of M as explicit zeros (but for the friction), so that M, K and D share one
        # sparsity and the step's M + c D + c^2 K adds them entry by entry, with no projection
        friction = p[self.index["motor.viscous_friction"]] * ca.MX.eye(3)
        damping = {"D_pp": alpha * mass_shared["M_pp"] + beta * shared["K_pp"], "D_tt": friction,
                   "D_tp": ca.MX.zeros(3, 6)}
        damping_chains = [(first, {"D_to": ca.MX.zeros(3, self.m)} | {
            f"D_{part}": alpha * masses[f"M_{part}"] + beta * stiff[f"K_{part}"] for part in ("po", "oo")})
                          for (first, masses), (_, stiff) in zip(mass_chains, chains)]
        D = _from_blocks(self.n, _symmetric_placements(damping, damping_chains, "D"))
        return K, D


def _seeded(observed, q, qd, qdd, p, s, x, dx, dqdd, n):
    """The forward derivative of the outputs observed(q, qd, qdd) along (dx, dqdd)."""
    xs, a, da = ca.MX.sym("x", 2 * n), ca.MX.sym("a", n), ca.MX.sym("da", n)
    ps, ss = ca.MX.sym("p", p.numel()), ca.MX.sym("s", s.numel())
    dxs = ca.MX.sym("dx", 2 * n)
    seed = ca.Function("observed_seed", [xs, a, ps, ss, dxs, da], [
        ca.jtimes(observed(xs[:n], xs[n:], a, ps, ss), ca.vertcat(xs, a), ca.vertcat(dxs, da))])
    return seed(x, qdd, p, s, dx, dqdd)


def _symmetric_placements(shared: dict, chains, key: str) -> list:
    """The placements (row, column, block, transposed) of the symmetric q x q matrix ``key``: the blocks
    ``shared`` by the chains (tt, tp, pp), then each chain's own (po, oo, to), every upper block also placed
    transposed below the diagonal."""
    out = [(3, 3, shared[f"{key}_pp"], False), (0, 0, shared[f"{key}_tt"], False)]
    upper = [(0, 3, shared[f"{key}_tp"])]
    for first, blocks in chains:
        out.append((first, first, blocks[f"{key}_oo"], False))
        upper += [(3, first, blocks[f"{key}_po"]), (0, first, blocks[f"{key}_to"])]
    return out + [(row, column, block, False) for row, column, block in upper] + [
        (column, row, block, True) for row, column, block in upper]


def _from_blocks(n: int, placements) -> ca.MX:
    """The n x n MX matrix holding the dense ``placements`` (row, column, block, transposed), which must not
    overlap, and zeros elsewhere: one gather of the blocks' entries into the matrix's nonzeros, in column order
    (a vertical concatenation of matrices would transpose them). A block placed ``transposed`` is gathered from
    the entries of the same block object placed elsewhere, transposed by the gather's indices, not by an
    operation."""
    entries, rows, columns, index, k = [], [], [], [], 0
    starts = {}  # id of a block placed (alive in ``placements`` throughout) -> where its entries start
    for _, _, block, _ in placements:
        if id(block) not in starts:
            starts[id(block)] = k
            entries.append(ca.vec(ca.densify(block)))
            k += block.numel()
    for row, column, block, transposed in placements:
        r, c = block.shape
        for b in range(c):
            for a in range(r):
                rows.append(row + (b if transposed else a))
                columns.append(column + (a if transposed else b))
                index.append(starts[id(block)] + a + b * r)
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
    M, h, blocks = assembly.dynamics(q, qd, p)
    f = ca.mtimes(B, um) - h
    K, D = assembly.structure(q, p, blocks)
    mass_form = ca.Function("mass_form", [xm, um, pcm], [M, f, K, D], ["x", "u", "pc"], ["M", "f", "K", "D"])
    # M qdd = f by an LDL' factor in straight-line code (flexfmu.codegen.ldl)
    ldl = ldl_functions(M.sparsity())
    factors = ldl.factors(M)
    qdd_m = ldl.solve(*factors, f)
    state_derivative = ca.Function("state_derivative", [xm, um, pcm], [ca.vertcat(qd, qdd_m)],
                                   ["x", "u", "pc"], ["xdot"])
    # the Delta's outputs are positions and rates: unless they read qdd, the output function solves nothing
    y_m = observed(q, qd, qdd_m if ca.depends_on(packed, qdd) else ca.MX.zeros(n), p, s)
    outputs = ca.Function("outputs", [xm, um, pcm], [y_m], ["x", "u", "pc"], ["y"])
    # forward derivatives: M dqdd = -(dM qdd - df) with qdd held, solved with the same factor, so the
    # factorisation itself is never differentiated (its derivative would be the largest code of all)
    dx, du, a = ca.MX.sym("dx", 2 * n), ca.MX.sym("du", nu), ca.MX.sym("a", n)
    residual = ca.Function("residual_seed", [xm, um, pcm, a, dx, du],
                           [ca.jtimes(ca.mtimes(M, a) - f, ca.vertcat(xm, um), ca.vertcat(dx, du))])
    dqdd = -ldl.solve(*factors, residual(xm, um, pcm, qdd_m, dx, du))
    directional = ca.Function("directional", [xm, um, pcm, dx, du],
                              [ca.vertcat(dx[n:], dqdd), _seeded(observed, q, qd, qdd_m, p, s, xm, dx, dqdd, n)],
                              ["x", "u", "pc", "dx", "du"], ["dxdot", "dy"])

    qn, qdn, v0, step = ca.MX.sym("q", n), ca.MX.sym("qd", n), ca.MX.sym("v0", n), ca.MX.sym("h")
    Mn, fn, Kn, Dn = mass_form(ca.vertcat(qn, qdn), um, pcm)
    # both solves by straight-line LDL' factors (flexfmu.codegen.ldl), like the Rosenbrock step's
    r = qdn - v0 - step / 2 * ldl.solve(*ldl.factors(Mn), fn)
    iteration = Mn + step / 2 * Dn + step**2 / 4 * Kn
    correction = ldl.solve(*ldl.factors(iteration), sparse_product(Mn, r))
    newton = ca.Function("newton_correction", [qn, qdn, v0, um, pcm, step], [correction],
                         ["q", "qd", "v0", "u", "pc", "h"], ["dw"])
    return CompiledDynamics(constants, state_derivative, outputs, directional, newton, mass_form)
