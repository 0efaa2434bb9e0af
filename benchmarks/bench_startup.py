"""Seconds before a ``cypherturn`` command can start its work: importing the command line.

Run: ``python benchmarks/bench_startup.py [--against REV] [--repeat 7]``.

Every command (``ask``, ``chat``, ``mcp``, each CLI call a test makes) first
imports ``cypherturn.cli`` and, through it, every package the commands share.
This times ``python -c "import cypherturn.cli"`` in a fresh interpreter, the
wall clock of the whole process, ``--repeat`` times. With ``--against REV`` the
same is timed for the source tree of git revision REV (a temporary worktree on
``PYTHONPATH``, same interpreter and packages), the two interleaved run by run so
that a load on the machine falls on both alike, and the ratio of the medians is
printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _time_import(src: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import cypherturn.cli"], env=env, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="A git revision to time side by side.")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    trees = {"this tree": ROOT / "src"}
    with tempfile.TemporaryDirectory() as scratch:
        if args.against:
            worktree = Path(scratch) / "against"
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(ROOT),
                    "worktree",
                    "add",
                    "--detach",
                    str(worktree),
                    args.against,
                ],
                check=True,
                capture_output=True,
            )
            trees[args.against] = worktree / "src"
        try:
            for src in trees.values():
                _time_import(src)  # warm the file cache once
            seconds: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, src in trees.items():
                    seconds[name].append(_time_import(src))
        finally:
            if args.against:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                    check=True,
                    capture_output=True,
                )
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"import cypherturn.cli, {args.repeat} runs each, {os.cpu_count()} cores, load {load}")
    print(f"{'tree':<24}{'median s':>10}{'min s':>8}{'max s':>8}")
    medians = {}
    for name, values in seconds.items():
        medians[name] = statistics.median(values)
        print(f"{name:<24}{medians[name]:>10.2f}{min(values):>8.2f}{max(values):>8.2f}")
    if args.against:
        ratio = medians[args.against] / medians["this tree"]
        print(f"this tree starts {ratio:.2f}x as fast as {args.against} (same run, interleaved)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
