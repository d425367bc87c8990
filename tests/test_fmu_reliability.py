"""The native FMU at its edges: failed steps, any communication step, the validity envelope, threads.

- A step that fails (NaN, inf or huge input) rolls the instance back to its
  last good point, so every value read afterwards is that point's, and
  fmi2GetFMUstate and fmi2Reset work; in co-simulation and model exchange.
- A communication step that is no multiple of the internal step works (whole
  steps and a shorter last one) and is as accurate as an exact multiple
  against the CVODES reference; exact multiples keep the fast path.
- Leaving the validity envelope (tip deflection over 10 % of the link, spring
  deflection over 0.1 rad) logs one warning per quantity naming it and the
  time, and the output envelope.exceeded says so; checked against the
  recorded deflections, computed independently from the states.
- 100 instances of one FMU in 8 threads give the bits of one instance.
"""

from __future__ import annotations

import ctypes
import threading
import zipfile
from functools import lru_cache

import fmpy
import numpy as np
import pytest
from fmpy import calloc, free
from fmpy.fmi2 import (
    FMU2Model, FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE, fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE, fmi2LastSuccessfulTime,
)

from flexfmu.control.controllers import HeldInputs
from flexfmu.harness.reports.envelope import envelope_lines, envelope_outputs, envelope_summary
from flexfmu.harness.running.reference import simulate_reference
from flexfmu.harness.running.runner import run_fmu
from flexfmu.targets import ExportError, ExportSettings, export_fmu
from flexfmu.targets.platforms import host_platform
from tests.conftest import example_model, unzipped

pytestmark = [pytest.mark.compiler, pytest.mark.slow]  # every test builds an FMU (a full C compile of the model)

ARMS = ("yu_chen_2dof", "subudhi_morris_2link")


@pytest.fixture(scope="module")
def fmus(example_fmu):
    return {name: example_fmu(name) for name in ARMS}


class Log:
    """The FMU's log messages, through FMI callbacks of our own (FMPy's allocator)."""

    def __init__(self):
        self.messages: list[tuple[int, str]] = []
        self.callbacks = fmi2CallbackFunctions()
        self.callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)

    def _log(self, environment, instance, status, category, message):
        self.messages.append((status, message.decode()))

    def of_status(self, status: int) -> list[str]:
        return [text for st, text in self.messages if st == status]


WARNING, ERROR = 1, 3


@lru_cache(maxsize=None)
def read_description(path):
    return fmpy.read_model_description(str(path))


def started(report, name, log=None, interface="cs"):
    """An initialised instance (FMPy) of the FMU of ``report`` and its value references by name."""
    md = read_description(report.path)
    cls, interface_description = (FMU2Slave, md.coSimulation) if interface == "cs" else (FMU2Model, md.modelExchange)
    fmu = cls(guid=md.guid, unzipDirectory=unzipped(report.path), modelIdentifier=interface_description.modelIdentifier,
              instanceName=name)
    fmu.instantiate(callbacks=None if log is None else log.callbacks)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    return fmu, {v.name: v.valueReference for v in md.modelVariables}


def every_value(fmu, vrs) -> np.ndarray:
    return np.array(fmu.getReal(sorted(vrs.values())))


# --- failed steps keep the last good state ------------------------------------------------------------------

BAD_INPUTS = {"nan": float("nan"), "inf": float("inf"), "huge": 1e9, "overflow": 1e308}


@pytest.mark.parametrize("bad", sorted(BAD_INPUTS))
def test_a_failed_cs_step_rolls_back_to_the_last_good_point(fmus, bad):
    log = Log()
    fmu, vrs = started(fmus["yu_chen_2dof"], f"cs-{bad}", log)
    torque = [vrs["tau[1]"], vrs["tau[2]"]]
    fmu.setReal(torque, [0.5, 0.1])
    for k in range(10):
        fmu.doStep(k * 1e-3, 1e-3)
    good = every_value(fmu, vrs)
    fmu.setReal([vrs["tau[1]"]], [BAD_INPUTS[bad]])
    with pytest.raises(Exception, match="status 3"):
        fmu.doStep(0.01, 1e-3)
    errors = log.of_status(ERROR)
    assert "rolled back to the last good point t=0.01" in errors[-1]
    assert ("is NaN" if bad == "nan" else "input 'tau[1]' is +Inf" if bad == "inf" else "state '") in errors[0]
    after = every_value(fmu, vrs)
    assert np.isfinite(after).all() and np.array_equal(after, good)  # states, inputs, parameters, outputs
    assert fmu.getRealStatus(fmi2LastSuccessfulTime) == pytest.approx(0.01, abs=1e-15)
    state = fmu.getFMUstate()  # still works in the error state, and holds the good point
    assert len(fmu.serializeFMUstate(state)) > 0
    fmu.freeFMUstate(state)
    fmu.reset()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.setReal(torque, [0.5, 0.1])
    for k in range(10):
        fmu.doStep(k * 1e-3, 1e-3)
    assert np.array_equal(every_value(fmu, vrs), good)  # a reset instance runs as new
    fmu.terminate()
    fmu.freeInstance()


