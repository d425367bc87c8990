"""The closed-loop FMU: an arm and a scenario's controller in one FMI 2.0 co-simulation FMU.

A sweep point, a tuning start or a cross-check of a controller is a run of
the closed loop at the controller's rate; stepped from Python (an FMPy call,
the law in Python and the recording, per sample) it spends more than 90 % of
its time in the interpreter. Here the loop runs in C: the plant (the arm's
generated dynamics under the FMU's own integrator and internal step) and the
controller (law, reference, held torques or prescribed motion) are one
sampled system (:mod:`flexfmu.control.loop_system`), generated from the same
CasADi Functions and run by the same instance code as the plant FMU. One
internal step of the instance is one controller sample, so a whole run is
one fmi2DoStep, and the figures a sweep reports (cost terms, peaks,
tracking, the validity envelope) are outputs folded in sample by sample: a
point reads a few numbers, not its samples.

Why one FMU rather than a compiled co-simulation of the plant FMU with a
controller FMU: flexfmu's controller FMU is Python-backed, so a compiled
master would first need a native controller FMU and its own FMI glue, and
would still pay two FMI calls per sample and compute the figures outside
both FMUs. One instance reuses everything the plant FMU already has: the
generated C, the instance code (its divergence checks and messages, the
validity envelope, reset, snapshots), the FMI 2.0 glue and packaging. It is
also an artefact in its own right: the tuned loop, with its gains,
reference and motion numbers as tunable parameters, for any FMI master.

The plant's variables keep their names and value references; the
controller's parameters and ``figures.settle_time`` follow the plant's
parameters; the discrete states of the loop follow the plant's states
(``ffmu_model.h``: x = [q; qd; d]); the applied inputs, the reference and
the figures follow the plant's outputs. Co-simulation only: the loop is
sampled, so it has no model-exchange interface.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from flexfmu.control.loop_system import LoopSystem
from flexfmu.targets.bundle import ModelBundle, contract_functions, rename, write_sources
from flexfmu.targets.export import ExportError, ExportReport, ExportSettings, model_identifier, stepping
from flexfmu.targets.fmi2 import FMI2
from flexfmu.targets.model_data import model_data_c
from flexfmu.targets.native import NativeSource, export_native
from flexfmu.targets.variables import VR_ACCELERATION, VR_INPUT, VR_OUTPUT, VR_STATE, Structure, Variable, fmu_variables


@dataclass(frozen=True)
class LoopBundle(ModelBundle):
    """The C bundle of a LoopSystem (``model``): its model data holds the discrete states and one controller
    sample as the internal step (``internal_step`` stays the plant's, for the model description)."""

    def _model_data(self, guid: str) -> str:
        system = self.model
        return model_data_c(system, guid, self.integrator, system.sample_step, system.model.compiled.size,
                            system.discrete)


def loop_functions(system: LoopSystem, integrator: str) -> list[list]:
    """The C contract's Functions of ``system`` in the groups of the plant's (:func:`contract_functions` with
    the plant's ``integrator``), under the contract's names.

    Raises
    ------
    ExportError
        If the contract has a Function the loop does not provide (the contract grew; add it to
        :attr:`LoopSystem.functions`).
    """
    own = {f"ffmu_{role}": rename(function, f"ffmu_{role}") for role, function in system.functions.items()}
    groups = contract_functions(system.model.compiled, integrator)
    missing = [f.name() for group in groups for f in group if f.name() not in own]
    if missing:
        raise ExportError(f"the closed loop does not provide {', '.join(missing)} of the C contract")
    return [[own[f.name()] for f in group] for group in groups]


def loop_variables(system: LoopSystem) -> list[Variable]:
    """The variables of ``system``: the plant's with the loop's parameters and outputs (:func:`fmu_variables`),
    then the discrete states."""
    first = VR_STATE + 2 * len(system.states)
    return fmu_variables(system) + [Variable(d.name, first + k, "local", "discrete", d.unit, d.description,
                                             start=d.start, initial="exact") for k, d in enumerate(system.discrete)]


def loop_structure(variables: list[Variable]) -> Structure:
    """The Structure of the closed loop's ``variables``: co-simulation with no inputs, so outputs and
    derivatives depend on no known; the outputs and the accelerations are the initial unknowns."""
    index = {v.vr: k + 1 for k, v in enumerate(variables)}
    derivatives = [index[v.vr] for v in variables if v.derivative_of is not None]
    outputs = [index[v.vr] for v in variables if v.vr >= VR_OUTPUT]
    accelerations = [index[v.vr] for v in variables if VR_ACCELERATION <= v.vr < VR_INPUT]
    return Structure([(k, []) for k in derivatives], [(k, []) for k in outputs], sorted(outputs + accelerations))


def loop_source(system: LoopSystem, name: str, description: str) -> NativeSource:
    """The NativeSource of ``system``, named ``name`` with its ``description``: co-simulation only."""

    def write(folder: Path, settings: ExportSettings) -> LoopBundle:
        began = time.perf_counter()
        steps = stepping(system.model, replace(settings, communication_step=system.sample_step,
                                               integrator=system.integrator))
        write_sources(folder, loop_functions(system, steps.integrator))
        return LoopBundle(folder, system, model_identifier(name), steps.integrator, steps.h, steps.omega_max,
                          time.perf_counter() - began)

    def variables() -> list[Variable]:
        return loop_variables(system)

    return NativeSource(name, description, write, variables, loop_structure, interface="cs")


def loop_system(model, scenario, settings: ExportSettings = ExportSettings()) -> LoopSystem:
    """The LoopSystem of ``scenario`` on ``model`` with the plant's integrator and internal step of
    ``settings`` (the plant FMU's defaults where they give none: Rosenbrock for a stiff arm), starting at rest
    at the scenario's pose (``Scenario.initial_state``, the static equilibrium there)."""
    steps = stepping(model, replace(settings, communication_step=scenario.step))
    return LoopSystem(model, scenario.build_controller(model), scenario.step, scenario.initial_state(model),
                      steps.integrator, steps.h)


def export_loop(model, scenario, output, settings: ExportSettings = ExportSettings()) -> ExportReport:
    """Write the closed-loop FMU of ``scenario`` (a loaded Scenario) on ``model`` to ``output``.

    Parameters
    ----------
    model : Model
        The arm the scenario runs.
    scenario : Scenario
        Its controller, sample step, initial state and duration (the default stop time).
    output : str or Path
        The .fmu to write; it appears only when complete.
    settings : ExportSettings
        The plant's integrator and internal step, the platforms; the communication step is the scenario's
        sample step and the interface co-simulation.

    Raises
    ------
    ExportError, BuildError
        As the native FMU's export; ScenarioError if the scenario does not fit the arm.
    """
    from flexfmu.targets import ExportJob

    system = loop_system(model, scenario, settings)
    settings = replace(settings, communication_step=scenario.step, stop_time=scenario.duration, interface="cs")
    name = f"{model.arm.name}_{scenario.name}_loop"
    source = loop_source(system, name, f"{model.arm.name} in the closed loop of scenario {scenario.name}: "
                                       f"{scenario.description}")
    return replace(export_native(ExportJob(model, None, Path(output), settings), FMI2, source), target="fmi2-loop")


def export(job) -> ExportReport:
    """The ``fmi2-loop`` target: :func:`export_loop` of the ``job``'s scenario on its model (ExportError
    without a scenario); ``job`` is a :class:`flexfmu.targets.ExportJob`."""
    if job.scenario is None:
        raise ExportError("the fmi2-loop target exports a scenario's closed loop; give the scenario")
    return export_loop(job.model, job.scenario, job.output, job.settings)
