"""Paired ablation of the local leaderboard runs: what each harness setting and grounding did.

`cypherturn report` groups turns by model, protocol, budget multiplier and variant, so runs of
one model under different harness settings would merge into one system. This script keeps each
run apart and compares pairs of runs on the sessions both played, with the same session-level
paired bootstrap the report uses (`cypherturn.metrics.paired_bootstrap`, CypherTurn §4.2).

    python docs/results/leaderboard-local/ablation.py RUN_DIR... [--pair A:B ...] [--exclude SESSION ...]

Each RUN_DIR holds `scores.jsonl`; when it also holds the run's `sessions/` action logs, the
action counts (unreadable replies and why, replies the lenient parser repaired, grounding repairs)
are printed too. A pair `A:B` names two RUN_DIRs by their folder names and prints A minus B.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from cypherturn.metrics import paired_bootstrap, session_totals
from cypherturn.protocols import CUT_OFF, REPEATING
from cypherturn.records import TurnScore

METRICS = ("ex", "ex_relaxed", "psjs")


def load_scores(run: Path, exclude: set[str]) -> list[TurnScore]:
    """The run's turn scores, less the excluded sessions."""
    with (run / "scores.jsonl").open() as f:
        scores = [TurnScore.model_validate_json(line) for line in f if line.strip()]
    return [s for s in scores if s.record.session_id not in exclude]


def action_counts(run: Path, exclude: set[str]) -> Counter[str] | None:
    """Counts over the run's action logs, or None when the logs are not there."""
    logs = sorted((run / "sessions").glob("*.jsonl"))
    if not logs:
        return None
    counts: Counter[str] = Counter()
    for log in logs:
        if log.stem in exclude:
            continue
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("event") != "step":
                continue
            step = event["step"]
            if step.get("by_harness"):
                counts["taken by the harness"] += 1
                continue
            counts["actions"] += 1
            if step["action"] is None:
                reason = {CUT_OFF: "cut off", REPEATING: "repetition guard"}.get(
                    step["observation"], "unparsable"
                )
                counts[f"unreadable: {reason}"] += 1
            else:
                counts[step["action"]] += 1
            if step.get("repaired"):
                counts["repaired by the lenient parser"] += 1
            if step.get("grounding_repairs"):
                counts["grounding repairs"] += 1
            if step["action"] == "execute_cypher":
                counts["executions"] += 1
                counts["failed executions"] += step["error_class"] is not None
    return counts


def main() -> None:
    """Print each run's means and action counts, then the paired differences."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--pair", action="append", default=[], help="A:B, folder names")
    parser.add_argument("--exclude", action="append", default=[], help="session id to leave out")
    args = parser.parse_args()
    exclude = set(args.exclude)
    scores = {run.name: load_scores(run, exclude) for run in args.runs}
    for run in args.runs:
        turns = [s for s in scores[run.name] if s.valid]
        means = {m: session_totals(turns, m) for m in METRICS}
        cells = "  ".join(
            f"{m} {sum(t.sums) / max(1, sum(t.counts)):.3f}" for m, t in means.items()
        )
        sessions = len({s.record.session_id for s in turns})
        print(f"{run.name}: {sessions} sessions, {len(turns)} turns  {cells}")
        counts = action_counts(run, exclude)
        if counts:
            print("   ", dict(sorted(counts.items())))
    for pair in args.pair:
        a, b = pair.split(":")
        for metric in METRICS:
            cmp = paired_bootstrap(
                session_totals(scores[a], metric), session_totals(scores[b], metric)
            )
            print(
                f"{a} - {b} [{metric}]: {cmp.difference:+.3f} [{cmp.low:+.3f}, {cmp.high:+.3f}]"
                f" p={cmp.p_value:.3f} over {cmp.n_sessions} sessions"
            )


if __name__ == "__main__":
    main()
