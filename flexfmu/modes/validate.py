"""End-condition checks for user mode shapes.

The link frame decides which end values must vanish: a ``tangent`` frame
measures deflection from the root tangent (``phi(0) = phi'(0) = 0``), a
``chord`` frame from the line through both ends (``phi(0) = phi(1) = 0``).
Shapes that break this would silently double-count rigid motion, so they are
rejected up front.
"""

from __future__ import annotations

import numpy as np

from flexfmu.modes.quadrature import unit_rule
from flexfmu.modes.user import UserShapes

_TOLERANCE = 1e-9

_CONDITIONS = {
    "tangent": (("phi(0)", 0.0, 0), ("phi'(0)", 0.0, 1)),
    "chord": (("phi(0)", 0.0, 0), ("phi(1)", 1.0, 0)),
}


def check_user_frame(shapes: UserShapes, frame: str) -> None:
    """Raise ValueError if a shape violates the end conditions of ``frame``.

    Values are compared with ``1e-9`` times the shape's largest magnitude on
    [0, 1] (at least 1), so the check does not depend on how shapes are scaled.
    """
    nodes, _ = unit_rule()
    sizes = [max(1.0, float(np.max(np.abs(v)))) for v in shapes.derivative(nodes, 0)]
    for label, xi, order in _CONDITIONS[frame]:
        for k, (value, size) in enumerate(zip(shapes.derivative(xi, order), sizes), start=1):
            if abs(float(value)) > _TOLERANCE * size:
                raise ValueError(
                    f"user mode {k} ({shapes.expressions[k - 1]}) has {label} = {float(value):.3g}; "
                    f"the {frame} frame needs 0"
                )
