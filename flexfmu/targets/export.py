"""What every export target shares: settings, the report, names, packaging.

A target (``flexfmu.targets.TARGETS``) turns a Model into an artefact a tool
imports. They all take the same :class:`ExportSettings` (each uses the
fields it lists), answer with an :class:`ExportReport`, name the model with
:func:`model_identifier`, and write their file with :func:`write_atomically`,
so a failed export leaves nothing behind and a complete one appears at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from flexfmu.errors import ExportError
from flexfmu.integrate import (
    INTEGRATORS, STABILITY_LIMITS, default_integrator, default_internal_step, highest_frequency, stable_step,
)
from flexfmu.targets.platforms import PLATFORMS

INTERFACES = ("cs", "me", "both")


@dataclass(frozen=True)
class ExportSettings:
    """How to export.

    Attributes
    ----------
    integrator : str or None
        Fixed-step co-simulation integrator (``flexfmu.integrate.INTEGRATORS``); None picks it from the
        arm's highest linearised frequency (``flexfmu.integrate.default_integrator``: RK4 unless the arm
        is stiff or RK4's substeps are dear).
    internal_step : float or None
        Internal step in s; None picks it from the arm's highest linearised
        frequency (``flexfmu.integrate.default_internal_step``).
    communication_step : float
        The default communication step in s (any step works; the default internal step divides it).
    stop_time : float
        The default stop time in s.
    interface : str
        ``"cs"``, ``"me"`` or ``"both"``.
    platforms : tuple of str or None
        Binary platforms of a native FMU (``flexfmu.targets.platforms.PLATFORMS``, e.g.
        ``("linux64", "win64")``); None builds every platform whose compiler is present.
    allow_unstable_step : bool
        Export an explicit integrator's internal step beyond its stability limit for the arm's highest
        frequency (refused otherwise); the model description records it.
    realtime_budget : float or None
        Refuse the export when the compiled doStep, timed on this machine, costs more than this fraction of
        the communication step (median of many steps); None times it and records it without a limit.
    """

    integrator: str | None = None
    internal_step: float | None = None
    communication_step: float = 1e-3
    stop_time: float = 5.0
    interface: str = "both"
    platforms: tuple[str, ...] | None = None
    allow_unstable_step: bool = False
    realtime_budget: float | None = None


@dataclass(frozen=True)
class ExportReport:
    """What an export decided and how long it took (None where a target has
    no such thing, e.g. the internal step of a variable-step backend);
    ``platforms`` lists the binaries built, ``skipped_platforms`` the ones
    left out with why."""

    path: Path
    target: str
    guid: str | None = None
    integrator: str | None = None
    internal_step: float | None = None
    omega_max: float | None = None
    codegen_s: float | None = None
    compile_s: float | None = None
    total_s: float | None = None
    platforms: tuple[str, ...] = ()
    skipped_platforms: dict[str, str] = field(default_factory=dict)
    timing: object = None  # flexfmu.targets.timing.StepTiming of the host's binary, when one was built


def check_settings(settings: ExportSettings) -> None:
    """Raise ExportError naming every setting of ``settings`` out of range (unknown integrator,
    interface or platform, steps and stop time not > 0)."""
    problems = []
    if settings.integrator is not None and settings.integrator not in INTEGRATORS:
        problems.append(f"integrator must be one of {', '.join(INTEGRATORS)}, got {settings.integrator!r}")
    if settings.interface not in INTERFACES:
        problems.append(f"interface must be one of {', '.join(INTERFACES)}, got {settings.interface!r}")
    for name in ("communication_step", "stop_time"):
        if not getattr(settings, name) > 0:
            problems.append(f"{name} must be > 0, got {getattr(settings, name)!r}")
    if settings.realtime_budget is not None and not 0 < settings.realtime_budget:
        problems.append(f"realtime budget must be a fraction of the communication step > 0, got "
                        f"{settings.realtime_budget!r}")
    if settings.internal_step is not None and not settings.internal_step > 0:
        problems.append(f"internal step must be > 0, got {settings.internal_step!r}")
    if settings.platforms is not None:
        unknown = [name for name in settings.platforms if name not in PLATFORMS]
        if unknown or not settings.platforms:
            problems.append(f"platforms must be some of {', '.join(PLATFORMS)}, got {settings.platforms!r}")
    if problems:
        raise ExportError("; ".join(problems))


@dataclass(frozen=True)
class Stepping:
    """How an FMU steps: its ``integrator``, its internal step ``h`` (s) and the arm's highest linearised
    frequency ``omega_max`` (rad/s) that chose them."""

    integrator: str
    h: float
    omega_max: float


def stepping(model, settings: ExportSettings) -> Stepping:
    """The integrator and the fixed internal step the settings ask for, or the defaults for the arm's highest
    linearised frequency omega_max (rad/s).

    Parameters
    ----------
    model : Model
    settings : ExportSettings
        Gives the integrator (None: :func:`flexfmu.integrate.default_integrator`), the communication step,
        optionally the internal step, and whether an unstable step is allowed.

    Raises
    ------
    ExportError
        If h is beyond the integrator's stability limit for omega_max (and that is not allowed); the
        message gives the limit and the largest stable step.
    """
    omega_max = highest_frequency(model)
    integrator = settings.integrator or default_integrator(omega_max, settings.communication_step, model.compiled)
    h = settings.internal_step or default_internal_step(omega_max, integrator, settings.communication_step)
    largest = stable_step(omega_max, integrator)
    if h > largest and not settings.allow_unstable_step:
        raise ExportError(
            f"the internal step {h:g} s is beyond the stability limit of {integrator} for this arm: "
            f"h * omega_max = {h * omega_max:.3g} > {STABILITY_LIMITS[integrator]:.3g} "
            f"(omega_max = {omega_max:.1f} rad/s, the highest frequency of the dynamics as the FMU integrates them, "
            f"linearised at the start pose), so the FMU would diverge; "
            f"use a step <= {largest:.3g} s (the default keeps h * omega_max <= 0.3, for accuracy), the implicit "
            f"or rosenbrock integrator, or allow the unstable step (--allow-unstable-step; the model description "
            f"records it)")
    return Stepping(integrator, h, omega_max)


def model_identifier(name: str) -> str:
    """A C identifier from the arm's ``name``: non-word characters become ``_``, and a leading digit gets
    a ``_`` before it."""
    ident = re.sub(r"\W", "_", name)
    return ident if re.match(r"[A-Za-z_]", ident) else "_" + ident


def content_guid(*texts: str) -> str:
    """A GUID derived from an artefact's content: same arm and settings, same GUID."""
    digest = hashlib.sha256("\0".join(texts).encode()).digest()
    return "{" + str(uuid.UUID(bytes=digest[:16])) + "}"


