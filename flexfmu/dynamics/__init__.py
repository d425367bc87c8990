"""Arm dynamics as casadi.Functions with metadata (the Model of DESIGN.md)."""

from flexfmu.dynamics.metadata import Coordinate, Parameter, Signal
from flexfmu.dynamics.model import Model, build_model

__all__ = ["Coordinate", "Model", "Parameter", "Signal", "build_model"]
