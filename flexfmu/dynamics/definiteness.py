"""Whether a mass matrix is positive definite, judged alike wherever it is asked (at the build, at a rest)."""

from __future__ import annotations

import numpy as np


def unit_diagonal(M: np.ndarray) -> np.ndarray:
    """``M`` (or a stack of matrices, ``M[k]``) scaled to a unit diagonal, D^-1/2 M D^-1/2: a congruence, so the
    signs of its eigenvalues stay, and its units go, so one threshold serves every arm. Not finite where a
    diagonal entry is not positive."""
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = 1.0 / np.sqrt(np.einsum("...ii->...i", M))
    return M * scale[..., :, None] * scale[..., None, :]
