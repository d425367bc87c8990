"""flexfmu: dynamics of flexible robot arms, described in TOML, exported as FMUs.

An arm is written down in a TOML specification (see ``docs/spec.md``) and
loaded with :func:`load_arm` into plain, frozen dataclasses; :func:`build_model`
builds its dynamics (a :class:`Model`). Both dispatch on the arm's kind
through the table of kinds (:mod:`flexfmu.kinds`), which brings in CasADi,
so they are imported on first use: ``import flexfmu`` alone stays cheap, and
the specification's dataclasses, re-exported here, need no CasADi.
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
    """Import the table of kinds (and with it CasADi) only when its entry points are asked for."""
    if name in ("load_arm", "arm_from_dict", "build_model", "Model"):
        from flexfmu import kinds

        return getattr(kinds, name)
    raise AttributeError(f"module 'flexfmu' has no attribute {name!r}")
