"""The native FMI 2.0 target: one FMU with co-simulation and model exchange.

The shared native pipeline (``flexfmu.targets.native``) with ``fmi2_glue.c``,
the FMI 2 headers and the FMI 2.0 model description
(``flexfmu.targets.fmi2_xml``); binaries go in ``binaries/linux64`` and
``binaries/win64``.
"""

from __future__ import annotations

from flexfmu.targets.export import ExportReport
from flexfmu.targets.fmi2_xml import model_description_xml
from flexfmu.targets.native import FmiVersion, export_native

FMI2 = FmiVersion("2", "fmi2", "fmi2_glue.c", ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h"),
                  model_description_xml, lambda info: {})


def export(job) -> ExportReport:
    """Write ``job.output`` (.fmu) for ``job.model`` with ``job.settings``; ``job`` is a
    :class:`flexfmu.targets.ExportJob`. Returns the ExportReport; raises ExportError for unusable
    settings or output and BuildError if compiling fails."""
    return export_native(job, FMI2)
