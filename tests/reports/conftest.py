"""A small synthetic run directory, scored for real on the EX/PSJS fixture graph."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.metrics import score_run
from cypherturn.records import (
    ATTEMPTS_FILE,
    Action,
    ProtocolName,
    QerEpisode,
    QueryAttempt,
    TurnRecord,
    write_jsonl,
)

FIXTURE_GRAPH = Path(__file__).parents[1] / "metrics" / "fixture_graph.cypher"

# Three chained turns per session; a model either answers the gold, a wrong query, or nothing.
GOLD = [
    "MATCH (p:Person {name: 'Alice'})-[:KNOWS]->(f:Person) RETURN f.name AS name",
    "MATCH (p:Person {name: 'Alice'})-[:KNOWS]->(f:Person)-[:LIVES_IN]->(c:City) RETURN DISTINCT c.name AS city",
    "MATCH (c:City)<-[:LIVES_IN]-(p:Person) WHERE c.name IN ['Paris', 'Rome'] RETURN count(p) AS n",
]
WRONG = [
    "MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN f.name AS name",
    "MATCH (c:City {name: 'Paris'}) RETURN c.name AS city",
    "MATCH (p:Person) RETURN count(p) AS n",
]
# model -> per-session answer patterns ("g" gold, "w" wrong, "x" error, "-" none)
PLAYS = {
    "alpha": ["ggg", "ggw", "gwg", "ggg"],
    "beta": ["gww", "wwg", "gxw", "w--"],
}


def _records(graph: str) -> list[TurnRecord]:
    records = []
    settings = [
        (ProtocolName.GUIDED, 3),
        (ProtocolName.AGENTIC, 3),
        (ProtocolName.AGENTIC, 5),
        (ProtocolName.AGENTIC, 10),
    ]
    for model, plays in PLAYS.items():
        for protocol, budget in settings:
            for s, play in enumerate(plays):
                # Guided runs of the same model do a little better: the first wrong turn is fixed.
                if protocol is ProtocolName.GUIDED:
                    play = play.replace("w", "g", 1)
                for t, answer in enumerate(play, start=1):
                    predicted = {
                        "g": GOLD[t - 1],
                        "w": WRONG[t - 1],
                        "x": "MATCH (n RETURN n",
                        "-": None,
                    }[answer]
                    records.append(
                        TurnRecord(
                            run_id="synthetic",
                            model=model,
                            protocol=protocol,
                            budget_multiplier=budget,
                            session_id=f"s{s}",
                            turn=t,
                            graph=graph,
                            phenomenon=["EXPAND", "PIVOT", "AGG_COUNT"][t - 1],
                            chain_mode=["none", "expand", "aggregate"][t - 1],
                            persona="student" if s % 2 else "journalist",
                            depends_on=t - 1 if t > 1 else None,
                            gold_cypher=GOLD[t - 1],
                            predicted_cypher=predicted,
                            cliff=answer == "-",
                            actions={
                                Action.INSPECT_SCHEMA: 1,
                                Action.EXECUTE_CYPHER: 1,
                                Action.SUBMIT_ANSWER: 1,
                            },
                            output_tokens=40 + 10 * t,
                            prompt_tokens=500,
                            latency_s=1.5,
                            query_attempts=[
                                QueryAttempt(index=1, outcome="error" if answer == "x" else "ok")
                            ],
                        )
                    )
    return records


def _episodes() -> list[QerEpisode]:
    episodes = []
    patterns = {"is": ["eeeeo", "eeo", "eeeee", "o"], "ras": ["eo", "o", "eeo", "o"]}
    for dataset in ("pole", "healthcare"):
        for strategy, outs in patterns.items():
            for run in range(3):
                for q, out in enumerate(outs):
                    out = out if (run + q) % 3 else out.replace("e", "", 1) or "o"
                    episodes.append(
                        QerEpisode(
                            strategy=strategy,
                            dataset=dataset,
                            tier="easy" if q % 2 else "hard",
                            model="coder",
                            run_index=run,
                            question_id=f"q{q}",
                            budget=5,
                            attempts=[
                                QueryAttempt(index=i + 1, outcome="ok" if c == "o" else "error")
                                for i, c in enumerate(out)
                            ],
                        )
                    )
    return episodes


@pytest.fixture
def run_dir(make_engine: Callable[..., GraphEngine], tmp_path: Path) -> Path:
    """A run directory with scores.jsonl (scored on the real engine), run.json and attempts.jsonl."""
    engine = make_engine()
    engine.write(
        "\n".join(ln for ln in FIXTURE_GRAPH.read_text().splitlines() if not ln.startswith("//"))
    )
    out = tmp_path / "run"
    out.mkdir()
    write_jsonl(out / ATTEMPTS_FILE, _episodes())
    score_run(_records(engine.graph), {engine.graph: engine}, out)
    return out
