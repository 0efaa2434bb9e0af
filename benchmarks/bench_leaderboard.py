"""The local leaderboard's targets (issue 16): EX and parse failures of local-model runs.

Run: ``python benchmarks/bench_leaderboard.py [RUN_DIR ...] [--play MODEL --protocol P
[--budget M] --bench FILE --out RUN_DIR]``.

Without arguments it reads the committed rows under ``docs/results/leaderboard-local/``
(each a ``bench run`` directory with ``scores.jsonl``) and prints, per run, the model,
protocol, harness, sessions and turns, strict EX with its session-bootstrap CI, and
the unreadable actions (replies the harness could not read as an action) and the
repeated ones (an earlier action of the turn, word for word) over all actions, from the run's action logs when they were kept,
each against its target, and the model's seconds per action (median and 90th percentile), also
for the actions right after an ASK_USER answered by the user simulator (agentic), which
re-evaluated the whole conversation while the simulator shared the agent's llama.cpp context:

- Qwen2.5-Coder-1.5B: guided EX >= 0.28 (Gemma-2-9B in CypherTurn Table 2),
  agentic x3 EX >= 0.15;
- every model run: unreadable actions <= 1 % of actions.

``--play`` first plays ``--bench`` on ``--sessions stratified:3`` (3 sessions per
world, personas and phenomena balanced) into ``--out`` with the harness of the
best-measured row of its protocol (explicit framing, decoding guards, output note, repeat
guard; guided runs also the chain note, the last-action note and every grounding part,
the question and reference parts included, row S; agentic runs grounding's repairs,
values, question and reference parts, ``--variant persistent_schema --schema-first`` and
an 8,192-token context, row U),
through the ``cypherturn bench run`` command a user would type; a killed run resumes.
About 30-40 minutes a guided run of the 1.5B model on 2 cores, 53 minutes an agentic x3 one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cypherturn.metrics import bootstrap_ci, session_totals
from cypherturn.protocols import CUT_OFF, REPEATING, STUCK
from cypherturn.records import TurnScore, read_jsonl
from cypherturn.runner import CONFIG_FILE, RunConfig

ROWS = Path(__file__).resolve().parents[1] / "docs" / "results" / "leaderboard-local"
HARNESS = ["--framing", "explicit", "--decoding-guards", "--output-note", "--repeat-guard"]
GUIDED_HARNESS = ["--grounding", "all", "--chain-note", "--last-action-note"]
AGENTIC_HARNESS = [
    "--grounding", "repair,values,question,reference", "--variant", "persistent_schema",
    "--schema-first", "--n-ctx", "8192",
]  # fmt: skip
EX_TARGETS = {("qwen2.5-coder-1.5b", "guided"): 0.28, ("qwen2.5-coder-1.5b", "agentic x3"): 0.15}
UNREADABLE_TARGET = 0.01


@dataclass
class LogFigures:
    """What a run's action logs show: counts by kind, and the model's seconds per action.

    Attributes:
        counts: ``actions``, ``repeats``, ``unreadable`` and ``unreadable (<reason>)``.
        seconds: the model's seconds of every action.
        after_ask: the model's seconds of the actions right after an ASK_USER step.
    """

    counts: Counter[str] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)
    after_ask: list[float] = field(default_factory=list)


def action_counts(run: Path) -> LogFigures | None:
    """Actions, unreadable replies (by reason), repeats and model seconds over the run's logs; None without logs."""
    logs = sorted((run / "sessions").glob("*.jsonl"))
    if not logs:
        return None
    figures = LogFigures()
    counts = figures.counts
    for log in logs:
        # repeats are counted from the payloads, so runs without the repeat guard count too
        done: set[tuple[int, str, str]] = set()
        asked = False
        for line in log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("event") != "step":
                continue
            step = event["step"]
            if step.get("by_harness"):
                # taken for the model (--schema-first): no reply to read, no model call
                counts["by harness"] += 1
                continue
            counts["actions"] += 1
            figures.seconds.append(step["model_latency_s"])
            if asked:
                figures.after_ask.append(step["model_latency_s"])
            asked = step["action"] == "ask_user"
            if step["action"] not in (None, "submit_answer"):
                key = (
                    step["turn"],
                    step["action"],
                    step.get("original_payload") or step["payload"],
                )
                counts["repeats"] += key in done
                done.add(key)
            if step["action"] is None:
                reason = {
                    CUT_OFF: "cut off",
                    REPEATING: "runaway",
                    STUCK: "repeated a third time",
                }.get(step["observation"], "unparsable")
                counts[f"unreadable ({reason})"] += 1
                counts["unreadable"] += 1
    return figures


