"""What PythonFMU leaves out of modelDescription.xml, added by the slaves.

PythonFMU 0.7 writes variables without units, no UnitDefinitions and a
ModelStructure without InitialUnknowns. FMI 2.0 requires every output with
initial="calculated" among the InitialUnknowns, so FMPy's validation reports
the FMU as incomplete without them; the units make the variables match the
native FMU's. Both slaves call :func:`complete_description` from their
``to_xml`` and read their settings with :func:`read_config`.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement

from flexfmu import __version__
from flexfmu.targets.variables import UNITS

CONFIG_FILE = "flexfmu_config.json"


def read_config(resources: str | None) -> dict:
    """The settings the exporter wrote next to the slave script.

    The slave is instantiated with ``resources`` = the FMU's resources folder
    (and, while PythonFMU builds the FMU, the build folder, which holds the
    same files).
    """
    if resources is None:
        raise RuntimeError("the slave needs its resources folder (FMI resourceLocation)")
    return json.loads((Path(resources) / CONFIG_FILE).read_text())


def complete_description(root: Element, units: dict[str, str]) -> Element:
    """Add units, UnitDefinitions and InitialUnknowns to PythonFMU's XML.

    Parameters
    ----------
    root : Element
        ``fmiModelDescription`` as returned by ``Fmi2Slave.to_xml``.
    units : dict
        ``{variable name: unit}``; units flexfmu does not define
        (``flexfmu.targets.variables.UNITS``) are left out, as in the native FMU.

    Returns
    -------
    Element
        ``root``, changed in place.
    """
    pythonfmu_tool = root.get("generationTool", "PythonFMU")
    root.set("generationTool", f"flexfmu {__version__} ({pythonfmu_tool})")
    used = set()
    variables = root.find("ModelVariables")
    for sv in variables:
        unit = units.get(sv.get("name"))
        if unit in UNITS:
            sv.find("Real").set("unit", unit)
            used.add(unit)
    if used:
        definitions = Element("UnitDefinitions")
        for name in sorted(used):
            unit = SubElement(definitions, "Unit", {"name": name})
            SubElement(unit, "BaseUnit", {k: str(e) for k, e in UNITS[name].items()})
        position = list(root).index(root.find("CoSimulation")) + 1
        root.insert(position, definitions)

    calculated_outputs = [
        k + 1 for k, sv in enumerate(variables)
        if sv.get("causality") == "output" and sv.get("initial", "calculated") in ("calculated", "approx")
    ]
    if calculated_outputs:
        structure = root.find("ModelStructure")
        initial = SubElement(structure, "InitialUnknowns")
        for index in calculated_outputs:
            SubElement(initial, "Unknown", {"index": str(index)})
    return root
