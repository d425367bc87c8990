"""Export targets: one table of what flexfmu can write, and one way to call it.

Every target turns a Model into an artefact a tool imports, behind the same
call (:func:`export`); the table feeds the command line's choices and help,
so a target exists for users exactly when it has a row here. Targets are
named by their exporter's import path and imported on first use, so reading
the table (``flexfmu export --help``) loads no CasADi.

Adding a target: one module with ``export(job) -> ExportReport`` (the native
ones build on :mod:`flexfmu.targets.bundle` and add a glue and packaging),
and one row here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from flexfmu.targets.export import ExportError, ExportReport, ExportSettings


@dataclass(frozen=True)
class Target:
    """One export target.

    Attributes
    ----------
    name : str
        What ``flexfmu export --target`` takes.
    summary : str
        One line for ``--help`` and messages.
    settings : frozenset of str
        The :class:`ExportSettings` fields it uses (the CLI refuses others).
    exporter : str
        ``"module:function"`` of its ``export(job) -> ExportReport``.
    scenario : bool
        Whether it compiles a scenario's closed loop (the job's ``scenario``, ``flexfmu export --scenario``).
    """

    name: str
    summary: str
    settings: frozenset[str]
    exporter: str
    scenario: bool = False

    def export(self, job: ExportJob) -> ExportReport:
        """Run the exporter (imported on first use) on ``job``."""
        module, function = self.exporter.split(":")
        return getattr(import_module(module), function)(job)


@dataclass(frozen=True)
class ExportJob:
    """What an exporter gets: the Model, the arm file it came from (targets
    that rebuild the model where they run embed it), the output, the
    settings and, for a closed loop, the scenario (a loaded Scenario)."""

    model: object
    arm_file: Path | None
    output: Path
    settings: ExportSettings = field(default_factory=ExportSettings)
    scenario: object = None


NATIVE_SETTINGS = frozenset({"integrator", "internal_step", "communication_step", "stop_time", "interface",
                             "platforms", "allow_unstable_step", "realtime_budget"})
TARGETS: dict[str, Target] = {target.name: target for target in (
    Target("fmi2", "FMI 2.0 FMU, co-simulation and model exchange, native C binaries and their sources",
           NATIVE_SETTINGS, "flexfmu.targets.fmi2:export"),
    Target("fmi3", "FMI 3.0 FMU, co-simulation and model exchange, native C binaries and their sources",
           NATIVE_SETTINGS, "flexfmu.targets.fmi3:export"),
    Target("sfunction", "folder for MATLAB/Simulink: a C-MEX S-function (fixed-step discrete block), a MEX "
                        "gateway for scripts and make_<arm>.m, over the FMU's C model code",
           frozenset({"integrator", "internal_step", "communication_step"}), "flexfmu.targets.sfunction:export"),
    Target("fmi2-loop", "FMI 2.0 co-simulation FMU of a scenario's closed loop (--scenario): the arm and the "
                        "scenario's controller in one native instance, one fmi2DoStep per run, the run's figures "
                        "(cost terms, peaks, tracking, validity envelope) as outputs; gains, reference and motion "
                        "numbers are tunable parameters",
           frozenset({"integrator", "internal_step", "platforms", "allow_unstable_step"}),
           "flexfmu.targets.loop:export", scenario=True),
    Target("pythonfmu", "FMI 2.0 co-simulation FMU backed by Python (PythonFMU; the Model's graph under the native "
                        "FMU's fixed-step scheme): a desktop cross-check that needs Python with flexfmu where it runs",
           frozenset({"integrator", "internal_step", "communication_step", "stop_time"}),
           "flexfmu.targets.pythonfmu:export"),
)}
DEFAULT_TARGET = "fmi2"


def export(model, output: str | Path, settings: ExportSettings = ExportSettings(), target: str = DEFAULT_TARGET,
           arm_file: str | Path | None = None, scenario=None) -> ExportReport:
    """Export ``model`` to ``output`` with the named target.

    Parameters
    ----------
    model : Model
    output : str or Path
        The file to write; it appears only when complete.
    settings : ExportSettings
    target : str
        A key of :data:`TARGETS`.
    arm_file : str or Path, optional
        The arm's TOML file, for targets that embed it.
    scenario : Scenario, optional
        The scenario, for the closed-loop target.

    Returns
    -------
    ExportReport

    Raises
    ------
    ExportError
        For an unknown target or settings it cannot honour.
    """
    if target not in TARGETS:
        raise ExportError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    job = ExportJob(model, None if arm_file is None else Path(arm_file), Path(output), settings, scenario)
    return TARGETS[target].export(job)


def export_fmu(model, output: str | Path, settings: ExportSettings = ExportSettings()) -> ExportReport:
    """The native FMI 2.0 FMU of ``model`` written to ``output`` with ``settings`` (``export`` with the
    default target); returns the ExportReport."""
    return export(model, output, settings)


__all__ = ["DEFAULT_TARGET", "ExportError", "ExportJob", "ExportReport", "ExportSettings", "TARGETS", "Target",
           "export", "export_fmu"]