def can_write_in(folder: Path) -> bool:
    """Whether a file can be created in the existing ``folder``: tried (a probe file, removed at once), not
    guessed from permission bits, which say yes to root where nobody can write (``/sys``, a read-only mount)."""
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".flexfmu-probe-")
    except OSError:
        return False
    os.close(handle)
    os.unlink(probe)
    return True


def check_output(output: Path) -> None:
    """Refuse an ``output`` path that is a folder or sits under a file or an unwritable folder, before any
    work; raises ExportError."""
    if output.is_dir():
        raise ExportError(f"output {str(output)!r} is a folder; give the file to write")
    for parent in output.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ExportError(f"output {str(output)!r}: {str(parent)!r} is a file, not a folder")
            if not can_write_in(parent):
                raise ExportError(f"output {str(output)!r}: the folder {str(parent)!r} is not writable")
            return


def write_atomically(root: Path, output: Path) -> None:
    """Zip the folder ``root`` into ``output``: complete, or not there at all. Deflate's fastest level: a Delta
    robot's FMU zips in 0.06 s instead of 0.27 s and is 1.6 MB instead of 1.3 MB."""
    partial = output.with_name(output.name + ".part")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(root).as_posix())
        os.replace(partial, output)
    except OSError as error:
        raise ExportError(f"cannot write {str(output)!r}: {error.strerror or error}") from None
    finally:
        partial.unlink(missing_ok=True)
