"""Paper 000 (Yu & Chen 2019): free-vibration frequencies (section 4.1) and derivation times (Table 1).

Free vibration. The paper releases its arm at (45 deg, -45 deg) from a
support, lets it vibrate under gravity and reads w1 = 12.246 and w2 = 40.82
rad/s off the spectrum of the simulated tip acceleration (a 10 s record:
bins 0.63 rad/s apart). Its motors hold the hubs (geared 64:1 and 32:1),
so the vibration is that of the links about their static sag with the
encoders held: :func:`flexfmu.dynamics.linear.held_frequencies`. With
paper 000's two sine modes per link (the shipped arm) the assumed-mode
method gives upper bounds, 13-15 % high; with the exact clamped-mass modes
of each link (four each) the frequencies converge to 12.76 and 38.26 rad/s.

Table 1. The paper times its closed-form ("proposed") derivation against a
"traditional" symbolic Lagrangian in Mathematica. Here the same run times
flexfmu's closed-form build against a plain sympy Lagrangian of the same
arm (``sympy_lagrangian``, each derivation from a cleared sympy cache); the
published figure is the ratio traditional / proposed, the claim that the
proposed method is faster.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np

import flexfmu
from flexfmu.dynamics.linear import held_frequencies
from flexfmu.harness.reproductions.rows import Row, relative_row

PUBLISHED_OMEGA = (12.246, 40.82)  # rad/s, paper 000 section 4.1
POSE = (np.pi / 4, -np.pi / 4)
TABLE_1 = {1: (0.36, 41.63), 2: (0.92, 106.28), 3: (4.21, 212.57)}  # N: (proposed s, traditional s)


def _converged(arm, count: int = 4):
    links = tuple(dataclasses.replace(link, modes=dataclasses.replace(link.modes, family="clamped-mass", count=count,
                                                                      damping=(0.01,) * count))
                  for link in arm.links)
    return dataclasses.replace(arm, links=links)


def free_vibration(out: Path) -> list[Row]:
    """The two lowest frequencies of paper 000's arm with the hubs held at (45 deg, -45 deg) under
    gravity, with its own modes and converged; ``out`` is unused (no figure)."""
    arm = flexfmu.load_arm("yu_chen_2dof")
    shipped = held_frequencies(flexfmu.build_model(arm), POSE)[:2]
    converged = held_frequencies(flexfmu.build_model(_converged(arm)), POSE)[:2]
    source = "Paper 000, section 4.1 (spectrum of figure 10(b))"
    note_converged = ("Hubs held by the geared motors, vibration about the static sag under gravity; exact "
                      "clamped-mass modes (4 per link). The paper reads its values off an FFT of a 10 s record "
                      "(0.63 rad/s bins) of its own 2-sine-mode model.")
    note_shipped = ("With the paper's 2 sine modes per link (the shipped arm) the assumed-mode frequencies are "
                    "upper bounds (Rayleigh-Ritz) and come out 13-15 % high; more modes converge down to the row "
                    "above.")
    rows = [relative_row(source, f"w{k}, hubs held, converged modes", published, ours, "rad/s", 0.10, note_converged)
            for k, (published, ours) in enumerate(zip(PUBLISHED_OMEGA, converged), start=1)]
    rows += [relative_row(source, f"w{k}, hubs held, 2 sine modes per link", published, ours, "rad/s", 0.20,
                          note_shipped)
             for k, (published, ours) in enumerate(zip(PUBLISHED_OMEGA, shipped), start=1)]
    return rows


def derivation_times(out: Path, links=(1, 2, 3)) -> list[Row]:
    """Ratio of the sympy Lagrangian's derivation time to flexfmu's closed-form build, measured in this
    run, against paper 000 Table 1's traditional / proposed, for each number of ``links``; ``out`` is
    unused (no figure)."""
    import sympy

    from flexfmu.harness.reproductions.sympy_lagrangian import derive
    from flexfmu.spec.arm import Arm, FlexibleLink, Modes

    rows = []
    for count in links:
        # paper 000's model and the sympy baseline are linear in the deflections: no geometric stiffening
        link = FlexibleLink(0.5, 0.5, 5.0, Modes("pinned-pinned", 2, damping=(0.01, 0.01)), geometric_stiffening=False)
        arm = Arm(name=f"chain{count}", links=(link,) * count, gravity=(0.0, -9.81))
        ours, symbolic = [], []
        for _ in range(3):
            began = time.perf_counter()
            flexfmu.build_model(arm)
            ours.append(time.perf_counter() - began)
            sympy.core.cache.clear_cache()
            began = time.perf_counter()
            derive(count)
            symbolic.append(time.perf_counter() - began)
        proposed, traditional = TABLE_1[count]
        ratio = statistics.median(symbolic) / statistics.median(ours)
        rows.append(Row("Paper 000, Table 1", f"derivation time, traditional / proposed, N = {count}",
                        traditional / proposed, ratio, "1", "ours > 1 (the closed form is faster)", ratio > 1.0,
                        "Ours: a plain sympy Lagrangian against flexfmu's closed-form build, same run, medians of 3. "
                        "The sympy baseline writes the modal integrals in closed form instead of integrating "
                        "symbolically as the paper's traditional method does, so its ratio is far smaller."))
    return rows
