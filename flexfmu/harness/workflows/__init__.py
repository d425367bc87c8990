"""Workflows: what the commands run end to end, on the rooms below: crosscheck of an arm in its scenarios,
gains tuned and plans made then checked on the FMU, sweeps, and the report of every reproduced number."""
