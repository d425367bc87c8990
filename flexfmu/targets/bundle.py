"""The target-neutral C model bundle that every native target links against.

A bundle is a folder of C sources: the five generated Functions of the C
contract (``model_functions.c``, the directional derivatives compiled
without optimisation, see :func:`flexfmu.codegen.generate_c`), the per-model
constants (``model_data.c``), the contract itself (``ffmu_model.h``) and the
interface-independent instance code (``ffmu_instance.c/.h``). A target adds
its glue (``fmi2_glue.c``, ...) and its packaging; none of the bundle depends
on the FMI version or the importing tool.

The model data carries the artefact's GUID, which a target derives from the
whole content (its description included), so it is written last
(:meth:`ModelBundle.write_model_data`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import casadi as ca

from flexfmu.codegen import generate_c
from flexfmu.dynamics.model import CompiledDynamics
from flexfmu.integrate import step_function
from flexfmu.targets.build import GENERATED_SOURCES
from flexfmu.targets.export import ExportSettings, model_identifier, stepping
from flexfmu.targets.model_data import model_data_c

INSTANCE_FILES = ("ffmu_model.h", "ffmu_instance.h", "ffmu_instance.c")
C_FILES = ("ffmu_instance.c", "model_data.c", *GENERATED_SOURCES)


def c_source(name: str) -> str:
    """The text of one of flexfmu's own C files (package data), the file ``name`` in ``flexfmu/targets/c``."""
    return (resources.files("flexfmu.targets") / "c" / name).read_text()


@dataclass(frozen=True)
class ModelBundle:
    """A written bundle: where, for which model, with which integrator and step.

    Attributes
    ----------
    folder : Path
    identifier : str
        C identifier of the model (library and file names).
    integrator : str
    internal_step : float
    omega_max : float
        Highest linearised frequency (rad/s) the default step was chosen for.
    codegen_s : float
        Seconds spent generating the C code.
    """

    folder: Path
    model: object
    identifier: str
    integrator: str
    internal_step: float
    omega_max: float
    codegen_s: float

    @property
    def c_files(self) -> list[str]:
        """The bundle's C files to compile, the generated ones last."""
        return list(C_FILES)

    def fingerprint(self) -> str:
        """The content a GUID must change with: model data (without a GUID)
        and the generated functions."""
        generated = "".join((self.folder / name).read_text() for name in GENERATED_SOURCES)
        return self._model_data("") + generated

    def write_model_data(self, guid: str) -> None:
        """Write model_data.c with the artefact's GUID ``guid`` (derived by the target from the whole
        content, see :meth:`fingerprint`)."""
        (self.folder / "model_data.c").write_text(self._model_data(guid))

    def _model_data(self, guid: str) -> str:
        constants = self.model.compiled.size
        return model_data_c(self.model, guid, self.integrator, self.internal_step, constants)


def contract_functions(dynamics: CompiledDynamics, integrator: str) -> tuple[list[ca.Function], list[ca.Function]]:
    """The five Functions of the C contract (ffmu_model.h), as two groups: the
    simulation functions, compiled optimised, and the directional derivatives
    (forward AD of every template: the largest code, called only when an
    importer asks for derivatives), compiled without optimisation, for gcc's
    optimisers take time superlinear in a function's length (a Delta robot's
    would take most of a minute). ``dynamics`` is the model's
    compiled dynamics; the step Function uses the fixed-step ``integrator``
    (see :data:`flexfmu.integrate.INTEGRATORS`)."""
    return [
        rename(dynamics.constants, "ffmu_constants"),
        step_function(dynamics, integrator, name="ffmu_step"),
        rename(dynamics.state_derivative, "ffmu_derivatives"),
        rename(dynamics.outputs, "ffmu_outputs"),
    ], [rename(dynamics.directional, "ffmu_directional")]


def rename(function: ca.Function, name: str) -> ca.Function:
    """``function`` under the C name ``name`` (a call of it)."""
    symbols = function.mx_in()
    return ca.Function(name, symbols, function.call(symbols))


def write_bundle(model, folder: Path, settings: ExportSettings) -> ModelBundle:
    """Generate the C sources of ``model`` into ``folder`` (the instance code is
    :func:`write_instance_code`'s); model_data.c follows with the GUID. ``settings`` gives the
    integrator and the internal step (chosen from the highest frequency when
    not set)."""
    start = time.perf_counter()
    steps = stepping(model, settings)
    write_sources(folder, contract_functions(model.compiled, steps.integrator))
    return ModelBundle(folder, model, model_identifier(model.arm.name), steps.integrator, steps.h, steps.omega_max,
                       time.perf_counter() - start)


def write_sources(folder: Path, groups) -> None:
    """Generate the two ``groups`` of contract Functions (as :func:`contract_functions` returns them: optimised,
    unoptimised) into ``folder`` as one C file, their shared code written once."""
    folder.mkdir(parents=True, exist_ok=True)
    optimised, unoptimised = groups
    (generated,) = GENERATED_SOURCES
    generate_c(optimised, folder, Path(generated).stem, unoptimised=unoptimised)


def write_instance_code(folder: Path) -> None:
    """Copy the instance code (:data:`INSTANCE_FILES`, the same for every arm) into ``folder``: a target writes
    it before the model's code, so that its compile can start first."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in INSTANCE_FILES:
        (folder / name).write_text(c_source(name))
