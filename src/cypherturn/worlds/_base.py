"""What every graph source offers: public datasets (POLE, Healthcare) and synthetic worlds alike."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from cypherturn.graph import GraphData, GraphSchema

__all__ = ["World", "WorldInfo"]


class WorldInfo(BaseModel):
    """Catalogue entry of a world.

    Attributes:
        name: registry name used on the command line (``pole``, ``magic_academy``).
        title: display name.
        kind: ``dataset`` for public data shipped with cypherturn, ``synthetic`` for generators.
        description: one paragraph describing the domain and its topological challenge.
        source: provenance and attribution (repository, licence) or the generator's paper section.
        expected_nodes / expected_relationships: counts at the default scale, when fixed.
    """

    name: str
    title: str
    kind: Literal["dataset", "synthetic"]
    description: str
    source: str
    expected_nodes: int | None = None
    expected_relationships: int | None = None
    topology: str = Field(default="", description="The topological challenge (CypherTurn §2.1).")


class World(Protocol):
    """A buildable graph: ``build(seed, scale, path) -> GraphData``.

    Datasets ignore ``seed`` and ``scale`` and read ``path`` (default: the copy
    packaged with cypherturn); synthetic worlds ignore ``path`` and are
    deterministic in ``(seed, scale)``.
    """

    @property
    def info(self) -> WorldInfo:
        """The catalogue entry."""
        ...

    def declared_schema(self) -> GraphSchema:
        """The schema this world promises (checked against what is loaded)."""
        ...

    def build(self, *, seed: int = 0, scale: float = 1.0, path: Path | None = None) -> GraphData:
        """Produce the graph.

        Raises:
            DatasetError: files missing or malformed, counts off.
        """
        ...
