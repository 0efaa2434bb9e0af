"""The unreadable replies of recorded runs, read again by the current action reader.

Run: ``python docs/results/leaderboard-local/reread.py [RUN_DIR ...]`` (default: every row
here). For each run, the replies its logs record as no action (not the harness's own
steps, not the repeat guard's ends) go through :func:`cypherturn.agent.parse_action`, with
``ended`` set unless the harness recorded the reply as cut off or stopped by the repetition
guard, and then through :func:`cypherturn.agent.salvage_runaway`. This replays the reader on
what the model wrote; a new play would differ, since a reply read changes the rest of the turn.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cypherturn.agent import ParseFailure, parse_action, salvage_runaway
from cypherturn.protocols import CUT_OFF, REPEATING, STUCK

ROWS = Path(__file__).resolve().parent


def reread(run: Path) -> tuple[int, int, int]:
    """``(model actions, unreadable as played, unreadable as read now)`` of one run's logs."""
    actions = unreadable = still = 0
    for log in sorted((run / "sessions").glob("*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("event") != "step" or event["step"].get("by_harness"):
                continue
            step = event["step"]
            actions += 1
            if step["action"] is not None or step["observation"] == STUCK:
                continue
            unreadable += 1
            stopped = step["observation"] in (CUT_OFF, REPEATING)
            parsed = parse_action(step["reply"], ended=not stopped)
            if isinstance(parsed, ParseFailure) and stopped:
                parsed = salvage_runaway(step["reply"]) or parsed
            still += isinstance(parsed, ParseFailure)
    return actions, unreadable, still


def main() -> None:
    """Print each run's unreadable share as played and as read now."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path)
    runs = parser.parse_args().runs or sorted(p.parent for p in ROWS.glob("*/sessions"))
    for run in runs:
        actions, unreadable, still = reread(run)
        if actions:
            print(
                f"{run.name}: {actions} actions, unreadable {unreadable} ({unreadable / actions:.1%})"
                f" as played, {still} ({still / actions:.1%}) read now"
            )


if __name__ == "__main__":
    main()
