"""The spatial arm specification (kind = "spatial"): what it loads into and how it reports problems."""

from __future__ import annotations

import math

import pytest

import flexfmu
from flexfmu.spec.spatial_arm import SpatialArm, SpatialFlexibleLink, SpatialRigidLink

ROD = [[0.0, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]]


def boom(**extra):
    link = {"kind": "flexible", "length": 2.0, "mass": 3.0,
            "bending_y": {"EI": 50.0, "modes": {"family": "clamped-free", "count": 2}}}
    link.update(extra)
    return link


def spatial(links, **extra):
    return {"kind": "spatial", "name": "s", "link": links, **extra}


def problems(data) -> list[str]:
    with pytest.raises(flexfmu.SpecError) as error:
        flexfmu.arm_from_dict(data)
    return error.value.problems


def test_a_spatial_arm_loads_with_its_defaults():
    arm = flexfmu.arm_from_dict(spatial([{"kind": "rigid", "length": 0.6, "mass": 2.0}, boom()]))
    assert isinstance(arm, SpatialArm) and arm.kind == "spatial"
    rigid, flexible = arm.links
    assert isinstance(rigid, SpatialRigidLink) and isinstance(flexible, SpatialFlexibleLink)
    assert rigid.com == (0.3, 0.0, 0.0)
    assert rigid.inertia == ((0.0, 0.0, 0.0), (0.0, 0.06, 0.0), (0.0, 0.0, 0.06))  # slender rod m L^2 / 12
    assert rigid.joint.axis == (0.0, 0.0, 1.0) and rigid.joint.offset == (0.0, 0.0, 0.0)
    assert flexible.mass_per_length == 1.5 and flexible.geometric_stiffening is True
    assert [d.kind for d in flexible.deformations] == ["bending_y"]
    assert flexible.count("bending_y") == 2 and flexible.count("torsion") == 0
    assert arm.gravity == (0.0, 0.0, 0.0) and arm.payload.inertia == ((0.0,) * 3,) * 3


def test_joint_axes_are_normalised_and_keep_the_planar_joint_keys():
    arm = flexfmu.arm_from_dict(spatial([boom(joint={"axis": [0, 3, 4], "offset": [0, 0, 0.475],
                                                      "rotation": [0, -math.pi / 2, 0], "kind": "flexible",
                                                      "stiffness": 100.0, "rotor_inertia": 0.01})]))
    joint = arm.links[0].joint
    assert joint.axis == pytest.approx((0.0, 0.6, 0.8)) and joint.offset == (0.0, 0.0, 0.475)
    assert joint.kind == "flexible" and joint.stiffness == 100.0 and joint.rotation[1] == -math.pi / 2


def test_every_problem_is_reported_with_its_field_path_and_value():
    found = problems(spatial(
        [{"kind": "rigid", "length": -0.5, "mass": 1.0, "inertia": [[1, 2, 0], [0, 1, 0], [0, 0, 1]],
          "joint": {"axis": [0, 0, 0], "stiffness": 3.0}},
         boom(EI=3.0, torsion={"GJ": 1.0, "modes": {"count": 0}})],
        gravity=[0.0, -9.81]))
    assert "gravity must be a list of 3 numbers, got [0.0, -9.81] (2 items)" in found
    assert 'link[1].joint.stiffness is only allowed for a flexible joint (kind = "flexible")' in found
    assert "link[1].joint.axis must not be zero, got [0, 0, 0]" in found
    assert "link[1].length must be in [0, 100] m, got -0.5" in found
    assert "link[1].inertia must be symmetric, got [[1, 2, 0], [0, 1, 0], [0, 0, 1]]" in found
    assert any(p.startswith("link[2].EI is not a known key") for p in found)
    assert "link[2].torsion.modes.count must be an integer 1..20, got 0" in found
    assert "link[2].polar_inertia_per_length must be > 0 for a link with torsion modes, got 0" in found


@pytest.mark.parametrize("tensor, words", [
    ([[1, 0, 0], [0, 1, 0], [0, 0, -1]], "positive semidefinite"),
    ([[3, 0, 0], [0, 1, 0], [0, 0, 1]], "at most the sum of the other two"),
    ([[1, 0], [0, 1]], "3 rows of 3 numbers"),
    ([[1, 0, 0], [0, "a", 0], [0, 0, 1]], "payload.inertia[2][2] must be a number"),
])
def test_inertia_tensors_must_be_physical(tensor, words):
    found = problems(spatial([boom()], payload={"mass": 1.0, "inertia": tensor}))
    assert len(found) == 1 and words in found[0] and found[0].startswith("payload.inertia")


