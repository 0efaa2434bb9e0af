"""Two `bench ask` run directories compared on the questions both answered.

Run: ``python benchmarks/compare_ask_runs.py RUN_A RUN_B [--strategy S] [--strategy-b S]``.

For each of executable, strict EX and relaxed EX: A's and B's rate with Wilson
95% intervals, the paired difference A - B with a percentile bootstrap over
questions (:func:`cypherturn.metrics.paired_difference`), and the questions each
run turned from wrong to right. Used for the memory's leave-one-out figure
(docs/results/memory/), where A is a run with ``--memory`` and B the same
questions without it, and for ``ras+`` with the memory against a peer
(docs/results/peers/, ``--strategy ras+ --strategy-b graphrag-prompt``). Prints an
80-column table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cypherturn.experiments import read_answers
from cypherturn.metrics import paired_difference, wilson_interval


def _rate(values: list[int]) -> str:
    interval = wilson_interval(sum(values), len(values))
    return f"{sum(values) / len(values):.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--strategy", default=None, help="only answers of this strategy")
    parser.add_argument("--strategy-b", default=None, help="B's strategy (default: --strategy)")
    args = parser.parse_args()
    runs = []
    for run, strategy in ((args.run_a, args.strategy), (args.run_b, args.strategy_b)):
        strategy = strategy or args.strategy
        answers = [a for a in read_answers(run) if strategy is None or a.strategy == strategy]
        runs.append({a.question_id: a for a in answers})
    shared = sorted(set(runs[0]) & set(runs[1]))
    if len(shared) < 2:
        print(f"only {len(shared)} questions answered by both runs", file=sys.stderr)
        return 1
    print(f"A {args.run_a}\nB {args.run_b}\n{len(shared)} questions answered by both")
    print(f"{'':<4} {'A':<20} {'B':<20} {'A - B [95% CI]':<24} {'+/-':<7}")
    for field, name in (("executable", "exec"), ("ex", "EX"), ("ex_relaxed", "rEX")):
        a = [int(getattr(runs[0][q], field)) for q in shared]
        b = [int(getattr(runs[1][q], field)) for q in shared]
        diff = paired_difference(a, b)
        gained = sum(x > y for x, y in zip(a, b, strict=True))
        lost = sum(x < y for x, y in zip(a, b, strict=True))
        print(
            f"{name:<4} {_rate(a):<20} {_rate(b):<20} "
            f"{diff.difference:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}] +{gained}/-{lost}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
