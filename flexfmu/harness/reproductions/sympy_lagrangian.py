"""A plain sympy Lagrangian derivation of an N-link pinned-pinned arm.

The baseline of the derivation benchmark and of the paper 000 Table 1
reproduction: the way paper 000's "traditional method" works (write T and V
symbolically, differentiate), in sympy. Links are uniform beams with two sine
modes in chord frames, as in paper 000. Unlike the paper's traditional method
it does not integrate over the links symbolically: the modal integrals are
written in closed form, which makes it faster than the paper's baseline.
"""

from __future__ import annotations

import sympy as sp


def derive(links: int, length=0.5, rho=0.5, EI=5.0, g=9.81, modes=2):
    """Return (M, h) as sympy matrices for ``links`` flexible links of ``length`` (m), mass per length
    ``rho`` (kg/m), bending stiffness ``EI`` (N m^2) and ``modes`` sine modes each, under gravity ``g``
    (m/s^2) along -y."""
    theta = sp.symbols(f"theta1:{links + 1}")
    dtheta = sp.symbols(f"dtheta1:{links + 1}")
    f = [sp.symbols(f"f{i}_1:{modes + 1}") for i in range(1, links + 1)]
    df = [sp.symbols(f"df{i}_1:{modes + 1}") for i in range(1, links + 1)]
    q = list(theta) + [x for fi in f for x in fi]
    qd = list(dtheta) + [x for fi in df for x in fi]
    L, m = sp.nsimplify(length), sp.nsimplify(rho) * sp.nsimplify(length)
    a = [m * (1 - (-1) ** k) / (k * sp.pi) for k in range(1, modes + 1)]
    b = [m * L * (-(-1) ** k) / (k * sp.pi) for k in range(1, modes + 1)]
    T, V = 0, 0
    ox, oy, phi = 0, 0, 0
    for i in range(links):
        phi = phi + theta[i]
        c, s = sp.cos(phi), sp.sin(phi)
        w = sum(ak * fk for ak, fk in zip(a, f[i]))
        wd = sum(ak * fk for ak, fk in zip(a, df[i]))
        sx, sy = m * L / 2, w
        J0 = m * L**2 / 3 + sum(m / 2 * fk**2 for fk in f[i])
        oxd = sum(sp.diff(ox, x) * xd for x, xd in zip(q, qd))
        oyd = sum(sp.diff(oy, x) * xd for x, xd in zip(q, qd))
        phid = sum(dtheta[: i + 1])
        # int R S r dm and int R Phi fd dm in base coordinates
        cx, cy = -(s * sx + c * sy), c * sx - s * sy
        T += sp.Rational(1, 2) * (
            m * (oxd**2 + oyd**2) + 2 * (oxd * (phid * cx - s * wd) + oyd * (phid * cy + c * wd))
            + phid**2 * J0 + 2 * phid * sum(bk * dk for bk, dk in zip(b, df[i]))
            + sum(m / 2 * dk**2 for dk in df[i])
        )
        V += g * (m * oy + s * sx + c * sy)
        V += sum(sp.nsimplify(EI) * (k * sp.pi) ** 4 / (4 * L**3) * fk**2 for k, fk in enumerate(f[i], start=1))
        ox, oy = ox + L * c, oy + L * s
    dT_dqd = sp.Matrix([sp.diff(T, x) for x in qd])
    M = dT_dqd.jacobian(qd)
    h = dT_dqd.jacobian(q) * sp.Matrix(qd) - sp.Matrix([sp.diff(T, x) for x in q]) + sp.Matrix(
        [sp.diff(V, x) for x in q]
    )
    return M, h
