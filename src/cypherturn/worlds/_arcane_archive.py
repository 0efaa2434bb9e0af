"""Arcane Archive: a linear chain with a REFERENCES self-loop on tomes (CypherTurn appendix D.1).

Topology. The labels form a chain — a Scriptorium is AFFILIATED_WITH a
Sanctum, a Scholar WORKS_IN a Scriptorium and INSCRIBED tomes, and a Tome is
PRESENTED_AT a Conclave (scriptoria are also SPONSORED_BY endowments). Tomes
cite older tomes (``REFERENCES``, a self-loop on the label), preferring tomes
that are already much cited, so citation chains run many hops deep and
``[:REFERENCES*]`` queries are meaningful. Each tome's ``citation_count`` is
exactly its number of incoming REFERENCES.
"""

from __future__ import annotations

import datetime as dt
import random

from cypherturn.graph import GraphData
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["ArcaneArchive"]

# Declarations and vocabulary: data/arcane_archive.yaml; the topology rules are the code below.
_DATA = load_world_data("arcane_archive")
SPEC = _DATA.spec

_RANKS = ("Novice", "Adept", "Magister", "Archmagister")
_RANK_LEVEL = {"Novice": (1, 3), "Adept": (3, 5), "Magister": (5, 8), "Archmagister": (8, 10)}
_CHAIN_SEED = 6  # the first tomes cite their predecessor, so a chain of this length always exists


class ArcaneArchive(SyntheticWorld):
    """The Arcane Archive world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build the institution chain, plan the citation network, then the tomes and their edges."""
        b = self.builder(rng, source, scale)

        n_sanctums = b.count("Sanctum")
        order = list(range(1, n_sanctums + 1))
        rng.shuffle(order)
        sanctums = [b.node("Sanctum", prestige_rank=rank) for rank in order]
        scriptoria = []
        for sanctum in spread(rng, sanctums, b.count("Scriptorium")):
            established = b.get(sanctum, "founding_year") + rng.randint(20, 400)
            scriptorium = b.node("Scriptorium", established_year=established)
            b.rel("AFFILIATED_WITH", scriptorium, sanctum, since_year=established)
            scriptoria.append(scriptorium)
        for scriptorium, endowment in zip(
            spread(rng, scriptoria, b.count("Endowment")),
            (b.node("Endowment") for _ in range(b.count("Endowment"))),
            strict=True,
        ):
            b.rel(
                "SPONSORED_BY",
                scriptorium,
                endowment,
                allocated_gold=round(b.get(endowment, "gold_pieces") * rng.uniform(0.1, 0.6)),
            )
        scholars = []
        for scriptorium in spread(rng, scriptoria, b.count("Scholar")):
            rank = rng.choices(_RANKS, weights=(0.35, 0.35, 0.22, 0.08))[0]
            scholar = b.node("Scholar", rank=rank, arcane_level=rng.randint(*_RANK_LEVEL[rank]))
            b.rel(
                "WORKS_IN",
                scholar,
                scriptorium,
                since_year=max(
                    b.get(scriptorium, "established_year"), b.get(scholar, "ordained_on").year
                )
                + rng.randint(0, 6),
            )
            scholars.append(scholar)
        self._tomes(b, rng, b.count("Tome"), b.count("Conclave"), scholars)
        return b.finish(SPEC.info.name)

    @staticmethod
    def _tomes(
        b: GraphBuilder, rng: random.Random, n: int, n_conclaves: int, scholars: list[int]
    ) -> None:
        # Plan citations first: tome i cites only tomes j < i (older), preferring much-cited ones.
        cites: list[list[int]] = [[] for _ in range(n)]
        cited = [0] * n
        for i in range(1, n):
            if i < _CHAIN_SEED:
                targets = [i - 1]
            else:
                k = rng.choice((0, 1, 1, 2, 2, 2, 3, 4))
                weights = [c + 1.0 for c in cited[:i]]
                targets = list(dict.fromkeys(rng.choices(range(i), weights=weights, k=k)))
            for j in targets:
                cites[i].append(j)
                cited[j] += 1
        years = sorted(rng.randint(900, 1345) for _ in range(n))
        tomes = [
            b.node("Tome", transcription_year=years[i], citation_count=cited[i]) for i in range(n)
        ]
        for i, targets in enumerate(cites):
            for j in targets:
                b.rel("REFERENCES", tomes[i], tomes[j])
        writers = spread(rng, scholars, max(n, round(n * 1.4)))
        authorship: dict[int, list[int]] = {}
        for tome, scholar in zip(spread(rng, tomes, len(writers)), writers, strict=True):
            if scholar not in authorship.setdefault(tome, []):
                authorship[tome].append(scholar)
        for tome in tomes:
            for order, scholar in enumerate(authorship.get(tome, []), start=1):
                b.rel(
                    "INSCRIBED",
                    scholar,
                    tome,
                    contribution_order=order,
                    hours_spent=round(rng.lognormvariate(5.0, 0.6), 1),
                )
        conclaves = []
        for _ in range(n_conclaves):
            conclaves.append(
                b.node(
                    "Conclave",
                    convened_on=dt.date(
                        rng.randint(1250, 1345), rng.randint(1, 12), rng.randint(1, 28)
                    ),
                )
            )
        for tome in tomes:
            if rng.random() < 0.5:
                conclave = conclaves[rng.randrange(len(conclaves))]
                year = max(b.get(tome, "transcription_year"), b.get(conclave, "convened_on").year)
                b.rel("PRESENTED_AT", tome, conclave, year=year)
