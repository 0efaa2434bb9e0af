"""Fixtures: the heroes graph and session of tests/agent/protocol_world.py on the real engine."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "agent"))

from protocol_world import heroes, session

__all__ = ["heroes", "session"]
