"""The registry of reproductions (run by ``flexfmu.harness.workflows.reproduce``; rows and entries in
``rows``): one line per entry.

To add one: a module here with a function ``rows(out) -> list[Row]`` (use
``relative_row`` for a published number and its relative tolerance), and a
line below. ``flexfmu reproduce`` runs them all; ``tests/test_reproduce.py``
fails on any row outside its tolerance.
"""

from __future__ import annotations

from flexfmu.harness.reproductions import (
    beams,
    paper000,
    paper001,
    paper002,
    paper003,
    paper004,
)
from flexfmu.harness.reproductions.rows import Reproduction

REPRODUCTIONS: tuple[Reproduction, ...] = (
    Reproduction("cantilever", "Clamped-free beam frequencies", beams.cantilever),
    Reproduction("clamped_mass", "Clamped beam with a tip mass: frequencies", beams.clamped_mass),
    Reproduction("paper000_free_vibration", "Paper 000: free-vibration frequencies", paper000.free_vibration),
    Reproduction("paper000_table1", "Paper 000, Table 1: derivation times", paper000.derivation_times),
    Reproduction("paper001_spinup", "Paper 001: the spin-up beam", paper001.spinup),
    Reproduction("paper001_rotating_beam", "Rotating clamped-free beam: frequencies (geometric stiffening)",
                 paper001.rotating_beam),
    Reproduction("paper002_zero_dynamics", "Paper 002: zero dynamics of a flexible link", paper002.zero_dynamics),
    Reproduction("paper003_tables", "Paper 003, Tables 2 and 3: Delta robot frequencies", paper003.tables),
    Reproduction("paper004_bang_bang", "Paper 004: bang-bang response", paper004.bang_bang, (paper004.FIGURE,)),
)
