"""Whatever the spec accepts, the Model builds: a fuzz test over mutated example arms.

Mutants (``tests/spec_mutants.py``, seeded) of the example arms go through
``load_arm`` / ``arm_from_dict`` and ``build_model``. The only outcomes
allowed are a SpecError whose every problem starts with a field path, or a
Model whose mass matrix at q = 0 is finite, symmetric and positive
definite (Cholesky of M scaled to a unit diagonal, which keeps definiteness)
and whose accelerations there are finite (and, with prescribed joints, the
joints' torques). Anything else (another exception,
a hang) is a bug. The fast loop takes 500 mutants; with the slow tests, 9,500
more from another seed (10,000 in all), checked in parallel processes (the
mutants are independent). ``FLEXFMU_FUZZ_SEED`` changes the seeds.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import re
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import flexfmu
from flexfmu import SpecError
from tests.spec_mutants import example_arms, mutants

SEED = int(os.environ.get("FLEXFMU_FUZZ_SEED", "2024"))
# a field path (keys with 1-based indices, dot-separated) followed by a space or a colon, or a whole-file problem
FIELD_PATH = re.compile(r"^(invalid TOML at line \d+|the file is not UTF-8|the specification must be a table"
                        r"|[^\s.\[\]]+(\[\d+\])*(\.[^\s.\[\]]+(\[\d+\])*)*[ :])")


def outcome(kind: str, item, tmp_path) -> str:
    """"spec" (a SpecError naming fields at load), "model" (a valid Model) or "rejected at build" (a SpecError
    naming a link from build_model); anything else raises."""
    stage = "load"
    try:
        if kind == "toml":
            path = tmp_path / "arm.toml"
            path.write_bytes(item)
            arm = flexfmu.load_arm(path)
        else:
            arm = flexfmu.arm_from_dict(item)
        stage = "build"
        model = flexfmu.build_model(arm)
    except SpecError as error:
        unnamed = [problem for problem in error.problems if not FIELD_PATH.match(problem)]
        assert error.problems and not unnamed, f"problems without a field path: {unnamed}"
        return "spec" if stage == "load" else "rejected at build"
    n = len(model.coordinates)
    M = np.array(model.mass_matrix(np.zeros(n), model.nominal_parameters))
    assert np.isfinite(M).all() and (np.diag(M) > 0).all()
    scale = 1.0 / np.sqrt(np.diag(M))
    scaled = M * np.outer(scale, scale)
    assert np.abs(scaled - scaled.T).max() < 1e-10  # symmetric to round-off
    np.linalg.cholesky(scaled)  # raises LinAlgError unless positive definite
    ns = len(model.states)  # prescribed joints' angles are inputs, not states
    qdd = np.array(model.forward_dynamics(np.zeros(ns), np.zeros(ns), np.zeros(len(model.inputs)),
                                          model.nominal_parameters))
    assert np.isfinite(qdd).all()
    if model.drives.prescribed:
        zeros = (np.zeros(ns), np.zeros(ns), np.zeros(len(model.inputs)), model.nominal_parameters)
        assert np.isfinite(np.array(model.motion(*zeros)[3])).all()
    return "model"


def check_mutants(seed: int, numbered: list, folder: Path) -> collections.Counter:
    """The outcomes of the ``numbered`` mutants ((index, (kind, item)) of seed ``seed``), with ``folder`` for
    their files; the first failure raises naming the mutant. A mutant equal to one already checked (about one
    in six: small edits of the same example often coincide) takes its outcome: checking it again would
    repeat the same computation."""
    counts, seen = collections.Counter(), {}
    folder.mkdir(exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy overflow while sampling absurd shapes
        for index, (kind, item) in numbered:
            key = (kind, item if kind == "toml" else repr(item))
            try:
                if key not in seen:
                    seen[key] = outcome(kind, item, folder)
                counts[seen[key]] += 1
            except Exception as error:
                raise AssertionError(f"mutant {index} of seed {seed} ({kind}): {type(error).__name__}: {error}\n"
                                     f"{item!r}"[:3000]) from error
    return counts


def run_fuzz(seed: int, count: int, tmp_path, processes: int = 1) -> collections.Counter:
    """The outcomes of ``count`` mutants of seed ``seed``, dealt in turn to ``processes`` processes (new
    interpreters: the test process may hold threads, which a fork would copy half-way)."""
    numbered = list(enumerate(mutants(seed, count, example_arms())))
    if processes == 1:
        counts = check_mutants(seed, numbered, tmp_path)
    else:
        shares = [numbered[k::processes] for k in range(processes)]
        folders = [tmp_path / f"process{k}" for k in range(processes)]
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
            counts = sum(pool.map(check_mutants, [seed] * processes, shares, folders), collections.Counter())
    print(f"seed {seed}: {dict(counts)}")
    return counts


def test_five_hundred_mutants_give_spec_errors_or_sound_models(tmp_path):
    counts = run_fuzz(SEED, 500, tmp_path)
    assert sum(counts.values()) == 500
    # the mutants reach both outcomes: the test is not vacuous either way
    assert counts["spec"] > 250 and counts["model"] > 25


@pytest.mark.slow
def test_nine_thousand_five_hundred_more_mutants_give_spec_errors_or_sound_models(tmp_path):
    """With the test above, 10,000 mutants in a run with the slow tests; one process per core."""
    counts = run_fuzz(SEED + 1, 9_500, tmp_path, processes=min(os.cpu_count() or 1, 4))
    assert sum(counts.values()) == 9_500
    assert counts["spec"] > 4750 and counts["model"] > 475


@pytest.mark.parametrize("edit, fragment", [
    (lambda d: d["link"][0].update(length=1e300), "link[1].length must be in [0.001, 100] m, got 1e+300"),
    (lambda d: d["link"][0].update(length=1e-300), "link[1].length must be in [0.001, 100] m, got 1e-300"),
    (lambda d: d["link"][0]["joint"].update(gear_ratio=1e300), "link[1].joint.gear_ratio must be in [0.01, 10000]"),
    (lambda d: d["link"][1]["modes"].update(family="user", frame="tangent", shapes=["xi**2*exp(1000*xi)"]),
     "link[2].modes.shapes[1] = 'xi**2*exp(1000*xi)' is not usable on [0, 1]"),
    (lambda d: d["link"][1]["modes"].update(family="user", frame="tangent", shapes=["xi^2", "2*xi^2"]),
     "link[2].modes.shapes: shape 1 ('xi^2') is a linear combination of the others"),
    (lambda d: d.update(link=d["link"] * 11), "link has 22 entries; at most 20 links are supported"),
    (lambda d: d["link"][0]["modes"].update(count=20) or d["link"][1]["modes"].update(count=20)
     or d.update(link=d["link"] * 3), "link: the arm has 126 coordinates"),
])
def test_the_issues_findings_are_spec_errors_naming_the_field(edit, fragment):
    """The crashes and hangs of the issue: lengths of 1e300 and 1e-300, a gear ratio of 1e300, an
    overflowing user shape, dependent shapes, and arms too large to build in seconds."""
    data = example_arms()["yu_chen_2dof"][1]
    edit(data)
    with pytest.raises(SpecError) as error:
        flexfmu.arm_from_dict(data)
    assert any(problem.startswith(fragment) for problem in error.value.problems), error.value.problems


def test_a_centre_of_mass_at_1e300_is_refused():
    data = example_arms()["rigid_2link"][1]
    data["link"][1]["com"] = [1e300, 0.0]
    with pytest.raises(SpecError, match=r"link\[2\]\.com\[1\] must be within 10 link lengths of the joint"):
        flexfmu.arm_from_dict(data)


def test_an_arm_whose_masses_are_too_far_apart_is_refused_at_build_naming_the_link():
    """Each number in range, together singular in double precision: a payload of 1e6 kg m^2 on links
    of 0.1 kg (a fuzz finding). build_model names the link instead of returning a useless Model."""
    data = example_arms()["subudhi_morris_2link"][1]
    data["payload"]["inertia"] = 1e6
    arm = flexfmu.arm_from_dict(data)
    with pytest.raises(SpecError, match=r"link\[2\]: the mass matrix at q = 0 is singular to double precision"):
        flexfmu.build_model(arm)


@pytest.mark.slow
def test_the_largest_arm_the_limits_allow_builds_in_seconds(capsys):
    """Twenty flexible links of four modes each: 100 coordinates, the most load_arm accepts (measured about
    1.5 s; 200 coordinates would take 16 s and 400 over two minutes, which is why they are refused)."""
    import time

    link = {"kind": "flexible", "length": 0.5, "mass_per_length": 0.2, "EI": 1.0,
            "modes": {"family": "clamped-free", "count": 4}}
    arm = flexfmu.arm_from_dict({"name": "largest", "link": [link] * 20})
    with pytest.raises(SpecError, match="the arm has 101 coordinates"):
        flexfmu.arm_from_dict({"name": "larger", "link": [link] * 19 + [{**link, "modes": {
            "family": "clamped-free", "count": 5}}]})
    start = time.perf_counter()
    model = flexfmu.build_model(arm)
    seconds = time.perf_counter() - start
    with capsys.disabled():
        print(f"\nbuild_model of the largest allowed arm ({len(model.coordinates)} coordinates): {seconds:.2f} s")
    assert len(model.coordinates) == 100
    assert seconds < 60  # bounded: not the minutes of an unlimited arm
