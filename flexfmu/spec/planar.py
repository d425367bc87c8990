"""The planar arm's specification: ``[[link]]``, ``[[lumped_mass]]``, ``[payload]``.

This module is the executable form of ``docs/spec.md`` for planar arms (the
default ``kind``); it reads nested dicts and lists (parsed TOML) into an
:class:`~flexfmu.spec.arm.Arm` with the generic checks of
:mod:`flexfmu.spec.checks`, collecting every problem before it raises.
"""

from __future__ import annotations

from collections.abc import Mapping

from flexfmu.spec import serial
from flexfmu.spec.arm import Arm, FlexibleLink, LumpedMass, Payload, RigidLink
from flexfmu.spec.checks import (
    LUMPED_KEYS, PAYLOAD_KEYS, arm_name_and_description, boolean, check_keys, integer, link_kind, number, show,
    sub_table, table_array, vector,
)
from flexfmu.spec.errors import SpecError
from flexfmu.spec.ranges import MAX_COORDINATES, MAX_LINKS, MAX_LUMPED_MASSES, RANGES, SIZES

_TOP_KEYS = ("kind", "name", "description", "gravity", "link", "lumped_mass", "payload")
_LINK_COMMON = ("kind", "length", "mass", "joint")
_RIGID_ONLY = ("com", "inertia")
_FLEXIBLE_ONLY = ("mass_per_length", "EI", "E", "I", "modes", "geometric_stiffening")


def planar_arm_from_dict(data: Mapping, source: str = "<dict>", *, families: Mapping) -> Arm:
    """Validate a specification given as nested dicts and lists.

    Parameters
    ----------
    data : Mapping
        The specification, shaped like the parsed TOML (arrays of tables are
        lists of dicts).
    source : str, optional
        Where ``data`` came from; used as the header of the error message.
    families : Mapping
        The mode families a link may name (:data:`flexfmu.modes.families.FAMILIES`: name -> row with
        ``keys`` and ``frame``), handed down by the planar kind (``flexfmu.kinds``).

    Returns
    -------
    Arm
        The validated arm.

    Raises
    ------
    SpecError
        Listing every problem found.
    """
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise SpecError([f"the specification must be a table, got {show(data)}"], source)
    check_keys(problems, data, "", _TOP_KEYS)
    name, description = arm_name_and_description(problems, data)
    gravity = _gravity(problems, data)

    link_tables = table_array(problems, data, "link", required=True)
    serial.size(problems, "link", link_tables, "links", MAX_LINKS)
    links = [_link(problems, table, f"link[{i}]", families)
             for i, table in enumerate(link_tables or [], start=1) if table is not None]
    link_count = len(link_tables) if link_tables else None
    lumped_tables = table_array(problems, data, "lumped_mass")
    serial.size(problems, "lumped_mass", lumped_tables, "lumped masses", MAX_LUMPED_MASSES)
    lumped = [_lumped_mass(problems, table, f"lumped_mass[{i}]", link_count)
              for i, table in enumerate(lumped_tables or [], start=1) if table is not None]
    payload_table = sub_table(problems, data, "payload", "")
    payload = None
    if payload_table is not None:
        check_keys(problems, payload_table, "payload", PAYLOAD_KEYS)
        payload = Payload(mass=serial.ranged(problems, payload_table, "mass", "payload", "added_mass", 0.0),
                          inertia=serial.ranged(problems, payload_table, "inertia", "payload", "added_inertia", 0.0))
    _coordinate_count(problems, links)

    if len(links) == len(link_tables or []):
        _check_prescribed(problems, links, families)
    if problems:
        raise SpecError(problems, source)
    return Arm(name=name, links=tuple(links), description=description,
               lumped_masses=tuple(lumped), payload=payload, gravity=gravity)


def _coordinate_count(problems, links):
    """The Model's size: one angle per joint, a rotor angle per flexible joint and the modes of every
    link of ``links``; more than :data:`MAX_COORDINATES` is refused up front (building would take minutes)."""
    if None in links or any(getattr(link, "modes", 0) is None for link in links):
        return
    count = sum(1 + (link.joint is not None and link.joint.kind == "flexible")
                + (link.modes.count or 0 if link.kind == "flexible" else 0) for link in links)
    if count > MAX_COORDINATES:
        problems.append(f"link: the arm has {count} coordinates (joint angles, rotor angles and modes); at most "
                        f"{MAX_COORDINATES} are supported ({SIZES['coordinates'][1]})")


def _gravity(problems, data):
    """The gravity vector, each component within its range."""
    gravity = vector(problems, data, "gravity", "", 2, (0.0, 0.0))
    if gravity is None:
        return None
    allowed = RANGES["gravity"]
    bad = [f"gravity[{k}] must be {allowed.text()} {allowed.unit}, got {show(g)}"
           for k, g in enumerate(gravity, start=1) if not allowed.low <= g <= allowed.high]
    problems += bad
    return None if bad else gravity


