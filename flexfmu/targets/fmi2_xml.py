"""modelDescription.xml for FMI 2.0, from the plain-data variables.

ModelStructure dependencies come from the CasADi Jacobian sparsity of the
derivatives and outputs with respect to states and inputs. InitialUnknowns
lists every output and acceleration (the unknowns with initial="calculated")
without a dependencies attribute, which FMI 2.0 reads as "depends on all
knowns". The GUID is filled in by the caller from a hash of the content.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from flexfmu.targets.variables import UNITS, Structure, Variable

LOG_CATEGORIES = {
    "logStatusError": "errors: wrong calls, non-finite states and outputs",
    "logStatusWarning": "warnings",
    "logAll": "everything",
}


@dataclass(frozen=True)
class Description:
    """What the XML says besides the variables."""

    model_name: str
    model_identifier: str
    description: str
    generation_tool: str
    stop_time: float
    communication_step: float
    integrator: str
    internal_step: float
    source_files: list[str]
    omega_max: float = 0.0
    stability_limit: float = float("inf")
    unstable_step_allowed: bool = False
    timing: object = None  # flexfmu.targets.timing.StepTiming, once the host's binary is timed
    reduction: object = None  # the Model's flexfmu.dynamics.metadata.ReductionSummary, if it has one


def number(value: float) -> str:
    """The float ``value`` as the XML attributes of both FMI versions write it (shortest round-trip text)."""
    return repr(float(value))


def add_definitions(root: ET.Element, info: Description, units: list[str]) -> None:
    """Append the sections FMI 2.0 and 3.0 write alike to the ``root`` of a model description: the
    UnitDefinitions of the unit names ``units``, the LogCategories and the DefaultExperiment of ``info``."""
    definitions = ET.SubElement(root, "UnitDefinitions")
    for name in units:
        unit = ET.SubElement(definitions, "Unit", {"name": name})
        ET.SubElement(unit, "BaseUnit", {k: str(e) for k, e in UNITS[name].items()})
    categories = ET.SubElement(root, "LogCategories")
    for name, text in LOG_CATEGORIES.items():
        ET.SubElement(categories, "Category", {"name": name, "description": text})
    ET.SubElement(root, "DefaultExperiment", {
        "startTime": "0.0", "stopTime": number(info.stop_time), "stepSize": number(info.communication_step),
    })


def xml_text(root: ET.Element) -> str:
    """The XML document of ``root``, indented, with its declaration."""
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def cosimulation_annotation(info: Description) -> dict[str, str]:
    """The attributes of flexfmu's vendor annotation of co-simulation (from ``info``): the integrator, its
    internal step, the arm's highest frequency and the stability limit of h times it, and whether an unstable
    step was exported on purpose."""
    attributes = {
        "integrator": info.integrator, "internalStep": number(info.internal_step),
        "highestFrequency": number(info.omega_max), "stepTimesHighestFrequency": number(
            info.internal_step * info.omega_max),
        "note": "fixed internal step h; any communication step works: the whole internal steps it holds, then "
                "one shorter step when it is no multiple of h",
    }
    if info.stability_limit != float("inf"):
        attributes["stabilityLimit"] = number(info.stability_limit)
    if info.unstable_step_allowed:
        attributes["unstableStepAllowed"] = "true"
        attributes["note"] += ("; the internal step is beyond the stability limit, exported on request "
                               "(--allow-unstable-step): steps may diverge")
    return attributes


def add_tool_annotations(tool: ET.Element, info: Description) -> None:
    """flexfmu's annotations of ``info`` under ``tool`` (FMI 2's Tool, FMI 3's Annotation, whose schemas allow
    one element there: ``Export``, holding the rest): the co-simulation scheme, the step's cost timed at
    export, and how the flexible bodies were reduced."""
    tool = ET.SubElement(tool, "Export")
    ET.SubElement(tool, "CoSimulation", cosimulation_annotation(info))
    if info.timing is not None:
        t = info.timing
        ET.SubElement(tool, "RealTime", {
            "medianStepCost": number(t.median_s), "worstStepCost": number(t.worst_s), "steps": str(t.steps),
            "communicationStep": number(t.communication_step), "realTimeFactor": number(t.realtime_factor),
            "host": t.host,
            "note": "seconds per doStep of communicationStep, timed on the exporting machine (median and worst of "
                    "steps); realTimeFactor = communicationStep / medianStepCost"})
    if info.reduction is not None:
        reduction = ET.SubElement(tool, "Reduction", {"method": info.reduction.method,
                                                      "description": info.reduction.description})
        for body in info.reduction.bodies:
            kept = [f"{field} {frequency:.6g}" for field, frequency, keep in body.modes if keep]
            dropped = [f"{field} {frequency:.6g}" for field, frequency, keep in body.modes if not keep]
            ET.SubElement(reduction, "Body", {"name": body.body, "interfaceValues": str(body.interface),
                                              "keptModes": ", ".join(kept), "droppedModes": ", ".join(dropped),
                                              "unit": "rad/s"})


def model_description_xml(info: Description, variables: list[Variable], structure: Structure, guid: str,
                          interface: str = "both") -> str:
    """Return the modelDescription.xml text for ``interface`` (cs, me or both).

    Parameters
    ----------
    info : Description
        Names, default experiment, integrator and source files.
    variables : list of Variable
        The model variables, in value-reference order (see :func:`flexfmu.targets.variables.fmu_variables`).
    structure : Structure
        The ModelStructure entries (see :func:`flexfmu.targets.variables.model_structure`).
    guid : str
        The FMU's GUID ("" while the content hash that derives it is computed).
    interface : str
        ``"cs"``, ``"me"`` or ``"both"``: which interface elements to write.
    """
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "2.0", "modelName": info.model_name, "guid": guid, "description": info.description,
        "generationTool": info.generation_tool, "variableNamingConvention": "structured",
        "numberOfEventIndicators": "0",
    })
    common = {
        "modelIdentifier": info.model_identifier, "needsExecutionTool": "false",
        "canBeInstantiatedOnlyOncePerProcess": "false", "canNotUseMemoryManagementFunctions": "false",
        "canGetAndSetFMUstate": "true", "canSerializeFMUstate": "true", "providesDirectionalDerivative": "true",
    }
    elements = []
    if interface in ("me", "both"):
        # fmi2CompletedIntegratorStep checks the validity envelope and records the last good point
        elements.append(ET.SubElement(root, "ModelExchange", {**common, "completedIntegratorStepNotNeeded": "false"}))
    if interface in ("cs", "both"):
        elements.append(ET.SubElement(root, "CoSimulation", {
            **common, "canHandleVariableCommunicationStepSize": "true", "canInterpolateInputs": "false",
            "maxOutputDerivativeOrder": "0", "canRunAsynchronuously": "false",
        }))
    for element in elements:
        files = ET.SubElement(element, "SourceFiles")
        for name in info.source_files:
            ET.SubElement(files, "File", {"name": name})

    add_definitions(root, info, sorted({v.unit for v in variables if v.unit in UNITS}))
    vendor = ET.SubElement(ET.SubElement(root, "VendorAnnotations"), "Tool", {"name": "flexfmu"})
    add_tool_annotations(vendor, info)

    model_variables = ET.SubElement(root, "ModelVariables")
    for v in variables:
        attrs = {"name": v.name, "valueReference": str(v.vr), "causality": v.causality, "variability": v.variability}
        if v.initial:
            attrs["initial"] = v.initial
        if v.description:
            attrs["description"] = v.description
        sv = ET.SubElement(model_variables, "ScalarVariable", attrs)
        real = {}
        if v.start is not None:
            real["start"] = number(v.start)
        if v.unit in UNITS:
            real["unit"] = v.unit
        if v.derivative_of is not None:
            real["derivative"] = str(v.derivative_of)
        ET.SubElement(sv, "Real", real)

    ms = ET.SubElement(root, "ModelStructure")
    for tag, entries in (("Outputs", structure.outputs), ("Derivatives", structure.derivatives)):
        group = ET.SubElement(ms, tag)
        for index, deps in entries:
            ET.SubElement(group, "Unknown", {"index": str(index), "dependencies": " ".join(map(str, deps))})
    initial = ET.SubElement(ms, "InitialUnknowns")
    for index in structure.initial_unknowns:
        ET.SubElement(initial, "Unknown", {"index": str(index)})
    return xml_text(root)
