"""`cypherturn bench build | stats | show | import` through the Typer sub-app."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cypherturn.cli._bench import bench_app
from cypherturn.errors import DatasetError
from cypherturn.graph import EmbeddedFalkorDB, open_engine
from cypherturn.sessions import read_sessions

RELEASE = Path(__file__).parent / "official"


@pytest.fixture
def cli(embedded_server: EmbeddedFalkorDB) -> Iterator[typer.Typer]:
    app = typer.Typer()
    app.add_typer(bench_app)
    yield app
    for graph in ("cypherturn_bench_magic_academy", "cypherturn_official_tiny"):
        engine = open_engine(None, graph)
        engine.drop()
        engine.close()


def test_build_stats_show(cli: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "bench.jsonl"
    built = runner.invoke(
        cli,
        [
            "bench",
            "build",
            "--worlds",
            "magic_academy",
            "--sessions",
            "4",
            "--seed",
            "3",
            "--out",
            str(out),
        ],
    )
    assert built.exit_code == 0, built.output
    assert "4 sessions" in built.output and "phenomena" in built.output
    assert "engine-divergence class: parallel_edges 0, exists_pattern 0" in built.output
    sessions = read_sessions(out)
    assert len(sessions) == 4 and {s.world for s in sessions} == {"magic_academy"}
    assert sum(len(s.turns) for s in sessions) == round(4 * 5927 / 721)

    stats = runner.invoke(cli, ["bench", "stats", str(out), "--json"])
    assert stats.exit_code == 0, stats.output
    payload = json.loads(stats.output)
    assert payload["sessions"] == 4 and payload["worlds"]["magic_academy"]["sessions"] == 4

    session = sessions[0]
    shown = runner.invoke(cli, ["bench", "show", str(out), session.session_id])
    assert shown.exit_code == 0, shown.output
    assert session.session_id in shown.output and "turn 1" in shown.output
    assert session.turns[0].utterance.split()[0] in shown.output

    missing = runner.invoke(cli, ["bench", "show", str(out), "nope"])
    assert isinstance(missing.exception, DatasetError)


def test_import_reports_reproduction(cli: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "official.jsonl"
    source = RELEASE / "data" / "scenarios" / "tiny_sessions.json"
    result = runner.invoke(
        cli, ["bench", "import", str(source), "--out", str(out)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    # The table's width is the console's (80 columns when its width was fixed before
    # COLUMNS was set, as in a test worker): no line is wider, and no name is cut.
    output = result.output.replace("\n", "")
    assert "2 sessions, 9 turns written" in output
    assert "…" not in result.output and "│ tiny_sessions.json" in result.output
    assert "why, top reasons: tiny_sessions.json: ORDER BY" in result.output
    # sessions, turns, reproduced, non-deterministic, differ, errors
    assert re.search(r"│\s+2 │\s+9 │\s+4 │\s+2 │\s+2 │\s+1 │", result.output), result.output
    imported = read_sessions(out)
    assert [len(s.turns) for s in imported] == [6, 3] and all(
        s.source == "official" for s in imported
    )
    labels = [t.import_check.status for s in imported for t in s.turns if t.import_check]
    assert len(labels) == 9 and labels.count("nondeterministic") == 2, "stored in the file"
    no_check = runner.invoke(cli, ["bench", "import", str(source), "--out", str(out), "--no-check"])
    assert no_check.exit_code == 0, no_check.output
    assert "reproduced" not in no_check.output
