"""The table of arm kinds, and the public entry points that dispatch on it.

:data:`KINDS` holds one :class:`~flexfmu.kinds.arm_kind.ArmKind` row per
kind (a module each: ``planar``, ``spatial``, ``delta``): its spec loader,
its Model graph, its planner and its scenario references. The lower layers
take what they need from a row as an argument; here they are composed into
``flexfmu.load_arm``, ``flexfmu.arm_from_dict`` and ``flexfmu.build_model``.

Adding a kind: its dataclasses and loader in ``flexfmu/spec``, its graph in
``flexfmu/dynamics/<kind>/``, one module here with its row, and the row in
:data:`KINDS` (docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path

from flexfmu.dynamics.build import assemble_model
from flexfmu.dynamics.model import Model
from flexfmu.kinds.arm_kind import ArmKind
from flexfmu.kinds.delta import DELTA
from flexfmu.kinds.planar import PLANAR
from flexfmu.kinds.spatial import SPATIAL
from flexfmu.spec.load import load_by_kind, read_arm_file

KINDS: dict[str, ArmKind] = {row.name: row for row in (PLANAR, SPATIAL, DELTA)}


def kind_of(arm) -> ArmKind:
    """The row of :data:`KINDS` of ``arm`` (any kind's dataclass, by its ``kind``)."""
    return KINDS[arm.kind]


def arm_from_dict(data, source: str = "<dict>"):
    """Validate a specification given as nested dicts and lists.

    Parameters
    ----------
    data : Mapping
        The specification, shaped like the parsed TOML (arrays of tables are
        lists of dicts); its ``kind`` (default ``planar``) picks the loader.
    source : str, optional
        Where ``data`` came from; used as the header of the error message.

    Returns
    -------
    Arm
        The validated arm (of its kind's dataclass).

    Raises
    ------
    SpecError
        Listing every problem found.
    """
    return load_by_kind(data, source, {name: row.load for name, row in KINDS.items()})


def load_arm(path: str | Path):
    """Load and validate the arm specification in a TOML file.

    Parameters
    ----------
    path : str or pathlib.Path
        The TOML file, or the name of an example arm (``"yu_chen_2dof"``,
        see :func:`flexfmu.data.arm_names`).

    Returns
    -------
    Arm
        The validated arm (of the file's ``kind``), with defaults filled in
        and derived quantities (``mass_per_length``, ``EI``, per-mode
        damping) computed.

    Raises
    ------
    SpecError
        If the file is not valid TOML (the message names the line) or the
        specification has problems (all of them are listed).
    InputError
        If the file does not exist, is a folder or cannot be read.
    """
    data, source = read_arm_file(path)
    return arm_from_dict(data, source)


def build_model(arm, method: str | None = None) -> Model:
    """Build the Model of ``arm`` with the chosen derivation, on its kind's graph.

    Parameters
    ----------
    arm : Arm
        From :func:`load_arm`; its ``kind`` picks the building blocks (:data:`KINDS`).
    method : str, optional
        The derivation of M and h, one of the graph's ``METHODS``; for a
        planar arm ``closed_form`` (default, fastest to build) projects the
        link mass properties through recursive Jacobians and ``energy``
        differentiates the Lagrangian with CasADi AD. Both give the same M and
        h to round-off.

    Returns
    -------
    Model

    Raises
    ------
    SpecError
        Naming the link at fault when the arm, although each of its numbers is in range, cannot be
        simulated: mode shapes that cannot be built, or a mass matrix at q = 0 that is not positive definite
        in double precision (masses and inertias too many orders of magnitude apart).
    """
    return assemble_model(arm, kind_of(arm).graph, method)
