"""Real time as a feature: every FMU sits still when left alone, and export times its step, records the cost
and refuses a model over its budget."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile

import fmpy
import numpy as np
import pytest

from flexfmu.dynamics.linear import linearise
from flexfmu.errors import ExportError
from flexfmu.harness.running import fmu_cache
from flexfmu.targets import ExportSettings, export_fmu
from flexfmu.targets.platforms import host_platform
from tests.conftest import EXAMPLE_ARMS, example_model

pytestmark = pytest.mark.compiler


def growth_rate(model) -> float:
    """The largest real part (1/s) of the eigenvalues of ``model`` linearised about its start state (the holding
    equilibrium), its torques held: above zero, the rest is unstable and round-off grows like exp(rate t)."""
    q = np.asarray(model.start_coordinates, float).copy()
    q[[model.coordinates.index(name) for name in model.states]] = model.start_state[:len(model.states)]
    lin = linearise(model, q, locked=[name for name in model.coordinates if name not in model.states])
    n, solve = len(lin.names), np.linalg.inv(lin.M)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-solve @ lin.K, -solve @ lin.D]])
    return float(np.linalg.eigvals(A).real.max())


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLE_ARMS)
def test_an_fmu_left_alone_stays_at_rest(name):
    """Issue 21: run every example arm's default FMU 5 s with its inputs untouched (the holding torques, or a
    prescribed joint held): no error, and its encoders and every state stay where they started. Its rest must
    be stable (no eigenvalue of the linearised arm, torques held, grows): constant torques cannot hold an
    unstable one, and an arm whose start pose is one starts elsewhere (Canadarm2 hangs: held out in 1 g its
    sagging booms leave the mass matrix indefinite and the rest grew at 213 1/s)."""
    model = example_model(name)
    rate = growth_rate(model)
    assert rate < 0.1, f"{name}: the rest grows at {rate:.3g} 1/s"
    fmu = fmu_cache.native_fmu(model.arm)
    encoders = model.outputs_of("joint_angle")
    states = model.states + [f"der({c})" for c in model.states]
    result = fmpy.simulate_fmu(str(fmu), stop_time=5.0, output_interval=0.01, output=encoders + states)
    x = np.column_stack([result[s] for s in states])
    start = model.start_state
    scale = np.maximum(np.abs(start), 1e-3)  # rad, m and per second alike: a millimetre or a milliradian
    drift = np.abs(x - start) / scale
    assert drift.max() < 1e-6, f"{states[int(np.argmax(drift.max(axis=0)))]} moved by {drift.max():.3g} of its scale"
    for angle in encoders:
        assert np.ptp(result[angle]) < 1e-9


def test_export_times_the_step_and_records_it(tmp_path):
    report = export_fmu(example_model("rigid_2link"), tmp_path / "arm.fmu",
                        ExportSettings(platforms=(host_platform(),)))
    timing = report.timing
    assert 20 <= timing.steps <= 2000
    assert 0 < timing.median_s <= timing.worst_s < 0.5
    assert timing.realtime_factor == pytest.approx(1e-3 / timing.median_s)
    with zipfile.ZipFile(report.path) as archive:
        root = ET.fromstring(archive.read("modelDescription.xml"))
    recorded = root.find("VendorAnnotations/Tool/Export/RealTime").attrib
    assert float(recorded["medianStepCost"]) == timing.median_s
    assert float(recorded["worstStepCost"]) == timing.worst_s
    assert int(recorded["steps"]) == timing.steps
    assert fmpy.read_model_description(str(report.path)).guid  # the annotation keeps the file valid


def test_export_refuses_a_model_over_its_budget_and_writes_nothing(tmp_path):
    """A budget no step can meet: the export fails naming the budget, the cost and what to change, and no
    FMU appears."""
    target = tmp_path / "over.fmu"
    with pytest.raises(ExportError, match=r"misses the real-time budget.*--communication-step"):
        export_fmu(example_model("yu_chen_2dof"), target,
                   ExportSettings(platforms=(host_platform(),), realtime_budget=1e-9))
    assert not target.exists()


def test_a_budget_needs_the_host_binary(tmp_path):
    if host_platform() == "win64":
        pytest.skip("the host is win64")
    with pytest.raises(ExportError, match="needs its binary"):
        export_fmu(example_model("rigid_2link"), tmp_path / "x.fmu",
                   ExportSettings(platforms=("win64",), realtime_budget=0.5))
    assert not (tmp_path / "x.fmu").exists()
