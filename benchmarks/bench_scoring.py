"""Scoring throughput: EX + relaxed EX + PSJS over a replayed log of 5,927 turns.

Run: ``python benchmarks/bench_scoring.py [--turns 5927] [--workers 2] [--perturbed 0.2]``.

What the log is. CypherTurn's 721 sessions are not available here, so the log is
generated: the POLE dataset (61,521 nodes, 105,840 relationships, packaged with
cypherturn) is loaded into an embedded FalkorDB in a temporary directory, and
5,927 turns are grouped into 721 sessions of 8-9 turns. Each turn's gold query
is drawn from 12 templates (one-hop and two-hop traversals, variable-length
KNOWS paths, OPTIONAL MATCH, WITH ... WHERE pipelines, aggregations, ORDER BY
with LIMIT, DISTINCT, UNION) filled with values sampled from the graph (a
seeded RNG, so the log is the same on every run). The prediction is the gold
query itself for 1 - ``--perturbed`` of the turns; the rest are perturbed: a
renamed column (strict EX 0, relaxed 1), a different filter value (wrong rows),
a dropped LIMIT, a syntax error, or no prediction (budget cliff).

What is timed: ``Scorer.score`` on the whole log with a cold gold cache, i.e.
every distinct gold query executed (and checked against its unrewritten run)
plus every predicted query executed once, on ``--workers`` threads. Loading the
graph is timed apart. Printed: turns/s, engine executions per predicted query
(goal <= 1.05), fallback re-executions, gold executions, total seconds (goal <=
60 s on 2 cores), and EX / relaxed EX / PSJS means as a sanity check.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from statistics import fmean

from cypherturn.graph import GraphEngine, embedded_server, open_engine
from cypherturn.metrics import Scorer
from cypherturn.records import PredictionStatus, ProtocolName, ScoringSettings, TurnRecord
from cypherturn.worlds import get_world

SESSIONS = 721

# (template, parameter kind); {v} is filled with a quoted value of that kind.
TEMPLATES: list[tuple[str, str]] = [
    ("MATCH (p:Person {surname: {v}})-[:KNOWS]->(f:Person) RETURN f.name AS name, f.surname AS surname", "surname"),
    ("MATCH (c:Crime {type: {v}})-[:OCCURRED_AT]->(l:Location) RETURN l.postcode AS postcode, count(c) AS crimes "
     "ORDER BY crimes DESC, postcode LIMIT 10", "crime_type"),
    ("MATCH (p:Person {surname: {v}})-[:PARTY_TO]->(c:Crime) RETURN p.name AS name, c.type AS type", "surname"),
    ("MATCH (a:Area {areaCode: {v}})<-[:LOCATION_IN_AREA]-(l:Location) RETURN count(l) AS locations", "area"),
    ("MATCH (o:Officer {surname: {v}})<-[:INVESTIGATED_BY]-(c:Crime) RETURN c.type AS type, count(*) AS n", "officer"),
    ("MATCH (p:Person {surname: {v}})-[:CURRENT_ADDRESS]->(l:Location) OPTIONAL MATCH (l)<-[:OCCURRED_AT]-(c:Crime) "
     "RETURN p.name AS name, l.address AS address, count(c) AS crimes", "surname"),
    ("MATCH (p:Person)-[:KNOWS*1..2]->(q:Person {surname: {v}}) RETURN DISTINCT p.name AS name, p.surname AS surname",
     "surname"),
    ("MATCH (p:Person {surname: {v}})-[:HAS_PHONE]->(ph:Phone)<-[:CALLER]-(call:PhoneCall) "
     "WITH p, count(call) AS calls WHERE calls >= 1 RETURN p.name AS name, calls", "surname"),
    ("MATCH (p:Person {surname: {v}}) RETURN p.name AS name UNION MATCH (o:Officer {surname: {v}}) RETURN o.name AS name",
     "surname"),
    ("MATCH (c:Crime {last_outcome: {v}})-[:INVESTIGATED_BY]->(o:Officer) RETURN o.rank AS rank, count(*) AS n "
     "ORDER BY n DESC", "outcome"),
    ("MATCH (l:Location {postcode: {v}})<-[:OCCURRED_AT]-(c:Crime) RETURN c.type AS type, c.date AS date "
     "ORDER BY date, type", "postcode"),
    ("MATCH (p:Person {surname: {v}}) MATCH (p)-[:KNOWS]-(f)-[:PARTY_TO]->(c:Crime) "
     "RETURN DISTINCT f.name AS friend, c.type AS type", "surname"),
]  # fmt: skip


def _values(engine: GraphEngine) -> dict[str, list[str]]:
    queries = {
        "surname": "MATCH (p:Person) RETURN DISTINCT p.surname",
        "crime_type": "MATCH (c:Crime) WHERE c.type IS NOT NULL RETURN DISTINCT c.type",
        "area": "MATCH (a:Area) RETURN a.areaCode",
        "officer": "MATCH (o:Officer) RETURN o.surname LIMIT 400",
        "outcome": "MATCH (c:Crime) RETURN DISTINCT c.last_outcome",
        "postcode": "MATCH (l:Location)<-[:OCCURRED_AT]-(:Crime) RETURN DISTINCT l.postcode LIMIT 2000",
    }
    return {
        kind: sorted(str(r[0]) for r in engine.execute(q).rows if r[0] is not None)
        for kind, q in queries.items()
    }


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _perturb(
    gold: str, template: str, kind: str, values: list[str], rng: random.Random
) -> str | None:
    choice = rng.randrange(5)
    if choice == 0:
        return (
            gold.replace(" AS name", " AS who", 1)
            if " AS name" in gold
            else gold.replace(" AS ", " AS x_", 1)
        )
    if choice == 1:
        return template.replace("{v}", _quote(rng.choice(values)))
    if choice == 2 and " LIMIT " in gold:
        return gold.split(" LIMIT ")[0]
    if choice == 3:
        return gold.replace(")", "", 1)
    return None


def build_log(
    values: dict[str, list[str]], n_turns: int, perturbed: float, seed: int = 7
) -> list[TurnRecord]:
    """The replayed log: ``n_turns`` turns in 721 sessions, gold queries as predictions except a share."""
    rng = random.Random(seed)
    records = []
    per_session = [
        n_turns // SESSIONS + (1 if s < n_turns % SESSIONS else 0) for s in range(SESSIONS)
    ]
    for s, length in enumerate(per_session):
        for t in range(1, length + 1):
            template, kind = TEMPLATES[rng.randrange(len(TEMPLATES))]
            gold = template.replace("{v}", _quote(rng.choice(values[kind])))
            predicted: str | None = gold
            if rng.random() < perturbed:
                predicted = _perturb(gold, template, kind, values[kind], rng)
            records.append(
                TurnRecord(
                    run_id="bench",
                    model="replay",
                    protocol=ProtocolName.AGENTIC,
                    session_id=f"s{s:04d}",
                    turn=t,
                    graph="bench_scoring",
                    depends_on=t - 1 if t > 1 else None,
                    gold_cypher=gold,
                    predicted_cypher=predicted,
                    cliff=predicted is None,
                )
            )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=5_927)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--perturbed", type=float, default=0.2, help="share of perturbed predictions"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench_scoring_") as data_dir:
        started = time.perf_counter()
        engine = open_engine(f"embedded:{data_dir}", "bench_scoring")
        loaded = engine.load(get_world("pole").build(), replace=True)
        load_s = time.perf_counter() - started
        print(
            f"graph: POLE, {loaded.nodes:,} nodes, {loaded.relationships:,} relationships, loaded in {load_s:.1f} s"
        )
        try:
            records = build_log(_values(engine), args.turns, args.perturbed)
            scorer = Scorer({"bench_scoring": engine}, ScoringSettings(workers=args.workers))
            started = time.perf_counter()
            scores = scorer.score(records)
            seconds = time.perf_counter() - started
        finally:
            engine.close()
            embedded_server(data_dir).stop()

    ex = scorer.stats
    predicted = [s for s in scores if s.prediction_status is not PredictionStatus.NO_PREDICTION]
    failed = sum(s.prediction_status is PredictionStatus.FAILED for s in scores)
    psjs = [s.psjs for s in scores if s.psjs is not None]
    print(
        f"turns: {len(scores):,} in {SESSIONS} sessions; predicted queries: {ex.predicted_queries:,} "
        f"({failed} failed to execute); distinct gold queries: {ex.gold_queries:,}"
    )
    print(
        f"total: {seconds:.1f} s on {args.workers} worker(s)  ->  {len(scores) / seconds:,.0f} turns/s"
    )
    print(
        f"engine executions per predicted query: {ex.executions_per_prediction:.3f} "
        f"({ex.executions:,} executions, {ex.fallback_executions} fallback re-runs)"
    )
    print(
        f"gold executions: {ex.gold_executions:,} (each distinct gold run rewritten + once unrewritten as a check); "
        f"gold cache hits: {ex.gold_cache_hits:,}"
    )
    print(
        f"EX {fmean(s.ex for s in scores):.3f}  relaxed EX {fmean(s.ex_relaxed for s in scores):.3f}  "
        f"PSJS {fmean(psjs):.3f} over {len(psjs):,} turns  (predicted turns: {len(predicted):,})"
    )


if __name__ == "__main__":
    main()
