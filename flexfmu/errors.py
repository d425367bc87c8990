"""Errors that flexfmu explains to the user instead of crashing.

Every problem caused by what the user asked for or gave (a file that does
not exist, an invalid arm or scenario, an export setting that cannot work)
raises a subclass of :class:`FlexfmuError` whose message names the file,
field or option at fault. The command line prints that message and exits
with status 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class FlexfmuError(Exception):
    """Base class of the errors a user can fix by changing their input."""


class InputError(FlexfmuError, ValueError):
    """A file or name that cannot be used: missing, a folder, unreadable,
    unwritable, or not one of the known examples."""


class ExportError(FlexfmuError, ValueError):
    """Export settings or inputs that cannot make a valid artefact (``flexfmu.targets``)."""
