"""The spatial kind: serial chains in three dimensions whose links bend in two planes, twist and stretch.

Specification :mod:`flexfmu.spec.spatial` (``docs/spatial.md``), graph
:class:`~flexfmu.dynamics.spatial.chain.SpatialChain`, joint torques
planned by collocation; scenarios follow a joint-space quintic.
"""

from functools import partial

from flexfmu.control.planners import COLLOCATION
from flexfmu.control.reference_kinds import QUINTIC
from flexfmu.dynamics.spatial.chain import SpatialChain
from flexfmu.kinds.arm_kind import ArmKind, held_home_frequencies
from flexfmu.modes.families import FAMILIES
from flexfmu.spec.spatial import spatial_arm_from_dict

SPATIAL = ArmKind(
    name="spatial",
    summary="a serial chain in space: joints on any axis, links that bend in two planes, twist and stretch",
    load=partial(spatial_arm_from_dict, families=FAMILIES),
    graph=SpatialChain,
    planner=COLLOCATION,
    references=(QUINTIC,),
    home_frequencies=held_home_frequencies,
)
