"""Campaigns: families of independent runs on dask.distributed (a local cluster or a scheduler), built
files shipped once, every finished point journalled so that a rerun resumes."""
