"""EX of the final query and QER vs Q@1 in the QER report, from replay runs on the real Healthcare graph.

Six episodes (three easy questions x IS and RAS, budget 2, one run), each
reply chosen so every figure can be worked out by hand:

=====================  =====================================  ====================
episode                replies                                final query
=====================  =====================================  ====================
health_easy / is       unparsable, then any Case query        runs; no gold
health_easy / ras      unparsable twice                       fails; no gold
health_easy_01 / is    the gold (Pharmacist)                  EX 1, rEX 1
health_easy_01 / ras   the gold with another column name      EX 0, rEX 1
health_easy_02 / is    unparsable, then the wrong occupation  EX 0, rEX 0
health_easy_02 / ras   unparsable twice                       not run: EX 0, rEX 0
=====================  =====================================  ====================

IS: QER@1 = 2/3, QER@2 = 0; RAS: QER@1 = 2/3, QER@2 = 2/3; Q@1 = 2/3, so IS@2 is
-100 % from Q@1 and RAS@2 +0 %. EX over the two questions with a gold: IS 0.5
(rEX 0.5), RAS 0.0 (rEX 0.5); the paper's health_easy is excluded and counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cypherturn.cli import app
from cypherturn.cli._app import console
from cypherturn.errors import ConfigError
from cypherturn.experiments import (
    GOLD_VERSION,
    TRANSCRIPTS_FILE,
    QerRunConfig,
    QuestionSet,
    load_question_set,
    question_set_digest,
    run_qer_experiment,
    score_qer_answers,
)
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.records import read_run
from cypherturn.reports import build_report, write_report

runner = CliRunner()

BAD = "```cypher\nMATCH (c:Case RETURN c\n```"
ANY = "```cypher\nMATCH (c:Case) RETURN c.primaryid AS primaryid LIMIT 1\n```"
GOLD_01 = (
    "```cypher\nMATCH (c:Case) WHERE c.reporterOccupation = 'Pharmacist' "
    "RETURN c.primaryid AS primaryid\n```"
)
RENAMED_01 = GOLD_01.replace("AS primaryid", "AS id")
WRONG_02 = (
    "```cypher\nMATCH (c:Case) WHERE c.reporterOccupation = 'Consumer' RETURN c.primaryid\n```"
)
# In play order: run-major, then question (the paper's first), then strategy (is, ras).
REPLIES = [BAD, ANY, BAD, BAD, GOLD_01, RENAMED_01, BAD, WRONG_02, BAD, BAD]


@pytest.fixture
def health_set() -> QuestionSet:
    return load_question_set("healthcare")


@pytest.fixture
def health_engine(dataset_engine: Callable[[str], GraphEngine]) -> GraphEngine:
    return dataset_engine("healthcare")


@pytest.fixture
def answer_run(health_set: QuestionSet, health_engine: GraphEngine, tmp_path: Path) -> Path:
    config = QerRunConfig(
        datasets=["healthcare"],
        tiers=["easy"],
        strategies=["is", "ras"],
        model="replay:<memory>",
        budget=2,
        runs=1,
        temperature=0.9,
        max_tokens=64,
        questions_per_tier=3,
        question_sets={"healthcare": question_set_digest(health_set)},
    )
    out = tmp_path / "run"
    run_qer_experiment(
        config,
        ReplayChatModel(REPLIES),
        {"healthcare": health_engine},
        {"healthcare": health_set},
        out,
    )
    return out


def test_answers_are_scored_against_the_golds(
    answer_run: Path, health_engine: GraphEngine, health_set: QuestionSet
) -> None:
    scored = score_qer_answers(
        answer_run, {"healthcare": health_engine}, {"healthcare": health_set}
    )
    assert scored.gold_version == GOLD_VERSION and scored.missing_transcripts == 0
    table = {
        (a.question_id, a.strategy): (a.status, a.executed, a.ex, a.ex_relaxed)
        for a in scored.answers
    }
    assert table == {
        ("health_easy", "is"): ("no_gold", True, None, None),
        ("health_easy", "ras"): ("no_gold", False, None, None),
        ("health_easy_01", "is"): ("scored", True, 1, 1),
        ("health_easy_01", "ras"): ("scored", True, 0, 1),
        ("health_easy_02", "is"): ("scored", True, 0, 0),
        ("health_easy_02", "ras"): ("scored", False, 0, 0),
    }


def test_report_has_ex_and_the_reduction_from_q1(
    answer_run: Path, health_engine: GraphEngine, health_set: QuestionSet, tmp_path: Path
) -> None:
    scored = score_qer_answers(
        answer_run, {"healthcare": health_engine}, {"healthcare": health_set}
    )
    report = build_report([read_run(answer_run)], qer_n=5, qer_answers=scored)
    tables = {t.name: t for t in report.tables}
    third = 2 / 3
    assert tables["qer"].columns[-2:] == ["IS vs Q@1", "RAS vs Q@1"]
    assert tables["qer"].rows == [
        ["healthcare", "replay:<memory>", third, 0.0, third, third, 0.0, "-100.0%", "+0.0%"]
    ]
    answers = tables["qer_answers"]
    assert answers.columns == [
        "Dataset",
        "Tier",
        "Model",
        "Strategy",
        "n",
        "Runs",
        "QER@1",
        "Q@1",
        "QER@n",
        "vs Q@1",
        "EX",
        "rEX",
        "Scored q",
        "Excl. q",
    ]
    key = ["healthcare", "easy", "replay:<memory>"]
    assert answers.rows == [
        [*key, "is", 2, 1, third, third, 0.0, "-100.0%", 0.5, 0.5, 2, 1],
        [*key, "ras", 2, 1, third, third, third, "+0.0%", 0.0, 0.5, 2, 1],
    ]
    datasets = tables["qer_answers_datasets"]
    assert [row[2:] for row in datasets.rows] == [
        ["is", 2, 1, third, 0.0, "-100.0%", 0.5, 0.5, 2, 1],
        ["ras", 2, 1, third, third, "+0.0%", 0.0, 0.5, 2, 1],
    ]
    excluded = tables["qer_answers_excluded"].rows
    assert excluded == [
        [
            "healthcare",
            "health_easy",
            "no_gold",
            "the FAERS graph stores no patients or names (a Case has no name)",
        ]
    ]
    assert report.gold_version == GOLD_VERSION
    text = write_report(report, tmp_path / "report")[0].read_text()
    assert "QER reduction and answer accuracy per configuration" in text
    assert GOLD_VERSION in text and "-100.0%" in text


def test_report_without_scoring_leaves_ex_empty(answer_run: Path) -> None:
    report = build_report([read_run(answer_run)], qer_n=5)
    rows = {t.name: t for t in report.tables}["qer_answers"].rows
    assert [row[9:] for row in rows] == [
        ["-100.0%", None, None, None, None],
        ["+0.0%", None, None, None, None],
    ]
    assert report.gold_version is None


def test_scoring_refuses_another_question_set(
    answer_run: Path, health_engine: GraphEngine, health_set: QuestionSet
) -> None:
    edited = health_set.model_copy(update={"questions": health_set.questions[:-1]})
    with pytest.raises(ConfigError, match="not the one"):
        score_qer_answers(answer_run, {"healthcare": health_engine}, {"healthcare": edited})


def test_cli_runs_ras_plus_and_reports_ex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "_width", 250)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([GOLD_01] * 12), encoding="utf-8")
    out = tmp_path / "run"
    args = ["qer", "run", "--datasets", "healthcare", "--tiers", "easy", "-q", "2", "-n", "2"]
    args += ["--runs", "1", "--model", f"replay:{replies}", "--out", str(out)]
    played = runner.invoke(app, [*args, "--strategies", "is,ras+"])
    assert played.exit_code == 0, played.output
    assert "render the tables with: cypherturn qer report" in played.output
    transcripts = (out / TRANSCRIPTS_FILE).read_text().splitlines()
    assert sorted(json.loads(line)["result"]["strategy"] for line in transcripts) == [
        "is",
        "is",
        "ras+",
        "ras+",
    ]
    shown = runner.invoke(app, ["qer", "report", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "QER reduction and answer accuracy" in shown.output
    assert f"golds {GOLD_VERSION}" in shown.output
    text = (out / "report" / "report.md").read_text()
    assert "| health_easy | no_gold |" in text
    # health_easy_01 is answered by its gold under both strategies: EX 1 over the one scored question.
    rows = [line for line in text.splitlines() if line.startswith("| healthcare | easy |")]
    assert len(rows) == 2 and all("| 1.000 | 1.000 | 1 | 1 |" in row for row in rows), rows
    unknown = runner.invoke(app, [*args, "--strategies", "is,nope"])
    assert isinstance(unknown.exception, ConfigError)
