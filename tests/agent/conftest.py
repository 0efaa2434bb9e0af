"""Fixtures of the agent tests: the heroes graph on the real engine (tests/agent/protocol_world.py)."""

from __future__ import annotations

from protocol_world import heroes, session

__all__ = ["heroes", "session"]
