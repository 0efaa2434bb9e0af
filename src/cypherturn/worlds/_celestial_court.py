"""Celestial Court: officials SERVES_UNDER officials at arbitrary depth (CypherTurn appendix D.1).

Topology. Each ministry is led by one sovereign official (HEADS); every other
official SERVES_UNDER exactly one superior, chosen among the officials already
appointed, so the chains of command have uneven, arbitrary depth (a random
recursive forest, up to nine ranks, with one chain of at least seven ranks by
construction). An official's ``rank`` is its depth (1 = sovereign) and its jade
salary falls with rank. Ministries OVERSEE bureaus, prefectures BELONG_TO
bureaus, bureaus ADMINISTER provinces, officials are STATIONED_IN prefectures and
ENTRUSTED_WITH decrees that ministries issue.
"""

from __future__ import annotations

import datetime as dt
import random

from cypherturn.graph import GraphData
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    lognormal_int,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["CelestialCourt"]

# Declarations and vocabulary: data/celestial_court.yaml; the topology rules are the code below.
_DATA = load_world_data("celestial_court")
SPEC = _DATA.spec
_TITLES = _DATA.words("titles")

_MAX_RANK = 9
_SPINE = 7  # ranks of the chain of command built first, so depth >= 6 hops for every seed
_PRESENT = 1350


class CelestialCourt(SyntheticWorld):
    """The Celestial Court world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build the administrative units, then the chains of command and the decrees."""
        b = self.builder(rng, source, scale)

        ministries = [b.node("Ministry") for _ in range(b.count("Ministry"))]
        bureaus = []
        for ministry in spread(rng, ministries, b.count("Bureau")):
            bureau = b.node("Bureau")
            b.rel("OVERSEES", ministry, bureau)
            bureaus.append(bureau)
        prefectures = []
        for index, bureau in enumerate(spread(rng, bureaus, b.count("Prefecture"))):
            prefecture = b.node("Prefecture", administrative_code=1001 + index)
            b.rel("BELONGS_TO", prefecture, bureau)
            prefectures.append(prefecture)
        for bureau in spread(rng, bureaus, b.count("Province")):
            province = b.node("Province")
            b.rel(
                "ADMINISTERS",
                bureau,
                province,
                appointment_year=rng.randint(1200, _PRESENT),
                annual_tribute=round(b.get(province, "tribute_gold") * rng.uniform(0.3, 0.9)),
            )
        officials = self._officials(b, rng, b.count("Official"), ministries, prefectures)
        self._decrees(b, rng, b.count("Decree"), ministries, officials)
        return b.finish(SPEC.info.name)

    @staticmethod
    def _officials(
        b: GraphBuilder, rng: random.Random, n: int, ministries: list[int], prefectures: list[int]
    ) -> list[int]:
        officials: list[int] = []
        station: dict[int, int] = {}

        def appoint(rank: int, superior: int | None) -> int:
            service = max(1, round(rng.lognormvariate(5.4 - 0.35 * rank, 0.5)))
            salary = round(9_000 * 0.64 ** (rank - 1) * rng.uniform(0.85, 1.15), -1)
            official = b.node(
                "Official",
                name=b.fresh("Official", _DATA.text("official", title=_TITLES[rank - 1])),
                rank=rank,
                jade_salary=int(salary),
                years_in_service=service,
            )
            since = _PRESENT - min(service, 600)
            if superior is not None:
                b.rel("SERVES_UNDER", official, superior, since_year=since)
                # Most subordinates work where their superior is stationed.
                place = station.get(superior)
                if place is None or rng.random() < 0.4:
                    place = prefectures[rng.randrange(len(prefectures))]
                b.rel("STATIONED_IN", official, place, since_year=since)
                station[official] = place
            officials.append(official)
            return official

        for ministry in ministries:
            sovereign = appoint(1, None)
            b.rel("HEADS", sovereign, ministry, since_year=_PRESENT - rng.randint(50, 600))
        superior = officials[0]
        for rank in range(2, _SPINE + 1):
            superior = appoint(rank, superior)
        while len(officials) < n:
            # A random recursive forest: any official below the lowest rank may take a subordinate.
            candidates = [o for o in officials if b.get(o, "rank") < _MAX_RANK]
            superior = candidates[rng.randrange(len(candidates))]
            appoint(b.get(superior, "rank") + 1, superior)
        return officials

    @staticmethod
    def _decrees(
        b: GraphBuilder, rng: random.Random, n: int, ministries: list[int], officials: list[int]
    ) -> None:
        for ministry in spread(rng, ministries, n):
            issued = dt.date(
                rng.randint(1250, _PRESENT - 1), rng.randint(1, 12), rng.randint(1, 28)
            )
            decree = b.node("Decree", issued_on=issued)
            b.rel("ISSUED_BY", decree, ministry)
            for position, official in enumerate(rng.sample(officials, k=rng.choice((1, 2, 2, 3)))):
                b.rel(
                    "ENTRUSTED_WITH",
                    official,
                    decree,
                    role=("lead" if position == 0 else rng.choice(("envoy", "auditor", "scribe"))),
                    days_allocated=lognormal_int(90, 0.7)(rng),
                )
