"""Ocean Kingdom: diamond convergence with duplicate paths (CypherTurn appendix D.1).

Topology. Kingdoms GOVERN cities; the city is the central entity and fans out
to three sub-graphs: its residents (Citizen RESIDENT_OF City), the creatures it
is INHABITED_BY (which GUARD artifacts), and the treasures STORED_IN it. The
sub-graphs partly reconverge: citizens TAME creatures (most often ones living
in their own city) and DISCOVER treasures (often ones stored in their own
city). So ``(City)-[:INHABITED_BY]->(Creature)`` and
``(City)<-[:RESIDENT_OF]-(Citizen)-[:TAMES]->(Creature)`` reach the same
creature twice, and a query that follows both without ``DISTINCT`` counts
duplicates.
"""

from __future__ import annotations

import random

from cypherturn.graph import GraphData
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    beta_float,
    lognormal_int,
    prefer,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["OceanKingdom"]

# Declarations and vocabulary: data/ocean_kingdom.yaml; the topology rules are the code below.
_DATA = load_world_data("ocean_kingdom")
SPEC = _DATA.spec

_SIZES = ("tiny", "small", "medium", "large", "colossal")
_TEMPERS = ("docile", "skittish", "territorial", "aggressive")


class OceanKingdom(SyntheticWorld):
    """The Ocean Kingdom world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build kingdoms and cities, then the three sub-graphs and their reconverging edges."""
        b = self.builder(rng, source, scale)

        kingdoms = [b.node("Kingdom") for _ in range(b.count("Kingdom"))]
        cities = []
        for kingdom in spread(rng, kingdoms, b.count("City")):
            city = b.node("City")
            b.rel(
                "GOVERNS",
                kingdom,
                city,
                since_year=rng.randint(700, 1000),
                tax_rate=beta_float(2, 7, 0.01, 0.3)(rng),
            )
            cities.append(city)

        creatures_of = self._creatures(b, rng, b.count("Creature"), b.count("Artifact"), cities)
        weights = [float(b.get(c, "population")) for c in cities]
        citizens = []
        home: dict[int, int] = {}
        for city in spread(rng, cities, b.count("Citizen"), weights):
            citizen = b.node("Citizen")
            b.rel(
                "RESIDENT_OF",
                citizen,
                city,
                since_year=1021 - rng.randint(0, b.get(citizen, "age")),
            )
            citizens.append(citizen)
            home[citizen] = city

        all_creatures = [c for cs in creatures_of.values() for c in cs]
        local_tamed = False
        for citizen in citizens:
            if rng.random() >= 0.6:
                continue
            local = creatures_of.get(home[citizen], [])
            if local and (rng.random() < 0.7 or not local_tamed):
                creature = local[rng.randrange(len(local))]
                local_tamed = True
            else:
                creature = all_creatures[rng.randrange(len(all_creatures))]
            b.rel(
                "TAMES",
                citizen,
                creature,
                bond_strength=round(rng.betavariate(3, 2), 2),
                since_year=rng.randint(990, 1021),
            )

        self._treasures(b, rng, b.count("Treasure"), cities, citizens, home)
        return b.finish(SPEC.info.name)

    @staticmethod
    def _creatures(
        b: GraphBuilder, rng: random.Random, n: int, n_artifacts: int, cities: list[int]
    ) -> dict[int, list[int]]:
        creatures_of: dict[int, list[int]] = {}
        creatures = []
        for index in range(n):
            size = rng.choices(_SIZES, weights=(0.15, 0.3, 0.3, 0.18, 0.07))[0]
            temper = rng.choices(_TEMPERS, weights=(0.35, 0.25, 0.25, 0.15))[0]
            danger = min(
                10, max(1, _SIZES.index(size) * 2 + _TEMPERS.index(temper) + rng.randint(-1, 1))
            )
            creature = b.node("Creature", size=size, temperament=temper, danger_level=danger)
            creatures.append(creature)
            # The first creatures cover every city; each creature lives in one to three cities.
            first = cities[index] if index < len(cities) else cities[rng.randrange(len(cities))]
            homes = [first, *rng.sample(cities, k=min(len(cities), rng.choice((0, 0, 1, 1, 2))))]
            for city in dict.fromkeys(homes):
                b.rel(
                    "INHABITED_BY", city, creature, population_estimate=lognormal_int(40, 1.1)(rng)
                )
                creatures_of.setdefault(city, []).append(creature)
        artifacts = [b.node("Artifact") for _ in range(n_artifacts)]
        guardians = rng.sample(creatures, k=min(len(creatures), round(len(artifacts) * 1.5)))
        for creature, artifact in zip(
            guardians, spread(rng, artifacts, len(guardians)), strict=True
        ):
            b.rel("GUARDS", creature, artifact, since_year=rng.randint(400, 1020))
        return creatures_of

    @staticmethod
    def _treasures(
        b: GraphBuilder,
        rng: random.Random,
        n: int,
        cities: list[int],
        citizens: list[int],
        home: dict[int, int],
    ) -> None:
        residents: dict[int, list[int]] = {}
        for citizen in citizens:
            residents.setdefault(home[citizen], []).append(citizen)
        for city in spread(rng, cities, n):
            treasure = b.node("Treasure")
            b.rel("STORED_IN", treasure, city, vault_level=rng.randint(1, 5))
            if rng.random() < 0.2:
                continue  # discoverer lost to history
            local = residents.get(city, [])
            finder = prefer(rng, local, citizens, 0.6)
            b.rel(
                "DISCOVERED",
                finder,
                treasure,
                year=rng.randint(900, 1021),
                depth_meters=lognormal_int(600, 0.8, low=5)(rng),
            )