@pytest.mark.parametrize("bad", ["nan", "inf", "overflow"])
def test_a_failed_me_evaluation_rolls_back_to_the_last_good_state(fmus, bad):
    """Model exchange: NaN and inf inputs, and a finite input whose generalized force overflows (1e308 N m
    through a gear of 64), make the derivatives non-finite: fmi2GetDerivatives fails and the instance is back
    at the last state whose derivatives were finite."""
    log = Log()
    fmu, vrs = started(fmus["yu_chen_2dof"], f"me-{bad}", log, "me")
    n = 2 * len(example_model("yu_chen_2dof").coordinates)
    x, dx = (ctypes.c_double * n)(), (ctypes.c_double * n)()
    fmu.enterContinuousTimeMode()
    fmu.setReal([vrs["tau[1]"], vrs["tau[2]"]], [0.5, 0.1])
    for k in range(10):  # explicit Euler, as a simple importer integrates
        fmu.getContinuousStates(x, n)
        fmu.getDerivatives(dx, n)
        fmu.setTime((k + 1) * 1e-4)
        fmu.setContinuousStates((ctypes.c_double * n)(*[a + 1e-4 * b for a, b in zip(x, dx)]), n)
        fmu.completedIntegratorStep()
    fmu.getDerivatives(dx, n)
    fmu.getContinuousStates(x, n)
    good, good_x = every_value(fmu, vrs), np.array(x)
    fmu.setReal([vrs["tau[1]"]], [BAD_INPUTS[bad]])
    with pytest.raises(Exception, match="status 3"):
        fmu.getDerivatives(dx, n)
    assert "the derivative of state" in log.of_status(ERROR)[0]
    assert "rolled back to the last good point t=0.001" in log.of_status(ERROR)[-1]
    fmu.getContinuousStates(x, n)
    assert np.array_equal(np.array(x), good_x) and np.array_equal(every_value(fmu, vrs), good)
    fmu.freeFMUstate(fmu.getFMUstate())
    fmu.reset()
    fmu.freeInstance()


# --- any communication step -------------------------------------------------------------------------------

SWITCHES = [(0.0, [0.6, 0.2]), (0.5, [-0.6, -0.2]), (1.0, [0.0, 0.0]), (1.5, [0.3, -0.1])]


def test_a_step_of_half_a_millisecond_is_as_accurate_as_an_exact_multiple(fmus, capsys):
    """yu_chen's internal step is 1/3 ms: 0.5 ms is one whole step and one of 1/6 ms. Against the CVODES
    reference (rtol 1e-10) over 2 s of switching torques, its joint angles are within 1e-6 rad, as those of
    1 ms steps (three whole steps) are."""
    model = example_model("yu_chen_2dof")
    report = fmus["yu_chen_2dof"]
    assert report.internal_step == pytest.approx(1e-3 / 3)
    held = HeldInputs(SWITCHES, model.inputs)
    angles = model.outputs_of("joint_angle")
    errors = {}
    for step in (1e-3, 0.5e-3):
        grid = np.linspace(0.0, 2.0, int(round(2.0 / step)) + 1)
        reference = simulate_reference(model, 2.0, step, inputs=held)
        run = run_fmu(report.path, model, held, grid, record=angles)
        errors[step] = max(np.abs(run[a] - reference[a]).max() for a in angles)
    with capsys.disabled():
        print(f"\njoint angle error against the reference over 2 s: 1 ms steps {errors[1e-3]:.3g} rad, "
              f"0.5 ms steps {errors[0.5e-3]:.3g} rad")
    assert errors[1e-3] < 1e-6 and errors[0.5e-3] < 1e-6


