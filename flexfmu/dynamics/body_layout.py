"""One body of a serial chain as the articulated-body passes see it, and the small algebra they share.

Planar and spatial chains (``flexfmu.dynamics.planar.articulated``,
``flexfmu.dynamics.spatial.articulated``) run the same three passes over
their links, one small template per body layout. :class:`BodyLayout` says
where one body's quantities sit: its constants in pc (named fields with
shapes, packed in order) and its velocity nu (the ``FRAME`` entries its
parent hands it, then the rotor rate of a flexible joint, then its modal
rates). Each chain kind subclasses it with its frame and fields;
:func:`symmetric_product` and :func:`small_spd_solve` are the dense algebra
of the inward pass, written out so that the templates' C is straight-line.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import casadi as ca


class BodyLayout(ABC):
    """Where one body's constants and velocities sit (see the module docstring).

    A subclass is a frozen dataclass holding ``modes`` (the body's modal coordinates) and ``flexible_joint``
    (a rotor angle of its own), with the class attribute ``FRAME`` (what a body hands its child) and the
    methods :meth:`fields` and :meth:`encoder_row`.
    """

    FRAME: ClassVar[int]
    modes: int
    flexible_joint: bool

    @abstractmethod
    def fields(self) -> list[tuple[str, tuple[int, int]]]:
        """(name, shape) of the body's constants, in packing order."""

    @abstractmethod
    def encoder_row(self, body: dict) -> ca.SX:
        """The row over nu of the encoder angle's rate psi' (a rigid joint's rotor turns with it); ``body``
        is the :meth:`unpack` of the constants."""

    @property
    def size(self) -> int:
        """Number of constants of one body."""
        return sum(r * c for _, (r, c) in self.fields())

    @property
    def coordinates(self) -> int:
        """Size of z: theta, alpha (flexible joint), modes."""
        return 1 + self.flexible_joint + self.modes

    @property
    def velocity(self) -> int:
        """Size of nu."""
        return self.FRAME + self.flexible_joint + self.modes

    @property
    def modal_columns(self) -> list[int]:
        """Position in nu of the modal rates."""
        return list(range(self.FRAME + self.flexible_joint, self.velocity))

    def pack(self, values: dict) -> ca.SX:
        """Stack the named ``values`` (every name of :meth:`fields`) into this body's constant vector."""
        return ca.vertcat(*[ca.vec(values[name] if isinstance(values[name], ca.SX) else ca.SX(values[name]))
                            for name, _ in self.fields()])

    def unpack(self, c) -> dict:
        """Inverse of :meth:`pack`: the named parts of the constant vector ``c``, each in its shape."""
        out, at = {}, 0
        for name, (r, k) in self.fields():
            out[name], at = ca.reshape(c[at:at + r * k], r, k), at + r * k
        return out

    def rows(self, body: dict) -> tuple[ca.SX, ca.SX]:
        """(motor, spring) rows over nu: the motor angle's rate (rotor of a flexible joint, psi' of a rigid
        one) and the spring twist alpha - psi (zero for a rigid joint); ``body`` is the :meth:`unpack` of the
        constants."""
        psi = self.encoder_row(body)
        if not self.flexible_joint:
            return psi, ca.SX(1, self.velocity)
        alpha = ca.SX(1, self.velocity)
        alpha[0, self.FRAME] = 1
        return alpha, alpha - psi


def symmetric_product(A: ca.SX, B: ca.SX) -> ca.SX:
    """``A``' ``B`` for a product known to be symmetric (A' X A with symmetric X,
    B = X A): the upper triangle computed once and mirrored, half the operations."""
    n = A.shape[1]
    out = ca.SX(n, n)
    for i in range(n):
        for j in range(i, n):
            out[i, j] = out[j, i] = ca.dot(A[:, i], B[:, j])
    return out


def small_spd_solve(A: ca.SX, B: ca.SX) -> ca.SX:
    """``A``^-1 ``B`` for a small symmetric positive definite A, by an unrolled LDL'.
    Products with 1/D let CasADi cancel D (1/D) where it appears."""
    n, zero = A.shape[0], ca.SX.zeros(1, B.shape[1])
    L = [[None] * n for _ in range(n)]
    inverse = [None] * n  # 1 / D
    D = [None] * n
    for j in range(n):
        D[j] = A[j, j] - sum((L[j][k] ** 2 * D[k] for k in range(j)), ca.SX(0))
        inverse[j] = 1 / D[j]
        for i in range(j + 1, n):
            L[i][j] = (A[i, j] - sum((L[i][k] * L[j][k] * D[k] for k in range(j)), ca.SX(0))) * inverse[j]
    y = [None] * n
    for i in range(n):
        y[i] = B[i, :] - sum((L[i][k] * y[k] for k in range(i)), zero)
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = y[i] * inverse[i] - sum((L[k][i] * x[k] for k in range(i + 1, n)), zero)
    return ca.vertcat(*x)
