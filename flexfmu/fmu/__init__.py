"""FMU export: model description, per-model C data, build and packaging."""
