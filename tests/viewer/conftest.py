"""Real run directories for the viewer tests: a guided bench run and a QER run, both on the
session's embedded FalkorDB with replay models (the runs' files are the runners' own).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cypherturn.cli._bench import bench_app
from cypherturn.experiments import (
    QerRunConfig,
    dataset_graph,
    load_question_set,
    question_set_digest,
    run_qer_experiment,
)
from cypherturn.graph import EmbeddedFalkorDB, GraphEngine, open_engine
from cypherturn.models import ReplayChatModel
from cypherturn.sessions import read_sessions
from cypherturn.worlds import get_world, load_world

# the test folder is on sys.path (pytest's prepend import mode); the module name is unique
from viewer_pages import INJECTED, BenchRun  # isort: skip

SESSIONS = 30
"""Sessions in the bench run: more than one page of 25, so paging has work to do."""

QER_BAD = "```cypher\nMATCH (c:Client RETURN c.name\n```"
QER_GOOD = "```cypher\nMATCH (c:Client) RETURN c.name LIMIT 3\n```"


@pytest.fixture(scope="module")
def bench_run(
    embedded_server: EmbeddedFalkorDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BenchRun]:
    """A real guided run of 30 magic_academy sessions: each turn runs a query, then submits.

    Even turns submit the gold query, odd turns a wrong one (``INJECTED``), so the
    page has correct and failed turns, partial sessions, and markup in model output.
    """
    tmp = tmp_path_factory.mktemp("viewer-bench")
    cli = typer.Typer()
    cli.add_typer(bench_app)
    runner = CliRunner()
    bench = tmp / "bench.jsonl"
    built = runner.invoke(
        cli,
        ["bench", "build", "--worlds", "magic_academy", "-n", str(SESSIONS), "--out", str(bench)],
    )
    assert built.exit_code == 0, built.output
    lines = []
    for session in read_sessions(bench):
        for number, turn in enumerate(session.turns):
            submitted = turn.gold_cypher if number % 2 == 0 else INJECTED
            for action, payload in (("EXECUTE_CYPHER", INJECTED), ("SUBMIT_ANSWER", submitted)):
                lines.append(json.dumps(json.dumps({"action": action, "input": payload})))
    replies = tmp / "replies.jsonl"
    replies.write_text("\n".join(lines), encoding="utf-8")
    out = tmp / "run"
    ran = runner.invoke(
        cli,
        ["bench", "run", str(bench), "--out", str(out), "--model", f"replay:{replies}",
         "--protocol", "guided", "--concurrency", "1"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    yield BenchRun(run=out, bench=bench)
    for graph in ("cypherturn_bench_magic_academy", "cypherturn_run_magic_academy_s0_x1"):
        engine = open_engine(None, graph)
        engine.drop()
        engine.close()


@pytest.fixture
def qer_run(make_engine: Callable[..., GraphEngine], tmp_path: Path) -> Path:
    """A real QER run on the Fraud graph: 2 easy questions, IS and RAS, 2 runs, budget 2.

    Every episode's first attempt is unparsable and its second executes, so each
    question shows a syntax error, its engine message, then a working query.
    """
    engine = make_engine("fraud")
    load_world(engine, get_world(dataset_graph("fraud")))
    questions = load_question_set("fraud")
    config = QerRunConfig(
        datasets=["fraud"],
        tiers=["easy"],
        strategies=["is", "ras"],
        model="replay:<memory>",
        budget=2,
        runs=2,
        temperature=0.9,
        max_tokens=64,
        questions_per_tier=2,
        question_sets={"fraud": question_set_digest(questions)},
    )
    out = tmp_path / "qer"
    episodes = 2 * 2 * 2
    run_qer_experiment(
        config,
        ReplayChatModel([QER_BAD, QER_GOOD] * episodes),
        {"fraud": engine},
        {"fraud": questions},
        out,
    )
    return out
