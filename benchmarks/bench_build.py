"""Wall time of the default CypherTurn build: 721 sessions, 5,927 turns, every gold verified.

Run: ``python benchmarks/bench_build.py [--seed N] [--sessions N]``.
Starts a private embedded FalkorDB in a temporary directory, loads each of the
seven worlds once, generates the sessions (each gold executed once, plus tie
probes and the perturbation query of chain-dependent turns), writes the JSONL
and prints the wall time (goal: 60 s on 2 cores), per-world times, queries and
the distribution table. Pass ``--verify`` to also re-verify every written
session from the file alone (:func:`cypherturn.sessions.verify_session`).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cypherturn.graph import GraphEngine, GraphSchema, open_engine
from cypherturn.sessions import (
    DEFAULT_SESSIONS,
    build_sessions,
    compute_stats,
    plan_build,
    verify_session,
    write_sessions,
)
from cypherturn.worlds import get_world, load_world


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument(
        "--verify", action="store_true", help="re-verify every session from the file"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        url = f"embedded:{tmp}/db"
        engines: dict[str, GraphEngine] = {}
        load_seconds = 0.0

        def provider(name: str) -> tuple[GraphEngine, GraphSchema]:
            nonlocal load_seconds
            started = time.perf_counter()
            engine = engines[name] = open_engine(url, f"bench_{name}")
            world = get_world(name)
            load_world(engine, world, replace=True)
            load_seconds += time.perf_counter() - started
            return engine, world.declared_schema()

        open_engine(url, "warmup").close()  # server start-up is not part of the build
        started = time.perf_counter()
        plan = plan_build(seed=args.seed, sessions=args.sessions)
        sessions, report = build_sessions(plan, provider, seed=args.seed)
        out = Path(tmp) / "bench.jsonl"
        write_sessions(out, sessions)
        wall = time.perf_counter() - started
        stats = compute_stats(sessions)

        print(f"build: {stats.sessions} sessions, {stats.turns} turns in {wall:.1f} s wall "
              f"(world loading {load_seconds:.1f} s), {report.queries:,} queries")  # fmt: skip
        for world, seconds in report.world_seconds.items():
            tally = stats.worlds[world]
            print(
                f"  {world:16s} {tally.sessions:4d} sessions {tally.turns:5d} turns {seconds:6.1f} s"
            )
        print("rejected candidates:", dict(report.rejections.most_common()))
        print("personas:", {k: v.sessions for k, v in stats.personas.items()})
        print("phenomena:", stats.phenomena)
        print("chain modes:", stats.chain_modes)
        print(f"mean turns/session {stats.mean_turns:.2f} (min {stats.min_turns}, max {stats.max_turns}), "
              f"ambiguous turns {stats.ambiguous_turns}")  # fmt: skip
        if args.verify:
            started = time.perf_counter()
            findings = sum(len(verify_session(s, engines[s.world])) for s in sessions)
            print(
                f"re-verification from the file: {findings} findings in {time.perf_counter() - started:.1f} s"
            )
        for engine in engines.values():
            engine.close()


if __name__ == "__main__":
    main()
