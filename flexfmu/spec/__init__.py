"""Arm specification: plain dataclasses, TOML reading and validation.

``flexfmu.load_arm`` and ``flexfmu.arm_from_dict`` (:mod:`flexfmu.kinds`)
read a file with :func:`flexfmu.spec.load.read_arm_file` and validate it
with the loader of its kind.
"""

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

__all__ = [
    "Arm",
    "FlexibleLink",
    "Joint",
    "LumpedMass",
    "Modes",
    "Payload",
    "RigidLink",
    "SpecError",
]
