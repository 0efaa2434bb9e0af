"""Graph sources: public datasets (POLE, Healthcare) and synthetic worlds (CypherTurn §2.1, Fraud)."""

from cypherturn.worlds._base import World, WorldInfo
from cypherturn.worlds._registry import get_world, list_worlds, world_names

__all__ = ["World", "WorldInfo", "get_world", "list_worlds", "world_names"]