def test_exact_multiples_take_whole_steps_and_time_follows_the_master(fmus):
    """A step of 3 h gives the bits of three steps of h (the fast path: no shorter last step); after 0.5 ms
    steps the FMU's time is the master's to round-off."""
    report = fmus["yu_chen_2dof"]
    h = report.internal_step
    one, vrs = started(report, "one")
    three, _ = started(report, "three")
    for fmu in (one, three):
        fmu.setReal([vrs["tau[1]"]], [0.4])
    for k in range(30):
        one.doStep(k * 3 * h, 3 * h)
        for j in range(3):
            three.doStep((3 * k + j) * h, h)
    assert np.array_equal(every_value(one, vrs), every_value(three, vrs))
    half, _ = started(report, "half")
    for k in range(2000):
        half.doStep(k * 0.5e-3, 0.5e-3)
    assert half.getRealStatus(fmi2LastSuccessfulTime) == pytest.approx(1.0, abs=1e-12)
    for fmu in (one, three, half):
        fmu.freeInstance()


# --- the validity envelope ----------------------------------------------------------------------------------

def envelope_run(report, model, torque, steps, log, limits=None):
    """Constant ``torque`` for ``steps`` 1 ms steps; the envelope outputs, deflections and states per step."""
    fmu, vrs = started(report, "envelope", log)
    if limits:
        fmu.setReal([vrs[name] for name in limits], list(limits.values()))
    fmu.setReal([vrs[name] for name in model.inputs], torque)
    names = envelope_outputs(model) + model.outputs_of("deflection") + model.coordinates
    rows = []
    for k in range(steps):
        fmu.doStep(k * 1e-3, 1e-3)
        rows.append(fmu.getReal([vrs[name] for name in names]))
    fmu.freeInstance()
    return {name: np.array(column) for name, column in zip(names, np.array(rows).T)}


def first_crossing(values, limit) -> float | None:
    beyond = np.flatnonzero(np.abs(values) > limit)
    return None if beyond.size == 0 else 1e-3 * (beyond[0] + 1)


@pytest.mark.parametrize("arm, torque, steps", [("subudhi_morris_2link", [2.0, 2.0], 1000),
                                                ("yu_chen_2dof", [1e5, 1e5], 20)])
def test_leaving_the_envelope_warns_once_per_quantity_naming_it_and_the_time(fmus, arm, torque, steps):
    """The issue's two arms: Subudhi-Morris under a constant 2 N m, Yu-Chen under 1e5 N m. Relative
    deflections are checked against the recorded deflection over the link length, spring deflections
    against the rotor and joint angles of the state; the warnings come although logging is off."""
    model = example_model(arm)
    log = Log()
    run = envelope_run(fmus[arm], model, torque, steps, log)
    expected = {}
    for link in (1, 2):
        relative = run[f"link[{link}].deflection"] / model.parameters[f"link[{link}].length"]
        np.testing.assert_allclose(run[f"link[{link}].relative_deflection"], relative, rtol=1e-12, atol=1e-15)
        expected[f"link[{link}].relative_deflection"] = first_crossing(relative, 0.1)
        if f"alpha[{link}]" in run:
            spring = run[f"alpha[{link}]"] - run[f"theta[{link}]"]
            np.testing.assert_allclose(run[f"joint[{link}].spring_deflection"], spring, rtol=1e-12, atol=1e-15)
            expected[f"joint[{link}].spring_deflection"] = first_crossing(spring, 0.1)
    warnings = log.of_status(WARNING)
    crossed = {name: t for name, t in expected.items() if t is not None}
    assert crossed and len(warnings) == len(crossed), warnings
    for name, t in crossed.items():
        (warning,) = [w for w in warnings if f" {name} = " in w]
        assert warning.startswith(f"t={t:.9g} s: {name} = ") and "is beyond the validity envelope" in warning
        assert f"of {'link' if 'link' in name else 'flexible joint'} {name[name.index('[') + 1]}" in warning
    beyond_any = np.zeros(steps, bool)
    for name in expected:
        beyond_any |= np.abs(run[name]) > 0.1
    assert np.array_equal(run["envelope.exceeded"], beyond_any.astype(float))
    if arm == "subudhi_morris_2link":  # the issue: 0.89 m of deflection on a 0.5 m link
        assert np.abs(run["link[1].deflection"]).max() > 0.5


def test_the_envelope_limits_are_tunable_parameters(fmus):
    model = example_model("subudhi_morris_2link")
    log = Log()
    run = envelope_run(fmus["subudhi_morris_2link"], model, [2.0, 2.0], 300, log,
                       {"envelope.link_deflection": 0.5, "envelope.joint_deflection": 1.0})
    relative = run["link[1].deflection"] / model.parameters["link[1].length"]
    t = first_crossing(relative, 0.5)
    assert t is not None and first_crossing(relative, 0.1) < t
    assert [w for w in log.of_status(WARNING) if "link[1]" in w][0].startswith(f"t={t:.9g} s:")


