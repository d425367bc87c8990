"""The planar kind: serial chains of rigid and flexible links moving in a plane (the default kind).

Specification :mod:`flexfmu.spec.planar` (``docs/spec.md``), graph
:class:`~flexfmu.dynamics.planar.chain.PlanarChain` (``docs/dynamics.md``),
joint torques planned by collocation; scenarios follow a two-link tip circle
or a joint-space quintic.
"""

from functools import partial

from flexfmu.control.planners import COLLOCATION
from flexfmu.control.reference_kinds import CIRCLE, QUINTIC
from flexfmu.dynamics.planar.chain import PlanarChain
from flexfmu.kinds.arm_kind import ArmKind, held_home_frequencies
from flexfmu.modes.families import FAMILIES
from flexfmu.spec.planar import planar_arm_from_dict

PLANAR = ArmKind(
    name="planar",
    summary="a serial chain in a plane: rigid and assumed-mode links, flexible joints with rotors and gears, "
            "prescribed joints",
    load=partial(planar_arm_from_dict, families=FAMILIES),
    graph=PlanarChain,
    planner=COLLOCATION,
    references=(CIRCLE, QUINTIC),
    home_frequencies=held_home_frequencies,
)
