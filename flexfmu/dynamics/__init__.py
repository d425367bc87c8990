"""Arm dynamics as casadi.Functions with metadata: the Model every arm kind builds.

Beside the kinds' own subpackages (``planar``, ``spatial``, ``delta``)
stands only what they share: the Model and its contracts (``model``), its
assembly on a kind's graph (``build``), the metadata records, prescribed
joints (``drives``), linearisation (``linear``), and the parts serial
chains share (``body_layout``, ``forces``, ``chain_outputs``,
``parameters``, ``graph_dynamics``). See docs/architecture.md.
"""

from flexfmu.dynamics.metadata import Coordinate, Parameter, Signal
from flexfmu.dynamics.model import CompiledDynamics, Model

__all__ = ["CompiledDynamics", "Coordinate", "Model", "Parameter", "Signal"]
