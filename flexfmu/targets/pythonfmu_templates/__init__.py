"""Slave scripts of the Python-backed FMUs (see ``flexfmu.targets.pythonfmu``).

``flexfmu_plant.py`` and ``flexfmu_controller.py`` are copied into an FMU's
``resources/`` and imported there as top-level modules by PythonFMU's
binary; ``description.py`` stays in the package and is imported by them, so
the FMUs need an installed flexfmu (they need it for the dynamics anyway).
"""
