"""Per-query overhead of ``GraphEngine.execute`` over a raw ``falkordb`` ``ro_query`` call.

Run: ``python benchmarks/bench_execute.py [--nodes 10000] [--repeats 200]``.

A generated social graph (``--nodes`` people in 50 cities, about three KNOWS
relationships each) is loaded into an embedded FalkorDB in a temporary
directory. For each representative query, the raw client call
(``Graph.ro_query(q, timeout=...)``, which returns driver objects) and
``FalkorDBEngine.execute(q)`` (tokenizer gate, schema-version check, row cap,
conversion to plain values) are timed alternately, ``--repeats`` times each
after a warm-up; the table shows medians and their ratio. Goal: ratio <= 1.2.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from cypherturn.graph import (
    EmbeddedFalkorDB,
    FalkorDBEngine,
    GraphData,
    NodeRecord,
    RelationshipRecord,
)

QUERIES = {
    "count filter": "MATCH (p:Person) WHERE p.age > 40 RETURN count(p)",
    "100 rows, scalars": "MATCH (p:Person) RETURN p.name, p.age ORDER BY p.age DESC LIMIT 100",
    "top-k by degree": (
        "MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN p.name, count(f) AS n "
        "ORDER BY n DESC LIMIT 25"
    ),
    "group by city": "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN c.name, count(*) AS n",
    "1000 nodes": "MATCH (p:Person) RETURN p LIMIT 1000",
    "200 paths": "MATCH path = (a:Person)-[:KNOWS]->(b:Person) RETURN path LIMIT 200",
}


def build(nodes: int, seed: int = 7) -> GraphData:
    """A deterministic social graph of ``nodes`` people, 50 cities and ~3 KNOWS per person."""
    rng = random.Random(seed)
    cities = [NodeRecord(f"c{i}", ("City",), {"name": f"City {i}"}) for i in range(50)]
    people = [
        NodeRecord(
            i,
            ("Person",),
            {"name": f"Person {i}", "age": rng.randint(18, 90), "score": rng.random()},
        )
        for i in range(nodes)
    ]
    rels = [RelationshipRecord(i, f"c{rng.randrange(50)}", "LIVES_IN") for i in range(nodes)]
    rels += [
        RelationshipRecord(i, rng.randrange(nodes), "KNOWS", {"since": rng.randint(1990, 2024)})
        for i in range(nodes)
        for _ in range(3)
    ]
    return GraphData(name="bench_execute", nodes=cities + people, relationships=rels)


def _median_ms(fn: Callable[[], Any], samples: list[float]) -> None:
    started = time.perf_counter()
    fn()
    samples.append((time.perf_counter() - started) * 1000.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000, help="people in the generated graph")
    parser.add_argument("--repeats", type=int, default=200, help="timed calls per query and side")
    args = parser.parse_args()

    console = Console()
    with (
        tempfile.TemporaryDirectory(prefix="bench-execute-") as tmp,
        EmbeddedFalkorDB(tmp) as server,
    ):
        engine = FalkorDBEngine(server.client(), "bench_execute", spec="bench")
        stats = engine.load(build(args.nodes), replace=True)
        console.print(
            f"graph: {stats.nodes} nodes, {stats.relationships} relationships "
            f"(loaded in {stats.seconds:.2f} s)"
        )
        raw = server.client().select_graph("bench_execute")
        timeout_ms = round(engine.timeout_s * 1000)

        table = Table(title=f"execute() vs raw ro_query, median of {args.repeats} calls")
        for column in ("query", "rows", "raw ms", "execute ms", "overhead us", "ratio"):
            table.add_column(column, justify="left" if column == "query" else "right")
        ratios = []
        for label, query in QUERIES.items():
            for _ in range(10):
                raw.ro_query(query, timeout=timeout_ms)
                engine.execute(query)
            raw_ms: list[float] = []
            ours_ms: list[float] = []
            for _ in range(args.repeats):
                _median_ms(lambda q=query: raw.ro_query(q, timeout=timeout_ms), raw_ms)
                _median_ms(lambda q=query: engine.execute(q), ours_ms)
            raw_median, ours_median = statistics.median(raw_ms), statistics.median(ours_ms)
            ratio = ours_median / raw_median
            ratios.append(ratio)
            rows = engine.execute(query).row_count
            table.add_row(
                label,
                str(rows),
                f"{raw_median:.3f}",
                f"{ours_median:.3f}",
                f"{(ours_median - raw_median) * 1000:.0f}",
                f"[{'green' if ratio <= 1.2 else 'red'}]{ratio:.2f}x[/]",
            )
        console.print(table)
        console.print(
            f"geometric mean ratio: {statistics.geometric_mean(ratios):.2f}x (goal <= 1.2x)"
        )
        engine.drop()
        engine.close()


if __name__ == "__main__":
    main()