def test_deformation_tables_are_checked_like_the_planar_modes():
    found = problems(spatial([boom(bending_z={"EI": -1.0, "modes": {"family": "clamped-fre", "count": 1}},
                                   axial={"EA": 1e5, "modes": {"count": 2, "damping_ratio": [0.1]},
                                          "stiffness": 2.0})]))
    assert "link[1].bending_z.EI must be in [1e-06, 1e+12] N.m2, got -1.0" in found
    assert any(p.startswith("link[1].bending_z.modes.family must be one of") and "did you mean 'clamped-free'" in p
               for p in found)
    assert "link[1].axial.modes.damping_ratio must have 2 values (one per mode), got [0.1] (1 value)" in found
    assert any(p.startswith("link[1].axial.stiffness is not a known key") for p in found)


def test_a_flexible_link_must_deform_somehow():
    bare = {"kind": "flexible", "length": 1.0, "mass": 1.0}
    (found,) = problems(spatial([bare]))
    assert found.startswith("link[1] must model at least one deformation")


def test_unknown_kind_is_named():
    (found,) = problems({"kind": "spacial", "name": "x", "link": []})
    assert found.startswith("kind must be one of 'planar', 'spatial'") and "did you mean 'spatial'" in found


def test_the_example_arm_loads_by_name():
    arm = flexfmu.load_arm("canadarm2_5link")
    assert arm.kind == "spatial" and [link.kind for link in arm.links] == ["rigid", "flexible", "flexible", "rigid",
                                                                          "rigid"]
    assert all(link.joint.kind == "flexible" for link in arm.links)
    assert arm.links[1].joint.offset == (0.0, 0.0, 0.475)  # paper 001's d


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(gravity=[0.0, 0.0, -9810.0]), "gravity[3] must be in [-1000, 1000] m/s2, got -9810.0"),
    (lambda d: d["link"][0]["joint"].update(rotation=[0.0, -90.0, 0.0]),
     "link[1].joint.rotation[2] must be in [-10, 10] rad, got -90.0"),
    (lambda d: d["link"][0]["joint"].update(offset=[0.0, 0.0, 475.0]),
     "link[1].joint.offset[3] must be in [-100, 100] m, got 475.0"),
    (lambda d: d["link"][0]["joint"].update(axis=[0.0, 0.0, 1e300]),
     "link[1].joint.axis[3] must be in [-1000, 1000] 1, got 1e+300"),
    (lambda d: d["link"][0].update(com=[50.0, 0.0, 0.0]),
     "link[1].com[1] must be within 10 link lengths of the joint (|value| <= 8 m), got 50.0"),
    (lambda d: d["link"][0]["inertia"][0].__setitem__(0, 1e300), "link[1].inertia[1][1] must be in [-1e+08, 1e+08]"),
    (lambda d: d["link"][1].update(polar_inertia_per_length=1e9),
     "link[2].polar_inertia_per_length must be in [0, 1e+06] kg.m, got 1000000000.0"),
    (lambda d: d["link"][1]["torsion"].update(GJ=1e20), "link[2].torsion.GJ must be in [1e-06, 1e+12] N.m2"),
    (lambda d: d["link"][1]["axial"].update(EA=0.0), "link[2].axial.EA must be in [0.001, 1e+13] N, got 0.0"),
    (lambda d: d["link"][1].update(length=1e-300), "link[2].length must be in [0.001, 100] m"),
    (lambda d: d["lumped_mass"][0].update(mass=1e9), "lumped_mass[1].mass must be in [0, 1e+06] kg"),
    (lambda d: d.update(link=d["link"] * 5), "link has 25 entries; at most 20 links are supported"),
    (lambda d: [d["link"][k]["bending_y"]["modes"].update(count=20) for k in (1, 2)]
     and d.update(link=d["link"] * 3), "link: the arm has 168 coordinates"),
])
def test_every_number_lies_in_its_physical_range(edit, message):
    """The spatial keys get ranges like the planar ones (flexfmu.spec.ranges), each message naming the field,
    the range with its unit and the value; the size limits apply too."""
    import tomllib

    from flexfmu.data import resolve_arm

    data = tomllib.loads(resolve_arm("canadarm2_5link").read_text())
    edit(data)
    found = problems(data)
    assert any(p.startswith(message) for p in found), found


def test_a_rigid_link_of_length_zero_is_a_body_that_only_turns():
    """Unlike a planar link, a spatial rigid link may have no length (a wrist roll); its centre of mass may
    still sit within a metre of the joint."""
    arm = flexfmu.arm_from_dict(spatial([{"kind": "rigid", "length": 0.0, "mass": 2.0, "com": [0.0, 0.0, 0.5],
                                          "inertia": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]}, boom()]))
    assert arm.links[0].length == 0.0 and arm.links[0].com == (0.0, 0.0, 0.5)


def test_a_prescribed_joint_is_refused_on_a_spatial_arm():
    """Motion-driven joints are a planar feature; a spatial joint asking for one is named, not ignored."""
    found = problems(spatial([boom(joint={"prescribed": True})]))
    assert any(p.startswith("link[1].joint.prescribed") for p in found), found
