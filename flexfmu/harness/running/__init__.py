"""Running: FMUs through FMPy as a plant is run, the reference simulation of the Model's graph, labelled
results, the content-hashed cache of what is built, and progress on long runs."""
