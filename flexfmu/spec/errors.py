"""The one exception an invalid arm specification raises.

Validation collects every problem in a specification before it raises, so
the user can fix a file in one pass instead of one error per run. The
exception therefore carries a list of problems, not a single message.
"""

from __future__ import annotations

from flexfmu.errors import FlexfmuError


class SpecError(FlexfmuError, ValueError):
    """An arm specification is invalid.

    Parameters
    ----------
    problems : list of str
        One human-readable sentence per problem, each naming the field path
        and the offending value, e.g. ``"link[2].length must be > 0, got
        -0.4"``.
    source : str
        Where the specification came from: a file path, or ``"<dict>"`` for
        a specification built in code.

    Attributes
    ----------
    problems : list of str
        The problems, in the order they were found.
    source : str
        The ``source`` given above.

    Notes
    -----
    The message is a header line followed by one indented line per problem::

        arm.toml: 2 problems in the arm specification:
          - link[1].length must be > 0, got -0.4
          - payload.mass must be >= 0, got -1.0

    It derives from :class:`ValueError` so that code catching bad input in
    general also catches a bad specification.
    """

    def __init__(self, problems: list[str], source: str = "<dict>") -> None:
        self.problems = list(problems)
        self.source = str(source)
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        lines = [f"{self.source}: {count} {noun} in the arm specification:"]
        lines += [f"  - {problem}" for problem in self.problems]
        super().__init__("\n".join(lines))

    def __reduce__(self):
        """Pickle by the constructor arguments (the message is derived)."""
        return (type(self), (self.problems, self.source))
