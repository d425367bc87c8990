"""The table of planners: how ``flexfmu plan`` finds a move for an arm, and the settings each one takes.

Each arm kind names its planner (``flexfmu.kinds``): serial arms plan
joint torques by direct collocation of the full flexible Model
(:mod:`flexfmu.control.planning`), a Delta robot plans the motor reference
of its pick-and-place (:mod:`flexfmu.control.delta_planning`). A row
declares the planner's settings as keys (:mod:`flexfmu.spec.keys`), which
its settings class checks before anything is planned; the check of the
result on the FMU is the harness's (``flexfmu.harness.workflows``).

Adding a planner: its module here in ``flexfmu/control`` with a settings
class that declares ``KEYS``, one row here, its check on the FMU in the
harness, and the row named by the kinds it serves.
"""

from __future__ import annotations

from dataclasses import dataclass

from flexfmu.control.delta_planning import PickPlaceSettings
from flexfmu.control.planning import PlanSettings
from flexfmu.spec.keys import Key, check_row


@dataclass(frozen=True)
class Planner:
    """One planner.

    Attributes
    ----------
    name : str
        How docs and messages name it.
    summary : str
        One line: what it plans and how.
    settings : type
        Its settings class: a frozen dataclass with ``KEYS`` (tuple of Key) and ``problems()``.
    """

    name: str
    summary: str
    settings: type

    def __post_init__(self):
        check_row("PLANNERS", self.name, getattr(self.settings, "KEYS", None), settings=self.settings,
                  problems=getattr(self.settings, "problems", None))

    @property
    def keys(self) -> tuple[Key, ...]:
        """The settings it takes, declared."""
        return self.settings.KEYS


COLLOCATION = Planner(
    "collocation", "joint torques for a point-to-point move that ends at rest: direct collocation of the full "
    "flexible Model, solved by IPOPT, checked against paper 004's quintic computed-torque move", PlanSettings)
PICK_AND_PLACE = Planner(
    "pick_and_place", "a Delta robot's motor reference for a pick-and-place scenario: its inverted U retimed and "
    "bent within a tolerance, Gauss-Newton on the flexible closed loop, checked against the scenario",
    PickPlaceSettings)

PLANNERS: dict[str, Planner] = {row.name: row for row in (COLLOCATION, PICK_AND_PLACE)}
