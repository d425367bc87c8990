"""flexfmu: dynamics of planar flexible robot arms, described in TOML.

An arm is written down in a TOML specification (see ``docs/spec.md``) and
loaded with :func:`load_arm` into plain, frozen dataclasses. This top-level
module re-exports the specification layer, which needs no CasADi, and
loads the dynamics (:func:`build_model`, :class:`Model`) on first use, so
``import flexfmu`` stays cheap for tools that only read arms.
"""

__version__ = "0.1.0"

from flexfmu.spec import (
    Arm,
    FlexibleLink,
    Joint,
    LumpedMass,
    Modes,
    Payload,
    RigidLink,
    SpecError,
    arm_from_dict,
    load_arm,
)

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
    "build_model",
    "load_arm",
    "Model",
]


def __getattr__(name: str):
    """Import the CasADi-based dynamics only when they are asked for."""
    if name in ("build_model", "Model"):
        from flexfmu import dynamics

        return getattr(dynamics, name)
    raise AttributeError(f"module 'flexfmu' has no attribute {name!r}")
