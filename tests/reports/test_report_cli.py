"""`cypherturn report` end to end on a synthetic run directory scored with the real engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cypherturn.cli import app
from cypherturn.cli._app import console
from cypherturn.errors import DatasetError
from cypherturn.records import RunManifest, read_run
from cypherturn.reports import build_report

runner = CliRunner()


def test_run_directory_layout(run_dir: Path) -> None:
    manifest = RunManifest.model_validate_json((run_dir / "run.json").read_text())
    assert manifest.turns == 2 * 4 * 4 * 3  # models x settings x sessions x turns
    assert manifest.files == {
        "records": "records.jsonl",
        "scores": "scores.jsonl",
        "attempts": "attempts.jsonl",
    }
    stats = manifest.executions
    # Each predicted query ran once; the one malformed query is not rewritten and still runs once.
    assert stats.executions == stats.predicted_queries
    assert stats.fallback_executions == 0
    assert stats.gold_queries == 3


def test_report_markdown_prints_main_table_and_writes_plots(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "_width", 200)
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", str(run_dir), "--out", str(out), "--resamples", "500"])
    assert result.exit_code == 0, result.output
    assert "Main results" in result.output and "alpha" in result.output and "beta" in result.output
    text = (out / "report.md").read_text()
    for title in (
        "## Main results",
        "## EX by phenomenon",
        "## CER by turn position",
        "## Query execution error rate",
    ):
        assert title in text
    for png in ("ex_vs_budget.png", "turn_position.png", "qer_scaling.png"):
        data = (out / "plots" / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
        assert f"plots/{png}" in text


def test_report_numbers_are_the_hand_counted_ones(run_dir: Path) -> None:
    report = build_report([read_run(run_dir)], n_resamples=500)
    by_system = {(s.model, s.protocol.value, s.budget_multiplier): s for s in report.summaries}
    alpha = by_system[("alpha", "agentic", 3)]
    # alpha agentic: ggg ggw gwg ggg -> 10 of 12 turns correct, 2 sessions fully correct of 4.
    assert alpha.ex == pytest.approx(10 / 12)
    assert alpha.sem == pytest.approx(2 / 4)
    # alpha's only failures are T3 after a correct T2, and T2 followed by a correct T3: CER 0/1.
    assert alpha.cer == 0.0
    beta = by_system[("beta", "agentic", 3)]
    # beta: gww wwg gxw w-- -> correct: T1 s0, T3 s1, T1 s2 = 3 of 12; the cliff turns are 2.
    assert beta.ex == pytest.approx(3 / 12)
    assert beta.ex_excl_cliff == pytest.approx(3 / 10)
    assert beta.exhaustion_rate == pytest.approx(1 / 4)
    assert beta.qer == pytest.approx(1 / 12)
    assert report.ex_ci["alpha agentic x3"].low <= alpha.ex <= report.ex_ci["alpha agentic x3"].high


@pytest.mark.parametrize("fmt", ["html", "json"])
def test_other_formats(fmt: str, run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / fmt
    result = runner.invoke(
        app, ["report", str(run_dir), "-f", fmt, "-o", str(out), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    written = (out / f"report.{fmt}").read_text()
    if fmt == "html":
        assert "<table>" in written and "plots/qer_scaling.png" in written
    else:
        data = json.loads(written)
        assert {s["model"] for s in data["summaries"]} == {"alpha", "beta"}
        assert data["tables"][0]["name"] == "main"


def test_bad_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        DatasetError, match=r"none of scores\.jsonl, attempts\.jsonl, answers\.jsonl"
    ):
        read_run(tmp_path)
    (tmp_path / "scores.jsonl").write_text('{"not": "a score"}\n')
    with pytest.raises(DatasetError, match=r"scores\.jsonl:1: not a valid TurnScore"):
        read_run(tmp_path)
