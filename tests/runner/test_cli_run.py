"""`cypherturn bench run` on a built benchmark with a replay model: run, score, resume, refuse."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cypherturn.api import official_graph_name
from cypherturn.cli._bench import bench_app
from cypherturn.cli._exit import ExitCode
from cypherturn.errors import ConfigError
from cypherturn.graph import EmbeddedFalkorDB, open_engine
from cypherturn.records import SCORES_FILE, TurnScore, read_jsonl
from cypherturn.sessions import Session, Turn, read_sessions


@pytest.fixture
def cli(embedded_server: EmbeddedFalkorDB) -> Iterator[typer.Typer]:
    app = typer.Typer()
    app.add_typer(bench_app)
    yield app
    for graph in ("cypherturn_bench_magic_academy", "cypherturn_run_magic_academy_s0_x1"):
        engine = open_engine(None, graph)
        engine.drop()
        engine.close()


def _build(cli: typer.Typer, tmp_path: Path, sessions: int) -> tuple[Path, list[Session]]:
    """A magic_academy benchmark of ``sessions`` sessions built by ``bench build``."""
    bench = tmp_path / "bench.jsonl"
    built = CliRunner().invoke(
        cli,
        ["bench", "build", "--worlds", "magic_academy", "-n", str(sessions), "--out", str(bench)],
    )
    assert built.exit_code == 0, built.output
    return bench, read_sessions(bench)


def _gold_replies(path: Path, turns: list[Turn], *, tools: bool = False) -> str:
    """A replay file submitting each turn's gold query at once; returns its model spec."""
    if tools:
        calls = [{"name": "SUBMIT_ANSWER", "arguments": {"query": t.gold_cypher}} for t in turns]
        lines = [json.dumps({"tool_calls": [call]}) for call in calls]
    else:
        actions = [{"action": "SUBMIT_ANSWER", "input": t.gold_cypher} for t in turns]
        lines = [json.dumps(json.dumps(action)) for action in actions]
    path.write_text("\n".join(lines), encoding="utf-8")
    return f"replay:{path}"


def test_bench_run_scores_and_resumes(cli: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    bench, sessions = _build(cli, tmp_path, 2)
    # a model that submits the gold query at once: every turn must score EX = 1
    model = _gold_replies(tmp_path / "replies.jsonl", [t for s in sessions for t in s.turns])
    out = tmp_path / "run"
    args = ["bench", "run", str(bench), "--out", str(out), "--model", model]
    first = runner.invoke(cli, [*args, "--protocol", "agentic", "--budget", "3"])
    assert first.exit_code == 0, first.output
    assert "2/2 sessions completed (2 played, 0 resumed," in first.output
    assert "EX 1.000 over" in first.output
    scores = list(read_jsonl(out / SCORES_FILE, TurnScore))
    assert len(scores) == sum(len(s.turns) for s in sessions)
    assert all(s.ex == 1 for s in scores if s.valid)
    assert {s.record.protocol.value for s in scores} == {"agentic"}

    again = runner.invoke(cli, [*args, "--protocol", "agentic", "--budget", "3"])
    assert again.exit_code == 0, again.output
    assert "(0 played, 2 resumed," in again.output

    changed = runner.invoke(cli, [*args, "--protocol", "agentic", "--budget", "5"])
    assert isinstance(changed.exception, ConfigError)
    assert "different configuration" in str(changed.exception)


def test_bench_run_with_native_tool_calls(cli: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    bench, (session,) = _build(cli, tmp_path, 1)
    model = _gold_replies(tmp_path / "calls.jsonl", session.turns, tools=True)
    out = tmp_path / "run"
    args = ["bench", "run", str(bench), "--out", str(out), "--model", model]
    result = runner.invoke(cli, [*args, "--action-format", "tools"])
    assert result.exit_code == 0, result.output
    assert "EX 1.000 over" in result.output
    config = json.loads((out / "bench_config.json").read_text(encoding="utf-8"))
    assert config["settings"]["action_format"] == "tools"

    nonsense = runner.invoke(cli, [*args, "--protocol", "nonsense", "--out", str(tmp_path / "y")])
    assert "unknown protocol 'nonsense'; choose from guided, agentic" in str(nonsense.exception)
    bad = runner.invoke(cli, [*args, "--action-format", "xml", "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0 and "unknown action format 'xml'; choose from text, tools" in str(
        bad.exception
    )


def test_bench_run_plays_imported_official_sessions(cli: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    release = Path(__file__).parents[1] / "sessions" / "official"
    imported = tmp_path / "official.jsonl"
    source = release / "data" / "scenarios" / "tiny_sessions.json"
    done = runner.invoke(
        cli, ["bench", "import", str(source), "--out", str(imported), "--no-check"]
    )
    assert done.exit_code == 0, done.output
    graph = open_engine(None, official_graph_name("tiny"))
    graph.drop()
    graph.close()
    turns = [t for s in read_sessions(imported) for t in s.turns]
    model = _gold_replies(tmp_path / "replies.jsonl", turns)
    args = ["bench", "run", str(imported), "--model", model]

    unloaded = runner.invoke(cli, [*args, "--out", str(tmp_path / "a")])
    assert isinstance(unloaded.exception, ConfigError)
    assert "official graph 'tiny' is not loaded" in str(unloaded.exception)

    ran = runner.invoke(cli, [*args, "--out", str(tmp_path / "b"), "--release", str(release)])
    assert ran.exit_code == 0, ran.output
    assert "2/2 sessions completed" in ran.output and "EX 1.000 over" in ran.output


def test_bench_run_exits_with_sessions_lost_when_sessions_are_lost(
    cli: typer.Typer, tmp_path: Path
) -> None:
    runner = CliRunner()
    bench, (session,) = _build(cli, tmp_path, 1)
    # one reply: the replay is exhausted at turn 2
    model = _gold_replies(tmp_path / "short.jsonl", session.turns[:1])
    out = tmp_path / "run"
    args = ["bench", "run", str(bench), "--out", str(out), "--model", model]
    lost = runner.invoke(cli, [*args, "--release", str(tmp_path)])
    assert lost.exit_code == ExitCode.SESSIONS_LOST == 4, lost.output
    assert "--release is ignored" in lost.output
    assert "1 sessions lost to infrastructure failures" in lost.output
    kept = json.loads((out / "infra_failures.json").read_text(encoding="utf-8"))
    assert [f["session_id"] for f in kept] == [session.session_id]
