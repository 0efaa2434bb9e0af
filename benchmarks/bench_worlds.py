"""Build and load times of the generated worlds into the embedded FalkorDB.

Run: ``python benchmarks/bench_worlds.py [--repeats 3] [--fraud-scales 1 10 80]``.

Two tables (wall seconds, median of ``--repeats`` runs; Fraud scales above 1
are run once):

* the seven CypherTurn worlds at the default scale (seed 0): ``World.build()``
  and ``GraphEngine.load(data, replace=True)`` into a fresh graph, including
  index creation and the count read-back, plus the total of all seven (goal:
  at most 10 s together on 2 cores);
* Fraud at each ``--fraud-scales`` value: 1 is the default test scale
  (4,173 nodes), 10 ten times that, 80 the public graph's size (332,973 nodes,
  980,857 relationships).

The embedded server lives in a temporary directory, started before timing and
stopped at the end.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from rich.console import Console
from rich.table import Table

from cypherturn.graph import GraphEngine, embedded_server, open_engine
from cypherturn.worlds import get_world

SEVEN = (
    "ancient_empire",
    "magic_academy",
    "ocean_kingdom",
    "stellar_colony",
    "arcane_archive",
    "celestial_court",
    "merchant_harbor",
)


def timed(
    engine: GraphEngine, name: str, scale: float, repeats: int
) -> tuple[int, int, float, float]:
    """(nodes, relationships, median build s, median load s) of one world at one scale."""
    world = get_world(name)
    builds, loads = [], []
    nodes = relationships = 0
    for _ in range(repeats):
        started = time.perf_counter()
        data = world.build(scale=scale)
        builds.append(time.perf_counter() - started)
        started = time.perf_counter()
        engine.load(data, replace=True)
        nodes, relationships = engine.node_count(), engine.relationship_count()
        loads.append(time.perf_counter() - started)
        if (nodes, relationships) != (len(data.nodes), len(data.relationships)):
            raise SystemExit(f"{name}: read back {nodes}/{relationships} after loading")
    return nodes, relationships, statistics.median(builds), statistics.median(loads)


def table(title: str) -> Table:
    result = Table(title=title)
    for column in ("world", "scale", "nodes", "relationships", "build s", "load s", "total s"):
        result.add_column(column, justify="left" if column == "world" else "right")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (median kept)")
    parser.add_argument(
        "--fraud-scales",
        type=float,
        nargs="*",
        default=[1.0, 10.0, 80.0],
        help="Fraud scales to time (80 = public size)",
    )
    args = parser.parse_args()

    console = Console()
    seven = table(f"CypherTurn worlds, default scale, embedded FalkorDB (median of {args.repeats})")
    fraud = table("Fraud (PaySim) by scale, embedded FalkorDB")
    with tempfile.TemporaryDirectory(prefix="bench_worlds_") as data_dir:
        embedded_server(data_dir)
        try:
            total_build = total_load = 0.0
            for name in SEVEN:
                engine = open_engine(f"embedded:{data_dir}", f"bench_{name}")
                nodes, rels, build_s, load_s = timed(engine, name, 1.0, args.repeats)
                engine.drop()
                engine.close()
                total_build += build_s
                total_load += load_s
                seven.add_row(
                    name,
                    "1",
                    f"{nodes:,}",
                    f"{rels:,}",
                    f"{build_s:.3f}",
                    f"{load_s:.3f}",
                    f"{build_s + load_s:.3f}",
                )
            seven.add_row(
                "all seven",
                "",
                "",
                "",
                f"{total_build:.3f}",
                f"{total_load:.3f}",
                f"{total_build + total_load:.3f}",
                style="bold",
            )
            console.print(seven)
            for scale in args.fraud_scales:
                engine = open_engine(f"embedded:{data_dir}", f"bench_fraud_{scale:g}")
                repeats = args.repeats if scale <= 1 else 1
                nodes, rels, build_s, load_s = timed(engine, "fraud", scale, repeats)
                engine.drop()
                engine.close()
                fraud.add_row(
                    "fraud",
                    f"{scale:g}",
                    f"{nodes:,}",
                    f"{rels:,}",
                    f"{build_s:.2f}",
                    f"{load_s:.2f}",
                    f"{build_s + load_s:.2f}",
                )
            console.print(fraud)
        finally:
            embedded_server(data_dir).stop()


if __name__ == "__main__":
    main()
