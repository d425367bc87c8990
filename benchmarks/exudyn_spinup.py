"""Paper 001's spin-up with EXUDYN's ANCF cable elements: an independent reference.

EXUDYN (pip ``exudyn``, a test dependency) models the beam with 2-D ANCF
cable elements: nodal positions and slopes, axial and bending strains taken
exactly, so large rotations and the foreshortening of the bent beam come out
of the element itself, with no assumed modes and no truncation at second
order. The beam is clamped to a rigid hub (a generic joint fixing the first
node's position and slope angle to the hub) that turns about the origin
(revolute joint), its angle prescribed by a coordinate constraint whose
offset is the spin-up profile. Time integration: generalized-alpha with a
little numerical damping (spectral radius 0.8; 1.0 fails with the index-3
constraints), fixed step, modified Newton with the error measured on the
increment (EXUDYN's default residual test stalls near 1e-8 and the adaptive
step then shrinks without end).

The transverse tip deflection in the hub frame is what flexfmu reports as
``link[1].deflection``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from flexfmu.control.references import spinup_motion

YOUNG = 6.8952e10  # Pa, paper 001's spin-up beam (papers README)
AREA = 7.2968e-5  # m^2


@dataclass(frozen=True)
class Beam:
    """The spun beam: length (m), mass per length (kg/m), bending and axial stiffness (N m^2, N)."""

    length: float
    mass_per_length: float
    EI: float
    EA: float


def spinup_beam() -> Beam:
    """The beam of flexfmu's ``spinup_beam`` arm (length, rho A, EI from its file), with EA = E A of
    paper 001 (the arm's model is inextensible and has no EA)."""
    from flexfmu import load_arm

    link = load_arm("spinup_beam").links[0]
    return Beam(link.length, link.mass_per_length, link.EI, YOUNG * AREA)


@dataclass(frozen=True)
class ExudynRun:
    """An EXUDYN spin-up: time (s) and transverse tip deflection (m) at every step, the wall and CPU time
    of the solve (s)."""

    time: np.ndarray
    tip_deflection: np.ndarray
    wall_s: float
    cpu_s: float

    def minimum(self) -> tuple[float, float]:
        """(value, time) of the most negative tip deflection, refined by the parabola through the
        sample and its neighbours."""
        values = self.tip_deflection
        k = int(np.clip(np.argmin(values), 1, len(values) - 2))
        a, b, c = values[k - 1:k + 2]
        curvature = a - 2 * b + c
        shift = 0.5 * (a - c) / curvature if curvature > 0 else 0.0
        return float(b - 0.25 * (a - c) * shift), float(self.time[k] + shift * (self.time[1] - self.time[0]))


def fixed_step_settings(duration: float, steps: int, write_period: float, absolute_tolerance: float = 1e-10):
    """EXUDYN's simulation settings for these references: generalized-alpha with spectral radius 0.8 (1.0
    fails with the index-3 constraints), ``steps`` fixed steps over ``duration`` (s), modified Newton with
    the error measured on the increment, sensors written every ``write_period`` (s), no solution file."""
    import exudyn as exu

    settings = exu.SimulationSettings()
    integration = settings.timeIntegration
    integration.numberOfSteps = steps
    integration.endTime = duration
    integration.generalizedAlpha.spectralRadius = 0.8
    integration.adaptiveStep = False
    integration.newton.useModifiedNewton = True
    integration.newton.residualMode = 1
    integration.newton.relativeTolerance = 1e-10
    integration.newton.absoluteTolerance = absolute_tolerance
    integration.verboseMode = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = write_period
    settings.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    return settings


def exudyn_spinup(w0: float, elements: int = 8, step: float = 2e-3, duration: float = 15.0,
                  ramp_time: float = 15.0, beam: Beam | None = None) -> ExudynRun:
    """Spin the beam up to ``w0`` (rad/s) in ``ramp_time`` (s) and simulate ``duration`` (s).

    Parameters
    ----------
    w0 : float
        Final hub rate, rad/s.
    elements : int
        ANCF cable elements along the beam.
    step : float
        Fixed time step, s.
    duration, ramp_time : float
        Simulated time and the profile's T, s.
    beam : Beam, optional
        The beam (default :func:`spinup_beam`).

    Returns
    -------
    ExudynRun
    """
    import exudyn as exu
    from exudyn.beams import GenerateBeamElementsAlongLine
    from exudyn.itemInterface import (
        Cable2D, CoordinateConstraint, GenericJoint, MarkerBodyRigid, MarkerNodeCoordinate, MarkerNodeRigid,
        NodePointGround, NodeRigidBody2D, ObjectGround, RevoluteJoint2D, RigidBody2D, SensorNode,
    )

    beam = beam or spinup_beam()
    angle = lambda t: float(spinup_motion(t, w0, ramp_time)[0])  # noqa: E731
    rate = lambda t: float(spinup_motion(t, w0, ramp_time)[1])  # noqa: E731

    container = exu.SystemContainer()
    mbs = container.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    template = Cable2D(physicsMassPerLength=beam.mass_per_length, physicsBendingStiffness=beam.EI,
                       physicsAxialStiffness=beam.EA, physicsBendingDamping=0, physicsAxialDamping=0,
                       useReducedOrderIntegration=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        nodes = GenerateBeamElementsAlongLine(mbs, [0, 0, 0], [beam.length, 0, 0], elements, template)["nodes"]

    # the hub: a rigid body turning about the origin, its angle prescribed
    hub_node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0, 0, 0]))
    hub = mbs.AddObject(RigidBody2D(mass=1.0, inertia=1.0, nodeNumber=hub_node))
    hub_marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub, localPosition=[0, 0, 0]))
    ground_marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[hub_marker, ground_marker]))
    fixed = mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0]))
    mbs.AddObject(CoordinateConstraint(
        markerNumbers=[mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=fixed, coordinate=0)),
                       mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=hub_node, coordinate=2))],
        offset=0.0, offsetUserFunction=lambda mbs, t, item, offset: angle(t),
        offsetUserFunction_t=lambda mbs, t, item, offset: rate(t)))
    # the clamp: the first node's position and slope angle follow the hub
    root = mbs.AddMarker(MarkerNodeRigid(nodeNumber=nodes[0]))
    mbs.AddObject(GenericJoint(markerNumbers=[root, hub_marker], constrainedAxes=[1, 1, 0, 0, 0, 1]))
    tip = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                   outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()

    settings = fixed_step_settings(duration, int(round(duration / step)), step)

    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mbs.SolveDynamic(settings)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    data = mbs.GetSensorStoredData(tip)
    t, x, y = data[:, 0], data[:, 1], data[:, 2]
    theta = np.array([angle(s) for s in t])
    return ExudynRun(t, -np.sin(theta) * x + np.cos(theta) * y, wall, cpu)
