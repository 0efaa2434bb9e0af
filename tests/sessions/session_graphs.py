"""Shared helpers of the session tests: the seven worlds loaded once each, sessions generated on them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, GraphData, GraphEngine, GraphSchema
from cypherturn.sessions import DEFAULT_WORLDS, Persona, Session, SessionGenerator
from cypherturn.worlds import get_world, load_world

WORLDS = list(DEFAULT_WORLDS)


@dataclass
class WorldGraphs:
    """Lazily loaded world graphs and generators, one per world for the whole test session."""

    server: EmbeddedFalkorDB
    engines: dict[str, FalkorDBEngine] = field(default_factory=dict)
    generators: dict[str, SessionGenerator] = field(default_factory=dict)
    samples: dict[str, list[Session]] = field(default_factory=dict)

    def new_engine(self, name: str) -> FalkorDBEngine:
        graph = f"{name}_{uuid.uuid4().hex[:8]}"
        engine = FalkorDBEngine(self.server.client(), graph, spec=f"embedded#{graph}")
        engine.ensure_graph()
        return engine

    def engine(self, world: str) -> FalkorDBEngine:
        if world not in self.engines:
            engine = self.new_engine(world)
            load_world(engine, get_world(world), replace=True)
            self.engines[world] = engine
        return self.engines[world]

    def provide(self, world: str) -> tuple[GraphEngine, GraphSchema]:
        return self.engine(world), get_world(world).declared_schema()

    def generator(self, world: str) -> SessionGenerator:
        if world not in self.generators:
            self.generators[world] = SessionGenerator(
                world, self.engine(world), get_world(world).declared_schema()
            )
        return self.generators[world]

    def sample(self, world: str, count: int = 12) -> list[Session]:
        """``count`` sessions of 10 turns, personas in turn, generated once per world."""
        if world not in self.samples:
            generator = SessionGenerator(
                world, self.engine(world), get_world(world).declared_schema()
            )
            personas = list(Persona)
            self.samples[world] = [
                generator.session(
                    session_id=f"{world}-t-{i:02d}",
                    persona=personas[i % len(personas)],
                    length=10,
                    seed=7,
                    key=f"{world}-t-{i:02d}",
                )
                for i in range(count)
            ]
        return self.samples[world]

    def load_copy(self, data: GraphData) -> FalkorDBEngine:
        engine = self.new_engine(f"copy_{data.name}")
        engine.load(data)
        self.engines[f"copy:{engine.graph}"] = engine
        return engine
