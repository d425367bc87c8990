"""Per-element and per-chain templates of the Delta's equations of motion, for generated C.

The Model differentiates one global Lagrangian; generated C wants small
functions whose code appears once. Here the same energies are evaluated
element by element, each element in its link's frame:

* an element template (one for upper-link, one for lower-link elements)
  gives an element's mass matrix M_y and Lagrange terms c_y in its local
  coordinates y = (the chain's D-H angles phi1, phi2, phi3; the element's
  nodal values). In the link frame a point moves with
  V = a + omega x (s e_x + N delta) + N delta', where a and omega are the link's
  velocity and angular velocity; the nodal-value columns of dV/dy' are the
  shape functions (numbers), so the elastic block of M_y is the element
  mass matrix and Kane's form gives the rest (d/dt dT/dy' - dT/dy =
  sum m A'(A y'' + omega x V + dV/dt|y''=0) with A = dV/dy', an orthogonal
  change of frame of the global form). The sections' spin (omega_x + phi')
  is differentiated by AD. Potentials: gravity, strain and the axial-load
  term, with their gradients and Hessians in the nodal values;
* a chain-map template: the chain's nodal values as the linear map of the
  platform's and the chain's elastic coordinates (the joints, paper 003's
  S_i), with its Jacobian and velocity-product rates;
* the chain assembly (MX): every element's terms carried to the chain's
  coordinates z = (phi1, phi2, phi3, platform, own) by the chain rule.

:mod:`flexfmu.dynamics.delta.compiled` assembles the chains into the robot.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.delta.assembly import LINKS, chain_frames_from_angles, chain_nodes
from flexfmu.dynamics.delta.geometry import rot_z
from flexfmu.modes.elements import element_integrals, field_shapes, gauss_rule, points_for


def _vee(W):
    """The vector w of a skew matrix W = [w]x."""
    return ca.vertcat(W[2, 1], W[0, 2], W[1, 0])


def element_template(energy, link: str) -> ca.Function:
    """(angles, values, angle rates, value rates, s0, tension, chain angle, p) ->
    (M_y, c_y, K_strain, K_axial, dV/dtension) of one element of ``link`` starting at s0 along the link.

    Parameters
    ----------
    energy : DeltaEnergies
        Gives the layout, parameters (as symbols of p) and dimensions.
    link : str
        ``upper`` or ``lower``.
    """
    layout = energy.layout
    size = 2 * layout.node.size
    angles, values = ca.SX.sym("angles", 3), ca.SX.sym("values", size)
    angle_rates, value_rates = ca.SX.sym("angle_rates", 3), ca.SX.sym("value_rates", size)
    s0, tension, chain_angle, p = ca.SX.sym("s0"), ca.SX.sym("tension"), ca.SX.sym("chain_angle"), energy.P.vector
    y, y_rate = ca.vertcat(angles, values), ca.vertcat(angle_rates, value_rates)
    f = chain_frames_from_angles(rot_z(chain_angle), angles[0], angles[1], angles[2], energy.dims)
    props = energy.links[link]
    origin, R = (f.A, f.R_U) if link == "upper" else (f.B, f.R_L)
    l = props.length / layout.elements
    scaled = energy._scaled(values, l)
    scaled_rates = energy._scaled(value_rates, l)
    a = ca.mtimes(R.T, ca.jtimes(origin, angles, angle_rates))
    omega = _vee(ca.mtimes(R.T, ca.jtimes(R, angles, angle_rates)))

    approx = layout.approximation
    xi, w = gauss_rule(points_for(approx, 2), 1.0)
    N = field_shapes(approx, 1.0, xi, 0)
    N1 = field_shapes(approx, 1.0, xi, 1)
    n_y = y.numel()
    M, c, spin_energy = ca.SX(n_y, n_y), ca.SX(n_y, 1), 0
    for g in range(len(xi)):
        shape = [ca.DM(N[field][:, g]) for field in ("u", "v", "w")]
        r = ca.vertcat(*[ca.dot(n, scaled) for n in shape]) + ca.vertcat(s0 + xi[g] * l, 0, 0)
        V = a + ca.cross(omega, r) + ca.vertcat(*[ca.dot(n, scaled_rates) for n in shape])
        A = ca.jacobian(V, y_rate)
        acceleration = ca.cross(omega, V) + ca.jtimes(V, y, y_rate)
        weight = w[g] * l * props.mass_per_length
        M += weight * ca.mtimes(A.T, A)
        c += weight * ca.mtimes(A.T, acceleration)
        spin = omega[0] + ca.dot(ca.DM(N["phi"][:, g]), scaled_rates)
        spin_energy += 0.5 * w[g] * l * props.torsion_inertia * spin**2
    M_spin, momentum = ca.hessian(spin_energy, y_rate)
    M += M_spin
    c += ca.jtimes(momentum, y, y_rate) - ca.gradient(spin_energy, y)

    unit, g_vec = element_integrals(approx, 1.0), energy.gravity
    centre = origin * l + ca.mtimes(R, ca.vertcat(s0 * l + 0.5 * l * l, 0, 0))
    gravity = -props.mass_per_length * (ca.dot(g_vec, centre) + l * ca.dot(
        ca.mtimes(R.T, g_vec), ca.mtimes(ca.DM(unit.first_moment), scaled)))
    strain = 0.5 * (props.EA / l * ca.bilin(ca.DM(unit.axial), scaled, scaled)
                    + props.EIz / l**3 * ca.bilin(ca.DM(unit.bending_v), scaled, scaled)
                    + props.EIy / l**3 * ca.bilin(ca.DM(unit.bending_w), scaled, scaled)
                    + props.GJ / l * ca.bilin(ca.DM(unit.torsion), scaled, scaled))
    axial = 0
    if energy.axial_load:
        root, slope = energy._axial_forces(f, tension)[link]
        for k in range(len(xi)):
            dv, dw = (ca.dot(ca.DM(N1[field][:, k]), scaled) / l for field in ("v", "w"))
            axial += 0.5 * w[k] * l * (root + slope * (s0 + xi[k] * l)) * (dv**2 + dw**2)
    c += ca.gradient(gravity + strain + axial, y)
    K_strain = ca.hessian(strain, values)[0]
    K_axial = ca.hessian(axial, values)[0] if energy.axial_load else ca.SX(size, size)
    dV = ca.gradient(axial, tension) if energy.axial_load else ca.SX(1, 1)
    return ca.Function(f"delta_{link}_element", [angles, values, angle_rates, value_rates, s0, tension, chain_angle, p],
                       [M, c, K_strain, K_axial, dV])


def chain_map_template(energy) -> ca.Function:
    """(z, z', chain angle, p) -> (nodal values, their Jacobian in z, velocity-product rates) of one chain,
    z = (phi1, phi2, phi3, the platform's six elastic coordinates, the chain's own), values link by link,
    node by node."""
    m = energy.layout.chain_size
    z, z_rate, chain_angle = ca.SX.sym("z", 9 + m), ca.SX.sym("z_rate", 9 + m), ca.SX.sym("chain_angle")
    p = energy.P.vector
    f = chain_frames_from_angles(rot_z(chain_angle), z[0], z[1], z[2], energy.dims)
    nodes = chain_nodes(energy.layout, f, z[3:9], z[9:])
    values = ca.vertcat(*[v for link in LINKS for v in nodes[link]])
    J = ca.jacobian(values, z)
    return ca.Function("delta_chain_map", [z, z_rate, chain_angle, p],
                       [values, J, ca.jtimes(ca.mtimes(J, z_rate), z, z_rate)])


class ChainAssembly:
    """The chain's terms in its coordinates z from the element templates (MX; see the module docstring).

    Parameters
    ----------
    energy : DeltaEnergies
    """

    def __init__(self, energy):
        self.energy = energy
        self.elements = {link: element_template(energy, link) for link in LINKS}
        self.map = chain_map_template(energy)
        layout = energy.layout
        self.node_size, self.n = layout.node.size, layout.elements
        self.size = 9 + layout.chain_size

    def __call__(self, z, z_rate, tension, chain_angle, p):
        """(M_z, c_z, K_strain, K_axial, dV/dtension) of the chain at (``z``, ``z_rate``) with the lower
        link's static ``tension``, for the chain at ``chain_angle`` and parameters ``p`` (MX); the stiffness
        matrices are over z's elastic part z[3:]."""
        values, J, drift = self.map(z, z_rate, chain_angle, p)
        nz, ns, n = self.size, self.node_size, self.n
        M, c = ca.MX(nz, nz), ca.MX(nz, 1)
        K_strain, K_axial, dV = ca.MX(nz - 3, nz - 3), ca.MX(nz - 3, nz - 3), 0
        angles, angle_rates = z[0:3], z_rate[0:3]
        index = {row.name: k for k, row in enumerate(self.energy.P.table)}
        for li, link in enumerate(LINKS):
            l = p[index[f"{link}.length"]] / n
            for e in range(n):
                rows = slice((li * (n + 1) + e) * ns, (li * (n + 1) + e + 2) * ns)
                G = ca.vertcat(ca.horzcat(ca.MX.eye(3), ca.MX(3, nz - 3)), J[rows, :])
                value_rates = ca.mtimes(J[rows, :], z_rate)
                M_y, c_y, Ks, Ka, dV_e = self.elements[link](angles, values[rows], angle_rates, value_rates,
                                                             e * l, tension, chain_angle, p)
                drift_y = ca.vertcat(ca.MX(3, 1), drift[rows])
                M += ca.mtimes([G.T, M_y, G])
                c += ca.mtimes(G.T, c_y + ca.mtimes(M_y, drift_y))
                E = J[rows, 3:]
                K_strain += ca.mtimes([E.T, Ks, E])
                K_axial += ca.mtimes([E.T, Ka, E])
                dV += dV_e
        return M, c, K_strain, K_axial, dV