def test_model_exchange_checks_the_envelope_at_completed_steps(fmus):
    model = example_model("subudhi_morris_2link")
    log = Log()
    fmu, vrs = started(fmus["subudhi_morris_2link"], "me-envelope", log, "me")
    fmu.enterContinuousTimeMode()
    n = 2 * len(model.coordinates)
    x = np.zeros(n)
    x[model.coordinates.index("f[1,1]")] = 0.2  # a mode shape normalised to 1: about 0.2 m at the tip of 0.5 m
    fmu.setContinuousStates((ctypes.c_double * n)(*x), n)
    assert log.of_status(WARNING) == []
    fmu.completedIntegratorStep()
    (warning,) = log.of_status(WARNING)
    assert warning.startswith("t=0 s: link[1].relative_deflection = ")
    assert fmu.getReal([vrs["envelope.exceeded"]]) == [1.0]
    fmu.completedIntegratorStep()
    assert len(log.of_status(WARNING)) == 1  # once per quantity
    fmu.freeInstance()


def test_the_harness_reports_when_each_run_left_the_envelope(fmus):
    model = example_model("yu_chen_2dof")
    grid = np.linspace(0.0, 0.01, 11)
    held = HeldInputs([(0.0, [1e5, 1e5])], model.inputs)
    runs = {"native-cs": run_fmu(fmus["yu_chen_2dof"].path, model, held, grid, record=envelope_outputs(model)),
            "reference": simulate_reference(model, 0.01, 1e-3, inputs=held)}
    summary = envelope_summary(model, runs)
    assert summary["limits"] == {"link[1].relative_deflection": 0.1, "link[2].relative_deflection": 0.1}
    for run in summary["runs"].values():
        assert run["left_at"] == pytest.approx(1e-3) and max(run["peak_fraction"].values()) > 100
    (line, _) = envelope_lines(summary)
    assert "**left** by native-cs at t = 0.001 s, reference at t = 0.001 s" in line


# --- threads, and steps checked at export -----------------------------------------------------------------------

def test_a_hundred_instances_in_eight_threads_give_the_bits_of_one(fmus):
    report = fmus["subudhi_morris_2link"]
    md = read_description(report.path)
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    outputs = [v.valueReference for v in md.modelVariables if v.causality == "output"]

    def run(instances):
        for fmu, _ in instances:
            fmu.setReal([vrs["tau[1]"], vrs["tau[2]"]], [0.2, -0.1])
        rows = [[] for _ in instances]
        for k in range(200):
            for (fmu, _), row in zip(instances, rows):
                if k == 100:
                    fmu.setReal([vrs["tau[1]"]], [-0.3])
                fmu.doStep(k * 1e-3, 1e-3)
                row.append(fmu.getReal(outputs))
        for fmu, _ in instances:
            fmu.freeInstance()
        return [np.array(row) for row in rows]

    (expected,) = run([started(report, "single")])
    results, failures = {}, []

    def worker(index):
        try:
            mine = [k for k in range(100) if k % 8 == index]
            for k, rows in zip(mine, run([started(report, f"instance{k}") for k in mine])):
                results[k] = rows
        except Exception as error:  # reported below: an exception in a thread would vanish
            failures.append(error)

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and sorted(results) == list(range(100))
    assert all(np.array_equal(rows, expected) for rows in results.values())


def test_an_unstable_rk4_step_is_refused_at_export_or_recorded_when_allowed(tmp_path):
    """yu_chen at --step 0.01: h * omega_max = 7.6, beyond RK4's 2 sqrt(2) = 2.83 on the imaginary axis."""
    model = example_model("yu_chen_2dof")
    with pytest.raises(ExportError, match=r"h \* omega_max = 7.63 > 2.83 .* use a step <= 0.00371 s"):
        export_fmu(model, tmp_path / "refused.fmu", ExportSettings(internal_step=0.01))
    assert list(tmp_path.iterdir()) == []
    # this machine's binary is enough: the model description is what is checked
    report = export_fmu(model, tmp_path / "allowed.fmu", ExportSettings(internal_step=0.01, allow_unstable_step=True,
                                                                        platforms=(host_platform(),)))
    xml = zipfile.ZipFile(report.path).read("modelDescription.xml").decode()
    assert 'unstableStepAllowed="true"' in xml and 'stabilityLimit="2.8284271247461903"' in xml
