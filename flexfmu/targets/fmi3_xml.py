"""modelDescription.xml and buildDescription.xml for FMI 3.0, from the plain-data variables.

The same variables and dependencies as FMI 2.0 (:mod:`flexfmu.targets.variables`),
written the FMI 3.0 way: typed ``<Float64>`` elements, an independent
variable ``time`` (value reference 0, unused by the model's blocks), the
``derivative`` attribute and the ModelStructure naming value references
rather than indices, the instantiation token instead of the GUID, and the
internal step as the CoSimulation attribute ``fixedInternalStepSize`` (any
communication step works: whole internal steps, then one shorter step).
Source files are listed in ``sources/buildDescription.xml``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from flexfmu.targets.fmi2_xml import Description, add_definitions, add_tool_annotations, number, xml_text
from flexfmu.targets.variables import UNITS, Structure, Variable

TIME_VR = 0  # below every block of ffmu_model.h


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
            "fixedInternalStepSize": number(info.internal_step), "maxOutputDerivativeOrder": "0",
            "hasEventMode": "false", "providesIntermediateUpdate": "false",
            "canReturnEarlyAfterIntermediateUpdate": "false",
        })

    add_definitions(root, info, sorted({v.unit for v in variables if v.unit in UNITS} | {"s"}))  # "s": time

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
            attrs["start"] = number(v.start)
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
    add_tool_annotations(annotation, info)
    return xml_text(root)


def build_description_xml(info: Description) -> str:
    """Return ``sources/buildDescription.xml``: the C sources of ``info`` that build its model identifier."""
    root = ET.Element("fmiBuildDescription", {"fmiVersion": "3.0"})
    configuration = ET.SubElement(root, "BuildConfiguration", {"modelIdentifier": info.model_identifier})
    files = ET.SubElement(configuration, "SourceFileSet", {"language": "C99"})
    for name in info.source_files:
        ET.SubElement(files, "SourceFile", {"name": name})
    return xml_text(root)