def _com(problems, table, path, length):
    """The rigid link's centre of mass: within ten link lengths of the joint, each component."""
    default = (length / 2, 0.0) if length is not None else None
    com = vector(problems, table, "com", path, 2, default)
    if com is None or length is None:
        return com
    limit = RANGES["com"].high * length
    bad = [f"{path}.com[{k}] must be within {RANGES['com'].high:g} link lengths of the joint "
           f"(|value| <= {limit:g} m), got {show(c)}" for k, c in enumerate(com, start=1) if abs(c) > limit]
    problems += bad
    return None if bad else com


def _link(problems, table, path, families):
    """One ``[[link]]`` table -> RigidLink / FlexibleLink (None if unusable)."""
    kind = link_kind(problems, table, path, _LINK_COMMON, _RIGID_ONLY, _FLEXIBLE_ONLY)
    length = serial.ranged(problems, table, "length", path, "length")
    if kind == "rigid":
        mass = serial.ranged(problems, table, "mass", path, "mass")
        com = _com(problems, table, path, length)
        inertia_default = mass * length**2 / 12 if None not in (mass, length) else None
        inertia = serial.ranged(problems, table, "inertia", path, "inertia", inertia_default)
        return RigidLink(length=length, mass=mass, com=com, inertia=inertia,
                         joint=serial.joint(problems, table, path))
    if kind == "flexible":
        mass_per_length = serial.mass_per_length(problems, table, path, length)
        bending_stiffness = _bending_stiffness(problems, table, path)
        modes = serial.modes(problems, table, path, families)
        return FlexibleLink(length=length, mass_per_length=mass_per_length,
                            EI=bending_stiffness, modes=modes,
                            joint=serial.joint(problems, table, path),
                            geometric_stiffening=boolean(problems, table, "geometric_stiffening", path, True))
    serial.joint(problems, table, path)  # still report its problems
    return None


def _link_frame(link, families):
    """The frame of a link's modes (None for a rigid link or unusable modes)."""
    if not isinstance(link, FlexibleLink) or link.modes is None or link.modes.family is None:
        return None
    return families[link.modes.family].frame or link.modes.frame


def _check_prescribed(problems, links, families):
    """A prescribed joint drives the coordinate theta[j] itself, so its torque
    must act on theta[j] alone: on a rigid joint between links whose frames
    are tangent at that joint (a rigid or tangent-framed link j, and a rigid
    or tangent-framed link j-1). A chord frame turns the joint's torque into
    modal forces too (paper 000 eq. 29-32). An arm whose joints are all
    prescribed needs a flexible link: otherwise nothing is left to simulate."""
    if links and all(isinstance(link, RigidLink) and link.joint is not None and link.joint.prescribed
                     for link in links):
        problems.append("link: every joint is prescribed and every link rigid, so the arm has no state left to "
                        "simulate; make a joint torque-driven (prescribed = false) or a link flexible")
    for j, link in enumerate(links, start=1):
        joint = link.joint if link is not None else None
        if joint is None or not joint.prescribed:
            continue
        where = f"link[{j}].joint.prescribed"
        if joint.kind != "rigid":
            problems.append(f"{where} is only allowed for a rigid joint (kind = \"rigid\"); joint {j} is "
                            f"{joint.kind} (prescribing a rotor angle is not supported)")
            continue
        chord = [i for i in (j - 1, j) if i >= 1 and _link_frame(links[i - 1], families) == "chord"]
        if chord:
            problems.append(f"{where} needs tangent frames at joint {j}, but link {chord[0]} has chord-framed "
                            f"modes ({links[chord[0] - 1].modes.family}), whose slope at the joint the torque "
                            f"also drives; use a clamped family (tangent frame) there")


def _bending_stiffness(problems, table, path):
    """Exactly one of ``EI`` or both ``E`` and ``I``."""
    given = [key for key in ("E", "I") if key in table]
    if "EI" in table and given:
        problems.append(f"{path}.EI and {path}.{' and '.join(given)} are both given; "
                        f"give EI or both E and I")
        return None
    if "EI" in table or not given:
        return serial.ranged(problems, table, "EI", path, "EI", missing=f" (or give both {path}.E and {path}.I)")
    e_mod = serial.ranged(problems, table, "E", path, "E", missing=" together with I (or give EI)")
    area = serial.ranged(problems, table, "I", path, "I", missing=" together with E (or give EI)")
    product = e_mod * area if None not in (e_mod, area) else None
    return serial.derived(problems, product, "EI", f"{path}.E * {path}.I")


def _lumped_mass(problems, table, path, link_count):
    """One ``[[lumped_mass]]`` table."""
    check_keys(problems, table, path, LUMPED_KEYS)
    return LumpedMass(
        link=integer(problems, table, "link", path, 1, link_count),
        position=number(problems, table, "position", path, ge=0, le=1),
        mass=serial.ranged(problems, table, "mass", path, "added_mass"),
        inertia=serial.ranged(problems, table, "inertia", path, "added_inertia", 0.0),
    )
