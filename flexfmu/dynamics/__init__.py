"""Planar-chain dynamics as casadi.Functions (the Model of DESIGN.md)."""

from flexfmu.dynamics.model import Model, build_model
from flexfmu.dynamics.parameters import Parameter
