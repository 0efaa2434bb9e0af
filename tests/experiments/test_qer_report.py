"""Tables 3 and 4, the side tables and Figure 3 rendered from runs made by the runner and the CLI."""

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
    MIN_QUESTION_CHARS,
    QUESTION_ENDINGS,
    TOKENS_PER_QUESTION,
    generate_model_questions,
    load_question_set,
)
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.records import ATTEMPTS_FILE, read_run
from cypherturn.reports import build_report, write_report

runner = CliRunner()


def test_tables_of_a_replay_run(tiny_run: Path, tmp_path: Path) -> None:
    report = build_report([read_run(tiny_run)], qer_n=5)
    tables = {t.name: t for t in report.tables}
    # Budget 2 caps n; every question failed at attempt 1 and executed at attempt 2.
    assert tables["qer"].columns == [
        "Dataset",
        "Model",
        "Q@1",
        "IS@2",
        "RAS@2",
        "dIS",
        "dRAS",
        "IS vs Q@1",
        "RAS vs Q@1",
    ]
    assert tables["qer"].rows == [
        ["fraud", "replay:<memory>", 1.0, 0.0, 0.0, 1.0, 1.0, "-100.0%", "-100.0%"]
    ]
    assert tables["qer_tiers"].rows == [
        ["fraud", "easy", "replay:<memory>", 1.0, 0.0, 0.0, 0.0, 0.0]
    ]
    assert tables["qer_error_classes"].columns[-1] == "syntax"
    assert tables["qer_error_classes"].rows == [["is", 1, 2, 1.0], ["ras", 1, 2, 1.0]]
    cost = tables["qer_cost"].rows
    assert [row[:4] for row in cost] == [["fraud", "is", 2, "2.00"], ["fraud", "ras", 2, "2.00"]]
    # RAS's second prompt carries the failed query and the engine's message: a larger context.
    assert int(str(cost[1][7])) > int(str(cost[0][7]))
    written = write_report(report, tmp_path / "report")
    assert (tmp_path / "report" / "plots" / "qer_scaling.png") in written
    text = written[0].read_text()
    assert "QER per complexity tier" in text and "Failures by error class" in text


@pytest.fixture
def replay_file(tmp_path: Path) -> Path:
    bad = "```cypher\nMATCH (c:Client RETURN c.name\n```"
    good = "```cypher\nMATCH (c:Client) RETURN c.name LIMIT 3\n```"
    path = tmp_path / "replies.json"
    path.write_text(json.dumps([bad, good] * 8))
    return path


def test_cli_run_report_and_refusal(
    replay_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "_width", 200)
    out = tmp_path / "run"
    args = [
        "qer",
        "run",
        "--datasets",
        "fraud",
        "--tiers",
        "easy,hard",
        "-q",
        "1",
        "-n",
        "2",
        "--model",
        f"replay:{replay_file}",
        "--out",
        str(out),
    ]
    result = runner.invoke(app, [*args, "--runs", "2"])
    assert result.exit_code == 0, result.output
    assert "8 episodes played, 0 already done, 8 planned" in result.output
    assert len((out / ATTEMPTS_FILE).read_text().splitlines()) == 8
    again = runner.invoke(app, [*args, "--runs", "2"])
    assert "0 episodes played, 8 already done" in again.output
    refused = runner.invoke(app, [*args, "--runs", "3"])
    assert isinstance(refused.exception, ConfigError)
    assert "runs 2 -> 3" in str(refused.exception)
    shown = runner.invoke(app, ["report", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "Query execution error rate (QER), n = 2" in shown.output
    assert "QER per complexity tier" in shown.output
    assert (out / "report" / "plots" / "qer_scaling.png").exists()


def test_cli_questions_list_and_validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "_width", 200)
    listed = runner.invoke(app, ["qer", "questions"])
    assert listed.exit_code == 0, listed.output
    assert "healthcare" in listed.output and "crime" in listed.output
    checked = runner.invoke(app, ["qer", "questions", "--datasets", "fraud", "--validate"])
    assert checked.exit_code == 0, checked.output
    assert "valid" in checked.output
    written = runner.invoke(
        app, ["qer", "questions", "--datasets", "fraud", "--regenerate", "--out", str(tmp_path)]
    )
    assert written.exit_code == 0, written.output
    assert (tmp_path / "fraud.json").read_text() == (
        Path(__file__).parents[2] / "src/cypherturn/experiments/data/questions/fraud.json"
    ).read_text()
    bad = runner.invoke(app, ["qer", "questions", "--datasets", "nowhere"])
    assert isinstance(bad.exception, ConfigError)


def test_cli_generate_appends_model_questions(tmp_path: Path) -> None:
    replies = tmp_path / "writer.json"
    replies.write_text(
        json.dumps(
            [
                "1. Which clients made a payment to a merchant?",
                "Which mules received transfers from more than one client?",
                "Which clients share an SSN with another client and sent money to a mule?",
            ]
        ),
        encoding="utf-8",
    )
    args = ["qer", "questions", "--datasets", "fraud", "--generate", "--count", "1"]
    written = runner.invoke(app, [*args, "--model", f"replay:{replies}", "--out", str(tmp_path)])
    assert written.exit_code == 0, written.output
    extended = load_question_set("fraud", tmp_path)
    added = [q for q in extended.questions if q.source == "model"]
    assert [q.id for q in added] == ["fraud_easy_m01", "fraud_medium_m01", "fraud_hard_m01"]
    assert added[0].question == "Which clients made a payment to a merchant?"
    missing_out = runner.invoke(app, [*args, "--model", f"replay:{replies}"])
    assert isinstance(missing_out.exception, ConfigError)


def test_the_writing_budget_follows_the_count(
    dataset_engine: Callable[[str], GraphEngine],
) -> None:
    engine = dataset_engine("fraud")
    qs = load_question_set("fraud")
    line = "Which clients made a payment to a merchant?"
    model = ReplayChatModel([line] * 4)
    generate_model_questions(qs, model, engine, tiers=("easy",), count=3)
    generate_model_questions(qs, model, engine, tiers=("easy",), count=1)
    generate_model_questions(qs, model, engine, tiers=("easy",), count=3, max_tokens=700)
    budgets = [s["max_tokens"] for s in model.settings]
    assert 3 * TOKENS_PER_QUESTION <= budgets[0] < 512  # three questions' worth, not a page
    assert budgets[1] == budgets[0] - 2 * TOKENS_PER_QUESTION
    assert budgets[2] == 700
    with pytest.raises(ConfigError, match="max_tokens"):
        generate_model_questions(qs, model, engine, count=1, max_tokens=0)


def test_cli_generate_with_the_bundled_model(tmp_path: Path) -> None:
    args = ["qer", "questions", "--datasets", "crime", "--generate", "--count", "2"]
    args += ["--model", "smollm2-135m"]
    written = runner.invoke(app, [*args, "--out", str(tmp_path), "--seed", "1"])
    assert written.exit_code == 0, written.output
    extended = load_question_set("crime", tmp_path)
    packaged = load_question_set("crime")
    added = extended.questions[len(packaged.questions) :]
    assert extended.questions[: len(packaged.questions)] == packaged.questions
    assert added, "the bundled model wrote no usable question in three tiers"
    assert all(q.source == "model" and q.generator_version.endswith(":smollm2-135m") for q in added)
    # what the product guarantees of a kept line, not the model's wording
    assert all(
        q.question[-1] in QUESTION_ENDINGS and len(q.question) >= MIN_QUESTION_CHARS for q in added
    )
    assert len({q.question for q in extended.questions}) == len(extended.questions)
