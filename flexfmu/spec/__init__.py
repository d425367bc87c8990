"""Arm specification: plain dataclasses, TOML loading and validation."""

from flexfmu.spec.arm import (
    Arm,
    FlexibleLink,
    Joint,
    LumpedMass,
    Modes,
    Payload,
    RigidLink,
)
from flexfmu.spec.errors import SpecError
from flexfmu.spec.load import arm_from_dict, load_arm

__all__ = [
    "Arm",
    "FlexibleLink",
    "Joint",
    "LumpedMass",
    "Modes",
    "Payload",
    "RigidLink",
    "SpecError",
    "arm_from_dict",
    "load_arm",
]
