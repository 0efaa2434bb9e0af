"""What submission-time grounding does to the predictions a run already made, without the model.

Each predicted query of RUN_DIR's `records.jsonl` goes through what SUBMIT_ANSWER does with
`--grounding` on (`cypherturn.agent.ActionExecutor.submit_answer`: the schema check's repairs,
then, when the query returns nothing, the value check and its repairs), on the graph the gold
was verified on; the changed predictions are scored again with the benchmark's scorer.

    python docs/results/leaderboard-local/reground.py RUN_DIR [--bench cypherturn.jsonl]
        [--grounding repair,values] [--show]

With ``question`` or ``reference`` in ``--grounding``, each turn gets the context its
protocol gives it (`cypherturn.protocols.guided_context`: the previous gold result as the
guided history shows it; `agentic_context`: what the previous, regrounded prediction returns).

This is an offline bound, not a replay: in a live run with grounding on, the repairs of
EXECUTE_CYPHER observations also change what the model writes next. It prints the EX before
and after, the turns that changed and the repairs that changed them (`--show`: each query).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from cypherturn.agent import ActionExecutor, AgentGrounding
from cypherturn.api import bench_engines
from cypherturn.metrics import Scorer
from cypherturn.protocols import agentic_context, guided_context, player_view
from cypherturn.records import TurnRecord, TurnScore, read_jsonl
from cypherturn.sessions import read_sessions


def main() -> None:
    """Parse the arguments, reground the run's predictions, print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run", type=Path, help="a run directory with records.jsonl and scores.jsonl"
    )
    parser.add_argument("--bench", type=Path, default=Path("cypherturn.jsonl"))
    parser.add_argument("--grounding", default="repair,values")
    parser.add_argument("--show", action="store_true", help="print each changed query")
    args = parser.parse_args()
    grounding = AgentGrounding.parse(args.grounding)
    turns = list(read_jsonl(args.run / "records.jsonl", TurnRecord))
    before = {
        (s.record.session_id, s.record.turn): s.ex
        for s in read_jsonl(args.run / "scores.jsonl", TurnScore)
    }
    played = {t.session_id for t in turns}
    sessions = [s for s in read_sessions(args.bench) if s.session_id in played]
    changed: list[tuple[TurnRecord, str, list[str]]] = []
    regrounded: list[TurnRecord] = []
    by_id = {s.session_id: s for s in sessions}
    answers: dict[tuple[str, int], str | None] = {}
    with bench_engines(sessions) as engine_for:
        executors: dict[str, ActionExecutor] = {}
        for turn in turns:
            executor = executors.setdefault(turn.graph, ActionExecutor(engine_for(turn.graph)))
            view = player_view(by_id[turn.session_id], turn.protocol)
            played = view.turns[turn.turn - 1]
            context = None
            if grounding.question or grounding.reference:
                context = (
                    guided_context(view, played, executor.index)
                    if turn.protocol == "guided"
                    else agentic_context(
                        executor, played, answers.get((turn.session_id, turn.turn - 1))
                    )
                )
            if turn.predicted_cypher:
                observed = executor.submit_answer(turn.predicted_cypher, grounding, context)
                if observed.query is not None:
                    changed.append((turn, observed.query, [r.code for r in observed.repairs]))
                    turn = turn.model_copy(update={"predicted_cypher": observed.query})
            answers[(turn.session_id, turn.turn)] = turn.predicted_cypher
            regrounded.append(turn)
        after = {
            (s.record.session_id, s.record.turn): s.ex for s in Scorer(engine_for).score(regrounded)
        }
    moves: Counter[tuple[int, int]] = Counter()
    by_repair: Counter[tuple[str, int, int]] = Counter()
    for turn, query, repairs in changed:
        key = (turn.session_id, turn.turn)
        moves[(before[key], after[key])] += 1
        for code in sorted(set(repairs)):
            by_repair[(code, before[key], after[key])] += 1
        if args.show:
            print(
                f"{turn.session_id} T{turn.turn} {turn.phenomenon or '-'} EX {before[key]} -> {after[key]} {repairs}"
            )
            print(f"  {turn.predicted_cypher}\n  {query}")
    n = len(turns)
    print(
        f"{args.run.name}: {len(changed)} of {sum(1 for t in turns if t.predicted_cypher)} predictions changed"
    )
    print(f"EX {sum(before.values()) / n:.3f} -> {sum(after.values()) / n:.3f} ({n} turns)")
    print(
        "changed turns, EX before -> after: "
        + ", ".join(f"{a}->{b}: {c}" for (a, b), c in sorted(moves.items()))
    )
    for (code, a, b), count in sorted(by_repair.items()):
        print(f"  {code}: {a}->{b} x{count}")


if __name__ == "__main__":
    main()
