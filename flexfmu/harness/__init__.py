"""Harness: runs of FMUs and of the reference, their reports, campaigns, and the workflows built on them.

Rooms, each importing only the ones before it:

- ``running``: run an FMU as Simulink and VeriStand do (``runner``), run
  the Model's own graph as the reference (``reference``,
  ``compiled_reference``, its steps in ``reference_steps``), labelled results, the content-hashed cache of
  built files and FMUs, progress on long work;
- ``reports``: what a run says: pairwise comparisons, the validity
  envelope, a controls engineer's figures, plots, report files;
- ``campaigns``: many independent runs on Dask workers, journalled;
- ``reproductions``: every published or analytic number flexfmu can
  compute, one module per source;
- ``workflows``: what a command runs end to end: crosscheck, tune, plan
  and pick-and-place checked on the FMU, sweeps, reproduce.
"""
