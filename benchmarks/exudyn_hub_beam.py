"""A flexible link on a free hub under a known torque, simulated by EXUDYN: data flexfmu did not make.

EXUDYN (pip ``exudyn``, a test dependency) models the link with 2-D ANCF
cable elements (nodal positions and slopes; bending and axial strain taken
exactly, Kelvin-Voigt bending damping: moment = EI kappa + d dkappa/dt),
clamped to a rigid hub (a generic joint fixing the first node's position and
slope angle to the hub) that turns freely about the origin (revolute joint)
under a torque held over each sample, as an FMU's input is held. Time
integration: generalized-alpha (the spin-up reference's settings,
``benchmarks.exudyn_spinup.fixed_step_settings``). Recorded at every sample: the hub
angle and the tip's transverse deflection in the hub frame, what flexfmu
calls ``joint[1].angle`` and ``link[1].deflection``.

Kelvin-Voigt damping is proportional to the bending stiffness, so in the
clamped-free modes phi_k of frequency omega_k its ratio is
zeta_k = d omega_k / (2 EI): what an assumed-mode model's per-mode damping
ratio should find.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from benchmarks.exudyn_spinup import fixed_step_settings

CLAMPED_FREE_ROOTS = (1.8751040687119611, 4.6940911329739246, 7.8547574382376126)  # beta_k L of cos cosh = -1


@dataclass(frozen=True)
class HubBeam:
    """The link (length m, mass per length kg/m, EI N m^2, EA N, Kelvin-Voigt coefficient d N m^2 s) and
    the hub's rotary inertia (kg m^2)."""

    length: float = 1.0
    mass_per_length: float = 0.27
    EI: float = 2.33
    EA: float = 7.0e6
    bending_damping: float = 6.0e-3
    hub_inertia: float = 0.01

    def clamped_free_frequency(self, k: int) -> float:
        """omega_k of the k-th clamped-free bending mode, rad/s."""
        beta = CLAMPED_FREE_ROOTS[k - 1] / self.length
        return beta**2 * np.sqrt(self.EI / self.mass_per_length)

    def damping_ratio(self, k: int) -> float:
        """The Kelvin-Voigt damping as the ratio of the k-th clamped-free mode: d omega_k / (2 EI)."""
        return self.bending_damping * self.clamped_free_frequency(k) / (2.0 * self.EI)

    def arm(self, EI: float | None = None, modes: int = 3) -> dict:
        """The flexfmu arm of this hub and link (a table for ``flexfmu.arm_from_dict``): one clamped-free
        link on a rigid joint whose rotor is the hub, its modes damped as the Kelvin-Voigt law damps them
        at bending stiffness ``EI`` (this beam's when None)."""
        EI = self.EI if EI is None else EI
        ratios = [self.bending_damping * (CLAMPED_FREE_ROOTS[k] / self.length) ** 2
                  * np.sqrt(EI / self.mass_per_length) / (2 * EI) for k in range(modes)]
        return {"name": "exudyn_hub_beam", "gravity": [0.0, 0.0], "link": [{
            "kind": "flexible", "length": self.length, "mass_per_length": self.mass_per_length, "EI": EI,
            "modes": {"family": "clamped-free", "count": modes, "damping_ratio": [float(r) for r in ratios]},
            "joint": {"kind": "rigid", "rotor_inertia": self.hub_inertia}}]}


def exudyn_hub_beam(torques, sample_step: float, beam: HubBeam = HubBeam(), elements: int = 16,
                    substeps: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drive the hub with ``torques[k]`` (N m) held from t = k T to (k + 1) T, T = ``sample_step``.

    Parameters
    ----------
    torques : array (K,)
        The torque of each sample.
    sample_step : float
        T, s.
    beam : HubBeam
    elements : int
        ANCF cable elements along the link.
    substeps : int
        EXUDYN steps per sample.

    Returns
    -------
    tuple of arrays (K,)
        Time, hub angle (rad) and tip deflection in the hub frame (m) at each sample.
    """
    import exudyn as exu
    from exudyn.beams import GenerateBeamElementsAlongLine
    from exudyn.itemInterface import (
        Cable2D,
        GenericJoint,
        LoadTorqueVector,
        MarkerBodyRigid,
        MarkerNodeRigid,
        NodeRigidBody2D,
        ObjectGround,
        RevoluteJoint2D,
        RigidBody2D,
        SensorNode,
    )

    torques = np.asarray(torques, float)
    count = len(torques)
    container = exu.SystemContainer()
    mbs = container.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    template = Cable2D(physicsMassPerLength=beam.mass_per_length, physicsBendingStiffness=beam.EI,
                       physicsAxialStiffness=beam.EA, physicsBendingDamping=beam.bending_damping,
                       physicsAxialDamping=0, useReducedOrderIntegration=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        nodes = GenerateBeamElementsAlongLine(mbs, [0, 0, 0], [beam.length, 0, 0], elements, template)["nodes"]
    hub_node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0, 0, 0]))
    hub = mbs.AddObject(RigidBody2D(mass=1.0, inertia=beam.hub_inertia, nodeNumber=hub_node))
    hub_marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub, localPosition=[0, 0, 0]))
    ground_marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[hub_marker, ground_marker]))
    root = mbs.AddMarker(MarkerNodeRigid(nodeNumber=nodes[0]))
    mbs.AddObject(GenericJoint(markerNumbers=[root, hub_marker], constrainedAxes=[1, 1, 0, 0, 0, 1]))

    def held(mbs, t, load):
        k = min(count - 1, int(np.floor(t / sample_step + 1e-9)))
        return [0.0, 0.0, float(torques[k])]

    mbs.AddLoad(LoadTorqueVector(markerNumber=hub_marker, loadVector=[0, 0, 0], loadVectorUserFunction=held))
    angle = mbs.AddSensor(SensorNode(nodeNumber=hub_node, storeInternal=True,
                                     outputVariableType=exu.OutputVariableType.Rotation))
    tip = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                   outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()

    settings = fixed_step_settings((count - 1) * sample_step, (count - 1) * substeps, sample_step, 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mbs.SolveDynamic(settings)
    rotation, position = mbs.GetSensorStoredData(angle), mbs.GetSensorStoredData(tip)
    t, theta = rotation[:, 0], rotation[:, -1]
    x, y = position[:, 1], position[:, 2]
    keep = np.searchsorted(t, np.arange(count) * sample_step - 1e-9)
    return t[keep], theta[keep], (-np.sin(theta) * x + np.cos(theta) * y)[keep]
