"""The table of phenomena: every phenomenon has a plan."""

from __future__ import annotations

from cypherturn.sessions import Phenomenon
from cypherturn.sessions._plans import PLANS


def test_every_phenomenon_has_a_plan() -> None:
    assert set(PLANS) == set(Phenomenon)
