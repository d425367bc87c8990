"""The delta kind: a Delta robot with finite-element links, its platform carried by three closed chains.

Specification :mod:`flexfmu.spec.delta` (``docs/delta.md``), graph
:class:`~flexfmu.dynamics.delta.graph.DeltaGraph` (paper 003), a
pick-and-place planned on the flexible closed loop; scenarios follow
platform paths through the inverse kinematics, or a joint-space quintic.
"""

import dataclasses

from flexfmu.control.planners import PICK_AND_PLACE
from flexfmu.control.reference_kinds import INVERTED_U, PLATFORM_CIRCLE, QUINTIC
from flexfmu.dynamics.delta.frequencies import natural_frequencies
from flexfmu.dynamics.delta.graph import DeltaGraph
from flexfmu.dynamics.delta.reduction import Reduction
from flexfmu.kinds.arm_kind import HOME_FREQUENCIES, ArmKind
from flexfmu.spec.delta import delta_arm_from_dict


def home_frequencies(model) -> dict:
    """The first natural frequencies of the Delta robot of ``model`` at its home position with the motors held,
    about the static deflection under gravity (:func:`flexfmu.dynamics.delta.frequencies.natural_frequencies`),
    with the geometric stiffness of the links' axial load when the arm's ``elements.axial_load`` keeps it,
    else saying that it is left out; of the model as reduced and of the full finite-element model."""
    arm = model.arm
    omega = natural_frequencies(arm, arm.home, HOME_FREQUENCIES)
    full = natural_frequencies(arm, arm.home, HOME_FREQUENCIES, reduction=Reduction("none"))
    load = ("with the geometric stiffness of the links' axial load" if arm.elements.axial_load else
            "without the geometric stiffness of the links' axial load (the arm's elements.axial_load is false)")
    return {"where": f"at home {list(arm.home)} m, motors held, about the static deflection under gravity {load}",
            "position": list(arm.home), "rad/s": [float(w) for w in omega], "full rad/s": [float(w) for w in full]}


def unreduced(arm):
    """The Delta robot ``arm`` with every nodal value of its links (``elements.reduction = "none"``)."""
    return dataclasses.replace(arm, elements=dataclasses.replace(arm.elements, reduction="none"))


DELTA = ArmKind(
    name="delta",
    summary="a Delta robot (paper 003): three motor-driven chains of finite-element links carrying a platform",
    load=delta_arm_from_dict,
    graph=DeltaGraph,
    planner=PICK_AND_PLACE,
    references=(PLATFORM_CIRCLE, INVERTED_U, QUINTIC),
    home_frequencies=home_frequencies,
    unreduced=unreduced,
)
