"""Rows of the FMU benchmark for the alternatives, timed through FMPy.

- the Python-backed FMU (pythonfmu) of the same arm: its binary cannot run
  outside a Python host process, so its doStep is timed through FMPy's
  FMU2Slave, and so is the native FMU in the same way for comparison (the
  difference between the native figure here and the C-driver figure is
  FMPy's Python overhead);
- CasADi's own DaeBuilder.export_fmu (FMI 3.0 model exchange, experimental):
  sources generated, compiled, packaged, validated with FMPy, and the cost of
  one derivative evaluation timed through FMPy; any failure is recorded.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
import zipfile
from pathlib import Path

import casadi as ca
import fmpy
import fmpy.validation
from fmpy.fmi2 import FMU2Slave


def time_fmpy_dostep(path: Path, count: int, repeats: int) -> float:
    """Median ns per fmi2DoStep of 1 ms through FMPy's FMU2Slave."""
    md = fmpy.read_model_description(str(path))
    unzipped = path.with_suffix(".unzipped")  # beside the FMU (in the benchmark's work folder), not in /tmp
    slave = FMU2Slave(guid=md.guid, unzipDirectory=fmpy.extract(str(path), unzipdir=str(unzipped)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
    slave.instantiate()
    per_call = []
    for _ in range(repeats):
        slave.reset()
        slave.setupExperiment(startTime=0.0)
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        start = time.perf_counter()
        for k in range(count):
            slave.doStep(k * 1e-3, 1e-3)
        per_call.append((time.perf_counter() - start) / count * 1e9)
    slave.terminate()
    slave.freeInstance()
    return statistics.median(per_call)


def casadi_export_fmu_row(model, work: Path, count: int = 2000) -> dict:
    """Build, validate and time CasADi's own FMU of ``model``; record failures."""
    row = {"tool": "casadi DaeBuilder.export_fmu (FMI 3 ME)"}
    try:
        n = len(model.coordinates)
        folder = work / "casadi_fmu"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{model.arm.name}_casadi"
        dae = ca.DaeBuilder(name)
        xs = [dae.add(f"x{k}", "local", "continuous", {}) for k in range(2 * n)]
        us = [dae.add(f"u{k}", "input", "continuous", {}) for k in range(len(model.inputs))]
        ps = [dae.add(f"p{k}", "parameter", "tunable", {}) for k in range(len(model.parameters))]
        for k, value in enumerate(model.nominal_parameters):
            dae.set_start(f"p{k}", float(value))
        for k in range(len(us)):
            dae.set_start(f"u{k}", 0.0)
        xdot = model.state_derivative(ca.vertcat(*xs), ca.vertcat(*us), ca.vertcat(*ps))
        for k in range(2 * n):
            dae.eq(dae.der(xs[k]), xdot[k])
        cwd = os.getcwd()
        os.chdir(folder)  # export_fmu writes into the working directory
        try:
            files = dae.export_fmu()
        finally:
            os.chdir(cwd)
        row["files"] = sorted(files.values())
        sources = [str(folder / local) for local in files if local.endswith(".c")]
        library = folder / "binary" / f"{name}.so"
        library.parent.mkdir(parents=True, exist_ok=True)
        headers = Path(fmpy.__file__).parent / "c-code"
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{headers}", f"-I{folder}", *sources, "-o", str(library),
                        "-lm"], check=True, capture_output=True, text=True)
        fmu = work / f"{name}.fmu"
        with zipfile.ZipFile(fmu, "w") as archive:
            for local, inside in files.items():
                archive.write(folder / local, inside)
            archive.write(library, f"binaries/x86_64-linux/{name}.so")
        problems = fmpy.validation.validate_fmu(str(fmu))
        row["validation_problems"] = [problem.splitlines()[0] for problem in problems[:5]]
        row["validation_problem_count"] = len(problems)
        start = time.perf_counter()
        fmpy.simulate_fmu(str(fmu), stop_time=0.1, output_interval=1e-3)
        row["simulate_0.1s_through_fmpy_s"] = time.perf_counter() - start
    except Exception as error:  # record whatever stops it: this is the point of the row
        row["error"] = f"{type(error).__name__}: {str(error)[:300]}"
    return row
