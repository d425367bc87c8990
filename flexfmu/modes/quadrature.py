"""Gauss-Legendre quadrature on the unit interval ``xi`` in [0, 1].

The modal integrals (mass, first moments, stiffness) are computed numerically
for every family so one routine serves beams and user shapes alike. A
composite rule keeps the per-panel oscillation small: with the default 32
panels of 24 nodes, products of cantilever modes up to beta ~ 65 (20 modes)
and their exp(-2 beta xi) boundary layers integrate to machine precision.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

PANELS = 32
ORDER = 24


@lru_cache(maxsize=8)
def unit_rule(panels: int = PANELS, order: int = ORDER) -> tuple[np.ndarray, np.ndarray]:
    """Return nodes and weights of a composite Gauss-Legendre rule on [0, 1].

    Parameters
    ----------
    panels : int
        Number of equal sub-intervals.
    order : int
        Gauss-Legendre nodes per sub-interval (exact for polynomials of
        degree ``2 * order - 1`` on each panel).

    Returns
    -------
    nodes, weights : numpy.ndarray
        Read-only arrays of length ``panels * order``; ``weights`` sum to 1.
    """
    x, w = np.polynomial.legendre.leggauss(order)
    h = 1.0 / panels
    left = np.arange(panels) * h
    nodes = (left[:, None] + 0.5 * h * (x[None, :] + 1.0)).ravel()
    weights = np.tile(0.5 * h * w, panels)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


PARTIAL_ORDER = 16


@lru_cache(maxsize=32)
def partial_rule(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of a composite Gauss-Legendre rule on [0, 1], small
    enough to be evaluated symbolically, for integrands made of ``count`` modes.

    Used for integrals up to a movable point (scale nodes and weights by its
    position): ``2 + count // 2`` panels of :data:`PARTIAL_ORDER` nodes keep
    the products of ``count`` cantilever slopes exact to ~1e-13.

    Parameters
    ----------
    count : int
        Number of modes in the integrand.

    Returns
    -------
    nodes, weights : numpy.ndarray
        Read-only arrays; ``weights`` sum to 1.
    """
    return unit_rule(2 + count // 2, PARTIAL_ORDER)
