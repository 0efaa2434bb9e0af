"""Ancient Empire: a directed-cycle world with dense numeric edge properties (CypherTurn appendix D.1).

Topology. Empires CONTROL provinces, provinces HAVE cities, cities RAISE
legions, and legions are SWORN_TO an empire — most to the one that controls the
city they were raised in, so ``(Empire)->(Province)->(City)->(Legion)->(Empire)``
closes a directed cycle of four hops; a fifth of the legions swear to a rival
empire, so following the cycle can also lead to another empire. Citizens live
in cities and command legions, legions are stationed in provinces (not always
their home province), provinces extract resources and empires build monuments
in their cities. Eight of the ten relationship types carry numeric properties.
"""

from __future__ import annotations

import datetime as dt
import random

from cypherturn.graph import GraphData
from cypherturn.worlds._names import pick
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    lognormal_int,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["AncientEmpire"]

# Declarations and vocabulary: data/ancient_empire.yaml; the topology rules are the code below.
_DATA = load_world_data("ancient_empire")
SPEC = _DATA.spec
_RESOURCE_KINDS = _DATA.groups("resource_kinds")
_MONUMENT_KINDS = _DATA.words("monument_kinds")


class AncientEmpire(SyntheticWorld):
    """The Ancient Empire world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build empires, their provinces and cities, legions, citizens, resources and monuments."""
        b = self.builder(rng, source, scale)

        empires = [b.node("Empire") for _ in range(b.count("Empire"))]
        power = [rng.paretovariate(1.3) for _ in empires]

        provinces: list[int] = []
        owner: dict[int, int] = {}
        for empire in spread(rng, empires, b.count("Province"), power):
            population = lognormal_int(180_000, 0.7, low=8_000, step=100)(rng)
            since = b.get(empire, "founding_year") + rng.randint(0, 220)
            province = b.node(
                "Province",
                population=population,
                prosperity=_prosperity(population),
                annexed_on=dt.date(since, rng.randint(1, 12), rng.randint(1, 28)),
            )
            tribute = round(population * b.get(province, "tax_rate") * rng.uniform(0.02, 0.06))
            b.rel("CONTROLS", empire, province, tribute=tribute, since_year=since)
            provinces.append(province)
            owner[province] = empire

        cities: list[int] = []
        home: dict[int, int] = {}
        capitals: set[int] = set()
        for province in spread(rng, provinces, b.count("City")):
            city = b.node("City")
            is_capital = province not in capitals
            capitals.add(province)
            b.rel("HAS_CITY", province, city, is_capital=is_capital)
            cities.append(city)
            home[city] = province

        citizens = [b.node("Citizen") for _ in range(b.count("Citizen"))]
        city_weight = [float(b.get(c, "population")) for c in cities]
        for citizen, city in zip(
            citizens, spread(rng, cities, len(citizens), city_weight), strict=True
        ):
            born = b.get(citizen, "birth_year")
            b.rel("LIVES_IN", citizen, city, since_year=born + rng.randint(0, 40))

        self._legions(b, rng, b.count("Legion"), cities, home, owner, empires, provinces, citizens)
        self._resources(b, rng, b.count("Resource"), provinces)
        self._monuments(b, rng, b.count("Monument"), empires, power, cities, home, owner)
        return b.finish(SPEC.info.name)

    @staticmethod
    def _legions(
        b: GraphBuilder,
        rng: random.Random,
        n: int,
        cities: list[int],
        home: dict[int, int],
        owner: dict[int, int],
        empires: list[int],
        provinces: list[int],
        citizens: list[int],
    ) -> None:
        by_empire: dict[int, list[int]] = {}
        for province in provinces:
            by_empire.setdefault(owner[province], []).append(province)
        # Commanders are drawn from the upper classes first, as the legions' officers were.
        ranked = sorted(
            citizens,
            key=lambda c: (
                b.get(c, "social_class") not in ("patrician", "equestrian"),
                rng.random(),
            ),
        )
        for index in range(n):
            legion = b.node("Legion")
            city = cities[rng.randrange(len(cities))]
            year = rng.randint(1180, 1245)
            b.rel(
                "RAISES",
                city,
                legion,
                levy_size=round(b.get(legion, "strength") * rng.uniform(0.2, 0.6)),
                year=year,
            )
            native = owner[home[city]]
            # The first legion always closes the cycle, so every seed has one.
            loyal = index == 0 or rng.random() < 0.8
            sworn = native if loyal else empires[rng.randrange(len(empires))]
            b.rel(
                "SWORN_TO",
                legion,
                sworn,
                oath_year=year + rng.randint(0, 3),
                loyalty=round(rng.betavariate(8 if sworn == native else 3, 3), 2),
            )
            theatre = by_empire.get(sworn, provinces)
            station = (
                theatre[rng.randrange(len(theatre))]
                if rng.random() < 0.7
                else provinces[rng.randrange(len(provinces))]
            )
            b.rel(
                "STATIONED_IN",
                legion,
                station,
                since_year=year + rng.randint(0, 12),
                garrison=round(b.get(legion, "strength") * rng.uniform(0.3, 1.0)),
            )
            commander = ranked[index % len(ranked)]
            b.rel(
                "COMMANDS",
                commander,
                legion,
                since_year=max(year, b.get(commander, "birth_year") + 25) + rng.randint(0, 5),
            )

    @staticmethod
    def _resources(b: GraphBuilder, rng: random.Random, n: int, provinces: list[int]) -> None:
        categories = list(_RESOURCE_KINDS)
        resources = []
        for _ in range(n):
            category = categories[rng.randrange(len(categories))]
            goods = pick(rng, _RESOURCE_KINDS[category])
            name = b.fresh("Resource", _DATA.text("resource", goods=goods))
            resources.append(b.node("Resource", name=name, category=category))
        covered = spread(rng, resources, len(provinces))
        for province, first in zip(provinces, covered, strict=False):
            extra = rng.sample(resources, k=min(len(resources), rng.choice((0, 0, 1, 1, 2))))
            for resource in dict.fromkeys([first, *extra]):
                b.rel(
                    "EXTRACTS",
                    province,
                    resource,
                    annual_yield=lognormal_int(800, 0.9)(rng),
                    tax_share=round(rng.betavariate(2, 5), 2),
                )

    @staticmethod
    def _monuments(
        b: GraphBuilder,
        rng: random.Random,
        n: int,
        empires: list[int],
        power: list[float],
        cities: list[int],
        home: dict[int, int],
        owner: dict[int, int],
    ) -> None:
        cities_of: dict[int, list[int]] = {}
        for city in cities:
            cities_of.setdefault(owner[home[city]], []).append(city)
        for empire in rng.choices(empires, weights=power, k=n):
            kind = pick(rng, _MONUMENT_KINDS)
            built = b.get(empire, "founding_year") + rng.randint(10, 240)
            name = b.fresh("Monument", _DATA.text("monument", kind=kind))
            monument = b.node("Monument", name=name, monument_type=kind, built_year=built)
            b.rel("BUILT", empire, monument, cost_talents=lognormal_int(300, 1.0)(rng))
            choices = cities_of.get(empire) or cities
            b.rel("LOCATED_IN", monument, choices[rng.randrange(len(choices))])


def _prosperity(population: int) -> str:
    if population < 90_000:
        return "poor"
    if population < 180_000:
        return "modest"
    if population < 360_000:
        return "wealthy"
    return "opulent"
