"""The native FMI 3.0 target: one FMU with co-simulation and model exchange.

The shared native pipeline (``flexfmu.targets.native``) with ``fmi3_glue.c``,
the FMI 3 headers, the FMI 3.0 model description and the build description
(``flexfmu.targets.fmi3_xml``); binaries go in ``binaries/x86_64-linux`` and
``binaries/x86_64-windows``. The per-model code and the instance code are the
same as FMI 2.0's.
"""

from __future__ import annotations

from flexfmu.targets.export import ExportReport
from flexfmu.targets.fmi3_xml import build_description_xml, model_description_xml
from flexfmu.targets.native import FmiVersion, export_native

FMI3 = FmiVersion("3", "fmi3", "fmi3_glue.c", ("fmi3Functions.h", "fmi3FunctionTypes.h", "fmi3PlatformTypes.h"),
                  model_description_xml, lambda info: {"sources/buildDescription.xml": build_description_xml(info)})


def export(job) -> ExportReport:
    """Write ``job.output`` (.fmu, FMI 3.0) for ``job.model`` with ``job.settings``; ``job`` is a
    :class:`flexfmu.targets.ExportJob`. Returns the ExportReport; raises ExportError for unusable
    settings or output and BuildError if compiling fails."""
    return export_native(job, FMI3)
