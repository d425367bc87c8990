"""The C contract's dynamics (articulated-body passes) against the Model's
independent M(q) and sparse LDL, and the size of the code they generate."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.derivation import chain
from flexfmu import build_model
from flexfmu.codegen import generate_c
from flexfmu.integrate import implicit_midpoint_step
from tests.conftest import EXAMPLE_ARMS, example_model


def parameters_and_constants(model, dynamics, rng=None):
    """p (nominal, or every entry perturbed by up to 10 % and gravity by
    0.5 m/s2 when ``rng`` is given) and pc = [p; c(p)]."""
    p = model.nominal_parameters
    if rng is not None:
        p = p * rng.uniform(0.9, 1.1, p.size)
        p += [rng.uniform(-0.5, 0.5) if name.startswith("gravity.") else 0.0 for name in model.parameters]
    return p, np.concatenate([p, np.array(dynamics.constants(p)).ravel()])


def random_point(model, rng):
    n, nu = len(model.states), len(model.inputs)
    # a Delta robot's elastic coordinates are nodal displacements and rotations: small, about its start pose
    scale = np.array([0.01 if c.kind == "elastic" else 1.0 for c in model.state_layout] * 2)
    return model.start_state + rng.normal(size=2 * n) * scale, rng.normal(size=nu)


MODELS = {name: (lambda name=name: example_model(name)) for name in EXAMPLE_ARMS}
MODELS["chain4"] = lambda: build_model(chain(4))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_articulated_accelerations_equal_the_mass_matrix_solve(name):
    """qdd from the O(N) passes equals M(q)^-1 (B u - h) from the closed form
    and CasADi's LDL, at random states, inputs, poses and parameters."""
    model = MODELS[name]()
    dynamics = model.compiled
    rng = np.random.default_rng(7)
    for _ in range(5):
        p, pc = parameters_and_constants(model, dynamics, rng)
        x, u = random_point(model, rng)
        fast = np.array(dynamics.state_derivative(x, u, pc)).ravel()
        reference = np.array(model.state_derivative(x, u, p)).ravel()
        assert np.abs(fast - reference).max() <= 1e-9 * max(1.0, np.abs(reference).max())


@pytest.mark.parametrize("name", ["yu_chen_2dof", "subudhi_morris_2link", "chain4"])
def test_newton_correction_equals_the_dense_formula(name):
    """(M + h/2 D + h^2/4 K)^-1 M r with the Model's M, D, K, evaluated by
    the passes with the structure folded into each body."""
    model = MODELS[name]()
    dynamics = model.compiled
    rng = np.random.default_rng(3)
    p, pc = parameters_and_constants(model, dynamics, rng)
    n = len(model.coordinates)
    (x, u), v0, h = random_point(model, rng), rng.normal(size=n), 1e-3
    q, w = x[:n], x[n:]
    correction = np.array(dynamics.newton_correction(q, w, v0, u, pc, h)).ravel()
    M = np.array(model.mass_matrix(q, p))
    K, D = (np.array(v) for v in model.structure_matrices(p))
    r = w - v0 - h / 2 * np.array(model.forward_dynamics(q, w, u, p)).ravel()
    expected = np.linalg.solve(M + h / 2 * D + h**2 / 4 * K, M @ r)
    assert np.abs(correction - expected).max() <= 1e-9 * np.abs(expected).max()


def test_implicit_step_solves_the_midpoint_equation():
    """Three simplified Newton iterations leave the implicit midpoint
    equation w = v0 + h/2 qdd(q0 + h/2 w, w) satisfied to 1e-9 relative
    on the stiff arm at its default step."""
    model = example_model("subudhi_morris_2link")
    dynamics = model.compiled
    p, pc = parameters_and_constants(model, dynamics)
    n, h = len(model.coordinates), 5e-4
    x, u = random_point(model, np.random.default_rng(5))
    x_next = np.array(implicit_midpoint_step(dynamics)(x, u, pc, h)).ravel()
    w = (x_next[:n] - x[:n]) / h
    qdd = np.array(model.forward_dynamics(x[:n] + h / 2 * w, w, u, p)).ravel()
    residual = w - x[n:] - h / 2 * qdd
    assert np.abs(residual).max() <= 1e-9 * np.abs(w).max()
    assert np.allclose(x_next[n:], 2 * w - x[n:])


def generated_kilobytes(links: int, directory) -> float:
    dynamics = build_model(chain(links)).compiled
    paths = generate_c([dynamics.state_derivative, dynamics.directional], directory / str(links))
    return paths[0].stat().st_size / 1024


def test_generated_code_grows_linearly_with_the_links(tmp_path):
    """Doubling the links at most doubles the C (the straight-line O(N^3)
    form it replaced grew about 5 times from 4 to 8 links)."""
    small, large = generated_kilobytes(4, tmp_path), generated_kilobytes(8, tmp_path)
    assert large < 2.0 * small
