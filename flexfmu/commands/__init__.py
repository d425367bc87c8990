"""Subcommands of the ``flexfmu`` CLI, one module each."""