def _seconds(values: list[float]) -> str:
    """Median and 90th percentile of model seconds, e.g. ``4.1 s (p90 7.9 s, 612 actions)``."""
    p50, p90 = np.percentile(values, [50, 90])
    return f"{p50:.1f} s (p90 {p90:.1f} s, {len(values)} actions)"


def _ex(run: Path, target: float | None) -> str:
    """Sessions, turns and strict EX with its CI, against the target when there is one."""
    turns = [s for s in read_jsonl(run / "scores.jsonl", TurnScore) if s.valid]
    ci = bootstrap_ci(session_totals(turns))
    sessions = len({s.record.session_id for s in turns})
    verdict = ""
    if target is not None:
        verdict = f" (target >= {target:.2f}: {'met' if ci.estimate >= target else 'NOT met'})"
    return (
        f"{sessions} sessions, {len(turns)} turns\n"
        f"    EX {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]{verdict}"
    )


def row(run: Path) -> str:
    """One printed line: the run's system, EX with CI, and its action figures against targets."""
    config = RunConfig.model_validate_json((run / CONFIG_FILE).read_text(encoding="utf-8"))
    settings = config.settings
    protocol = settings.protocol.value
    if protocol == "agentic":
        protocol += f" x{settings.budget_multiplier}"
    window = f", n_ctx {config.n_ctx}" if config.n_ctx is not None else ""
    head = f"{run.name}: {config.model} {protocol} [{settings.harness or 'paper'}{window}]"
    if (run / "scores.jsonl").exists():
        text = f"{head}, {_ex(run, EX_TARGETS.get((config.model, protocol)))}"
    else:
        text = f"{head}: not scored yet (still playing?)"
    figures = action_counts(run)
    if figures is None:
        return text + "\n    actions: no logs kept"
    counts = figures.counts
    timing = f"\n    model seconds per action {_seconds(figures.seconds)}"
    if figures.after_ask:
        timing += f"; right after ASK_USER {_seconds(figures.after_ask)}"
    share = counts["unreadable"] / counts["actions"]
    reasons = ", ".join(
        f"{k} {v}" for k, v in sorted(counts.items()) if k.startswith("unreadable (")
    )
    met = "met" if share <= UNREADABLE_TARGET else "NOT met"
    return (
        text + f"\n    unreadable actions {counts['unreadable']}/{counts['actions']} ({share:.1%};"
        f" target <= 1%: {met}){' - ' + reasons if reasons else ''};"
        f" repeated actions {counts['repeats']}{timing}"
    )


def play(model: str, protocol: str, budget: int | None, bench: Path, out: Path) -> None:
    """Play the stratified subset into ``out`` with the leaderboard harness (resumes)."""
    command = [
        sys.executable, "-m", "cypherturn", "bench", "run", str(bench), "--model", model,
        "--protocol", protocol, "--sessions", "stratified:3",
        *HARNESS, "--seed", "0", "--out", str(out),
    ]  # fmt: skip
    if budget is not None:
        command += ["--budget", str(budget)]
    command += AGENTIC_HARNESS if protocol == "agentic" else GUIDED_HARNESS
    subprocess.run(command, check=True)


def main() -> None:
    """Play when asked, then print every run's figures against the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--play", metavar="MODEL")
    parser.add_argument("--protocol", default="guided")
    parser.add_argument("--budget", type=int)
    parser.add_argument("--bench", type=Path, help="benchmark JSONL (cypherturn bench build)")
    parser.add_argument("--out", type=Path, help="run directory to play into")
    args = parser.parse_args()
    if args.play:
        if args.bench is None or args.out is None:
            parser.error("--play needs --bench and --out")
        play(args.play, args.protocol, args.budget, args.bench, args.out)
        args.runs.append(args.out)
    runs = args.runs or sorted(p.parent for p in ROWS.glob("*/scores.jsonl"))
    for run in runs:
        print(row(run))


if __name__ == "__main__":
    main()
