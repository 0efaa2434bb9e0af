"""Stellar Colony: a tree hierarchy plus lateral ALLIED_WITH edges between peers (CypherTurn appendix D.1).

Topology. Colonies form a three-tier settlement tree (a tier-1 colony SETTLED
tier-2 colonies, which SETTLED tier-3 outposts); every colony HAS_CITY cities
and every city is INHABITED_BY its citizens, so Colony→City→Citizen is a tree
too. Factions are HEADQUARTERED_IN a colony and take its tier. ALLIED_WITH
edges join *peer* factions only — factions whose headquarters sit on the same
tier of the settlement tree — which breaks the assumption that every traversal
is hierarchical. Colonies PRODUCE resources that their citizens HARVEST.
"""

from __future__ import annotations

import random

from cypherturn.graph import GraphData
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    lognormal_int,
    prefer,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["StellarColony"]

# Declarations and vocabulary: data/stellar_colony.yaml; the topology rules are the code below.
_DATA = load_world_data("stellar_colony")
SPEC = _DATA.spec

_TIER_SHARE = (0.1, 0.3)  # tiers 1 and 2; tier 3 takes the rest


class StellarColony(SyntheticWorld):
    """The Stellar Colony world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build the settlement tree, cities and citizens, resources, factions and alliances."""
        b = self.builder(rng, source, scale)

        colonies = self._settle(b, rng, b.count("Colony"))
        colony_of: dict[int, int] = {}
        cities = []
        for colony in spread(rng, colonies, b.count("City")):
            city = b.node("City")
            b.rel("HAS_CITY", colony, city)
            cities.append(city)
            colony_of[city] = colony
        citizens = []
        home_colony: dict[int, int] = {}
        for city in spread(
            rng, cities, b.count("Citizen"), [float(b.get(c, "population")) for c in cities]
        ):
            citizen = b.node("Citizen")
            b.rel(
                "INHABITED_BY",
                city,
                citizen,
                since_year=rng.randint(b.get(citizen, "birth_year"), 2350),
            )
            citizens.append(citizen)
            home_colony[citizen] = colony_of[city]

        produced = self._resources(b, rng, b.count("Resource"), colonies)
        for citizen in citizens:
            local = produced.get(home_colony[citizen], [])
            if local and rng.random() < 0.3:
                b.rel(
                    "HARVESTS",
                    citizen,
                    local[rng.randrange(len(local))],
                    shifts_per_week=rng.randint(1, 6),
                )
        self._factions(b, rng, b.count("Faction"), colonies, citizens, home_colony)
        return b.finish(SPEC.info.name)

    @staticmethod
    def _settle(b: GraphBuilder, rng: random.Random, n: int) -> list[int]:
        n1 = max(2, round(n * _TIER_SHARE[0]))
        n2 = max(2, round(n * _TIER_SHARE[1]))
        sizes = (n1, n2, n - n1 - n2)
        colonies: list[int] = []
        previous: list[int] = []
        for tier, size in enumerate(sizes, start=1):
            parents = spread(rng, previous, size) if previous else [-1] * size
            current = []
            for parent in parents:
                founded = (
                    rng.randint(2150, 2200)
                    if parent < 0
                    else b.get(parent, "founded_year") + rng.randint(12, 60)
                )
                population = lognormal_int(900_000 // 4 ** (tier - 1), 0.7, low=200, step=10)(rng)
                colony = b.node("Colony", tier=tier, founded_year=founded, population=population)
                if parent >= 0:
                    b.rel("SETTLED", parent, colony, year=founded)
                current.append(colony)
            colonies.extend(current)
            previous = current
        return colonies

    @staticmethod
    def _resources(
        b: GraphBuilder, rng: random.Random, n: int, colonies: list[int]
    ) -> dict[int, list[int]]:
        resources = [b.node("Resource") for _ in range(n)]
        produced: dict[int, list[int]] = {}
        links = spread(rng, resources, max(len(resources), round(len(colonies) * 2.4)))
        for resource, colony in zip(links, spread(rng, colonies, len(links)), strict=True):
            if resource in produced.setdefault(colony, []):
                continue
            produced[colony].append(resource)
            b.rel(
                "PRODUCES",
                colony,
                resource,
                annual_output=lognormal_int(12_000, 1.0, step=10)(rng),
                efficiency=round(rng.betavariate(5, 2), 2),
            )
        return produced

    @staticmethod
    def _factions(
        b: GraphBuilder,
        rng: random.Random,
        n: int,
        colonies: list[int],
        citizens: list[int],
        home_colony: dict[int, int],
    ) -> None:
        by_tier: dict[int, list[int]] = {}
        factions = []
        hosted: dict[int, list[int]] = {}
        for colony in spread(rng, colonies, n):
            tier = b.get(colony, "tier")
            founded = min(2345, b.get(colony, "founded_year") + rng.randint(0, 120))
            faction = b.node("Faction", tier=tier, founded_year=founded)
            b.rel("HEADQUARTERED_IN", faction, colony)
            by_tier.setdefault(tier, []).append(faction)
            hosted.setdefault(colony, []).append(faction)
            factions.append(faction)
        allied: set[tuple[int, int]] = set()
        for tier in sorted(by_tier):
            peers = by_tier[tier]
            target = round(len(peers) * 0.8)
            for _ in range(target * 3):
                if len(peers) < 2 or sum(1 for a, _ in allied if a in peers) >= target:
                    break
                first, second = rng.sample(peers, 2)
                if (first, second) in allied or (second, first) in allied:
                    continue
                allied.add((first, second))
                since = max(b.get(first, "founded_year"), b.get(second, "founded_year"))
                b.rel(
                    "ALLIED_WITH",
                    first,
                    second,
                    since_year=min(2350, since + rng.randint(0, 40)),
                    strength=round(rng.betavariate(3, 2), 2),
                )
        for citizen in citizens:
            if rng.random() >= 0.85:
                continue
            local = hosted.get(home_colony[citizen], [])
            faction = prefer(rng, local, factions, 0.6)
            earliest = max(b.get(faction, "founded_year"), b.get(citizen, "birth_year") + 16)
            b.rel(
                "BELONGS_TO",
                citizen,
                faction,
                joined_year=min(2350, earliest + rng.randint(0, 10)),
                rank=rng.choices(("member", "officer", "leader"), weights=(0.8, 0.17, 0.03))[0],
            )
