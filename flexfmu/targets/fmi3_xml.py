"""modelDescription.xml and buildDescription.xml for FMI 3.0, from the plain-data variables.

The same variables and dependencies as FMI 2.0 (:mod:`flexfmu.targets.variables`),
written the FMI 3.0 way: typed ``<Float64>`` elements, an independent
variable ``time`` (value reference 0, unused by the model's blocks), the
``derivative`` attribute and the ModelStructure naming value references
rather than indices, the instantiation token instead of the GUID, and the
internal step as the CoSimulation attribute ``fixedInternalStepSize`` (the
importer should use a multiple of it as communication step, which is
flexfmu's rule). Source files are listed in ``sources/buildDescription.xml``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from flexfmu.targets.fmi2_xml import LOG_CATEGORIES, Description
from flexfmu.targets.variables import UNITS, Structure, Variable

TIME_VR = 0  # below every block of ffmu_model.h
UNITS_WITH_TIME = {**UNITS, "s": {"s": 1}}


def _number(value: float) -> str:
    return repr(float(value))


def _text(root: ET.Element) -> str:
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def model_description_xml(info: Description, variables: list[Variable], structure: Structure, token: str,
                          interface: str = "both") -> str:
    """Return the FMI 3.0 modelDescription.xml text for ``interface`` (cs, me or both).

    Parameters
    ----------
    info : Description
        Names, default experiment, integrator and internal step.
    variables : list of Variable
        The model variables, in value-reference order (see :func:`flexfmu.targets.variables.fmu_variables`).
    structure : Structure
        The ModelStructure entries (see :func:`flexfmu.targets.variables.model_structure`), by 1-based
        position in ``variables``.
    token : str
        The instantiation token ("" while the content hash that derives it is computed).
    interface : str
        ``"cs"``, ``"me"`` or ``"both"``: which interface elements to write.
    """
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "3.0", "modelName": info.model_name, "instantiationToken": token,
        "description": info.description, "generationTool": info.generation_tool,
        "variableNamingConvention": "structured",
    })
    common = {
        "modelIdentifier": info.model_identifier, "needsExecutionTool": "false",
        "canBeInstantiatedOnlyOncePerProcess": "false", "canGetAndSetFMUState": "true",
        "canSerializeFMUState": "true", "providesDirectionalDerivatives": "true",
        "providesAdjointDerivatives": "false",
    }
    if interface in ("me", "both"):
        ET.SubElement(root, "ModelExchange", {**common, "needsCompletedIntegratorStep": "true"})
    if interface in ("cs", "both"):
        ET.SubElement(root, "CoSimulation", {
            **common, "canHandleVariableCommunicationStepSize": "true",
            "fixedInternalStepSize": _number(info.internal_step), "maxOutputDerivativeOrder": "0",
            "hasEventMode": "false", "providesIntermediateUpdate": "false",
            "canReturnEarlyAfterIntermediateUpdate": "false",
        })

    used = sorted({v.unit for v in variables if v.unit in UNITS} | {"s"})
    units = ET.SubElement(root, "UnitDefinitions")
    for name in used:
        unit = ET.SubElement(units, "Unit", {"name": name})
        ET.SubElement(unit, "BaseUnit", {k: str(e) for k, e in UNITS_WITH_TIME[name].items()})

    categories = ET.SubElement(root, "LogCategories")
    for name, text in LOG_CATEGORIES.items():
        ET.SubElement(categories, "Category", {"name": name, "description": text})
    ET.SubElement(root, "DefaultExperiment", {
        "startTime": "0.0", "stopTime": _number(info.stop_time), "stepSize": _number(info.communication_step),
    })

    model_variables = ET.SubElement(root, "ModelVariables")
    ET.SubElement(model_variables, "Float64", {"name": "time", "valueReference": str(TIME_VR),
                                               "causality": "independent", "variability": "continuous",
                                               "unit": "s", "description": "simulation time"})
    vr_at = {k + 1: v.vr for k, v in enumerate(variables)}  # FMI 2's 1-based positions -> value references
    for v in variables:
        attrs = {"name": v.name, "valueReference": str(v.vr), "causality": v.causality, "variability": v.variability}
        if v.initial:
            attrs["initial"] = v.initial
        if v.description:
            attrs["description"] = v.description
        if v.start is not None:
            attrs["start"] = _number(v.start)
        if v.unit in UNITS:
            attrs["unit"] = v.unit
        if v.derivative_of is not None:
            attrs["derivative"] = str(vr_at[v.derivative_of])
        ET.SubElement(model_variables, "Float64", attrs)

    ms = ET.SubElement(root, "ModelStructure")
    for tag, entries in (("Output", structure.outputs), ("ContinuousStateDerivative", structure.derivatives)):
        for index, deps in entries:
            ET.SubElement(ms, tag, {"valueReference": str(vr_at[index]),
                                    "dependencies": " ".join(str(vr_at[d]) for d in deps)})
    for index in structure.initial_unknowns:
        ET.SubElement(ms, "InitialUnknown", {"valueReference": str(vr_at[index])})
    annotation = ET.SubElement(ET.SubElement(root, "Annotations"), "Annotation", {"type": "org.flexfmu"})
    ET.SubElement(annotation, "CoSimulation", {
        "integrator": info.integrator, "internalStep": _number(info.internal_step),
        "note": "fixed internal step h; any communication step works: the whole internal steps it holds, then "
                "one shorter step when it is no multiple of h",
    })
    return _text(root)


def build_description_xml(info: Description) -> str:
    """Return ``sources/buildDescription.xml``: the C sources of ``info`` that build its model identifier."""
    root = ET.Element("fmiBuildDescription", {"fmiVersion": "3.0"})
    configuration = ET.SubElement(root, "BuildConfiguration", {"modelIdentifier": info.model_identifier})
    files = ET.SubElement(configuration, "SourceFileSet", {"language": "C99"})
    for name in info.source_files:
        ET.SubElement(files, "SourceFile", {"name": name})
    return _text(root)
