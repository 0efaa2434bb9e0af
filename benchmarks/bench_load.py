"""Build and load times of the public datasets (POLE, Healthcare) into the embedded FalkorDB.

Run: ``python benchmarks/bench_load.py [--repeats 3] [--batch-size 5000]``.

For each dataset, timed separately and reported as the median of ``--repeats``
runs (wall seconds):

* build: ``World.build()`` from the zip packaged with cypherturn (CSV parsing,
  typing, the file/pattern/count checks);
* load: ``GraphEngine.load(data, replace=True)`` of the built graph into a fresh
  graph of an embedded FalkorDB in a temporary directory (batched UNWIND CREATE
  plus index creation), then the count read-back;
* skip check: a second ``load_world`` on the loaded graph, which only compares
  counts (idempotence).

The embedded server is started once before timing and stopped at the end.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from rich.console import Console
from rich.table import Table

from cypherturn.graph import embedded_server, open_engine
from cypherturn.worlds import get_world, load_world

DATASETS = ("pole", "healthcare")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (median kept)")
    parser.add_argument("--batch-size", type=int, default=5_000, help="records per write query")
    args = parser.parse_args()

    console = Console()
    table = Table(title=f"Dataset build and load, embedded FalkorDB (median of {args.repeats})")
    for column in ("dataset", "nodes", "relationships", "build s", "load s", "records/s", "skip s"):
        table.add_column(column, justify="left" if column == "dataset" else "right")

    with tempfile.TemporaryDirectory(prefix="bench_load_") as data_dir:
        embedded_server(data_dir)
        try:
            for name in DATASETS:
                world = get_world(name)
                engine = open_engine(f"embedded:{data_dir}", f"bench_{name}")
                builds, loads, skips = [], [], []
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    data = world.build()
                    builds.append(time.perf_counter() - started)

                    started = time.perf_counter()
                    stats = engine.load(data, batch_size=args.batch_size, replace=True)
                    nodes, rels = engine.node_count(), engine.relationship_count()
                    loads.append(time.perf_counter() - started)
                    if (nodes, rels) != (len(data.nodes), len(data.relationships)):
                        raise SystemExit(f"{name}: read back {nodes}/{rels} after load {stats}")

                    skip = load_world(engine, world)
                    if not skip.skipped:
                        raise SystemExit(f"{name}: second load_world did not skip: {skip}")
                    skips.append(skip.seconds)
                engine.drop()
                engine.close()
                load_s = statistics.median(loads)
                table.add_row(
                    name,
                    f"{nodes:,}",
                    f"{rels:,}",
                    f"{statistics.median(builds):.2f}",
                    f"{load_s:.2f}",
                    f"{(nodes + rels) / load_s:,.0f}",
                    f"{statistics.median(skips):.4f}",
                )
        finally:
            embedded_server(data_dir).stop()
    console.print(table)


if __name__ == "__main__":
    main()
