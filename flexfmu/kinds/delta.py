"""The delta kind: a Delta robot with finite-element links, its platform carried by three closed chains.

Specification :mod:`flexfmu.spec.delta` (``docs/delta.md``), graph
:class:`~flexfmu.dynamics.delta.graph.DeltaGraph` (paper 003), a
pick-and-place planned on the flexible closed loop; scenarios follow
platform paths through the inverse kinematics, or a joint-space quintic.
"""

from flexfmu.control.planners import PICK_AND_PLACE
from flexfmu.control.reference_kinds import INVERTED_U, PLATFORM_CIRCLE, QUINTIC
from flexfmu.dynamics.delta.frequencies import natural_frequencies
from flexfmu.dynamics.delta.graph import DeltaGraph
from flexfmu.kinds.arm_kind import ArmKind
from flexfmu.spec.delta import delta_arm_from_dict

HOME_FREQUENCIES = 8  # how many flexfmu info reports: paper 003 tabulates eight


def home_frequencies(arm) -> dict:
    """The first natural frequencies of the Delta robot ``arm`` at its home position with the motors held
    (:func:`flexfmu.dynamics.delta.frequencies.natural_frequencies`)."""
    omega = natural_frequencies(arm, arm.home, HOME_FREQUENCIES)
    return {"position": list(arm.home), "rad/s": [float(w) for w in omega]}


DELTA = ArmKind(
    name="delta",
    summary="a Delta robot (paper 003): three motor-driven chains of finite-element links carrying a platform",
    load=delta_arm_from_dict,
    graph=DeltaGraph,
    planner=PICK_AND_PLACE,
    references=(PLATFORM_CIRCLE, INVERTED_U, QUINTIC),
    home_frequencies=home_frequencies,
)
