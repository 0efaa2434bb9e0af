"""`cypherturn ask` and `cypherturn load` end to end: real engine, replay or bundled model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.cli import main
from cypherturn.cli._exit import ExitCode
from cypherturn.graph import GraphEngine

FAILING = "MATCH (p:Person RETURN p.name"
REPAIRED = "MATCH (p:Person) RETURN p.name AS name ORDER BY name"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the console entry point in-process; return (exit code, stdout, stderr)."""
    old = sys.argv
    sys.argv = ["cypherturn", *args]
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine()
    engine.write("CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'})")
    return engine


def replay_file(tmp_path: Path, *responses: str) -> str:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(list(responses)))
    return f"replay:{path}"


def test_ras_trace_shows_the_engine_error_then_the_repaired_rows(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = replay_file(tmp_path, f"```cypher\n{FAILING}\n```", REPAIRED)
    ask = ["ask", "Who are the people?", "--graph", people.graph, "-n", "4"]
    code, out, _ = run_cli(capsys, *ask, "--model", model)
    assert code == 0, out
    assert "attempt 1/4" in out and "attempt 2/4" in out and "attempt 3/4" not in out
    assert "syntax" in out and "Invalid input" in out
    assert "Ada" in out and "Alan" in out and "2 rows" in out
    # with the vote part, the trace says how many candidates agree
    model = replay_file(tmp_path, f"```cypher\n{FAILING}\n```", REPAIRED, REPAIRED)
    code, out, _ = run_cli(capsys, *ask, "--model", model, "--strategy", "ras+:+vote")
    assert code == 0, out
    assert "attempt 3/4" in out and "attempt 4/4" not in out
    assert "first answer with these rows" in out and "2 of the answers so far" in out


def test_json_record_holds_every_attempt(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = replay_file(tmp_path, FAILING, REPAIRED)
    code, out, _ = run_cli(
        capsys,
        "ask",
        "Who?",
        "--graph",
        people.graph,
        "--model",
        model,
        "--strategy",
        "ras",
        "--json",
    )
    record = json.loads(out)
    assert code == 0
    assert [a["outcome"] for a in record["attempts"]] == ["error", "ok"]
    assert record["attempts"][0]["error_class"] == "syntax"
    assert record["final_result"]["rows"] == [["Ada"], ["Alan"]]
    assert record["strategy"] == "ras" and record["success"] is True


def test_no_executable_query_exits_3_and_a_write_changes_nothing(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = replay_file(
        tmp_path, "MATCH (p:Person) DETACH DELETE p", "CREATE (:Person {name: 'Eve'})"
    )
    code, out, _ = run_cli(
        capsys, "ask", "Delete everyone", "--graph", people.graph, "--model", model, "-n", "2"
    )
    assert code == ExitCode.NO_EXECUTABLE_QUERY == 3
    assert out.count("write_refused") == 2 and "no executable query" in out
    assert people.execute("MATCH (p:Person) RETURN count(p)").rows == [[2]]


def test_load_then_ask_on_a_synthetic_world(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = "cli_magic_academy"
    code, out, _ = run_cli(capsys, "load", "magic_academy", "--graph", graph)
    assert code == 0, out
    assert "378" in out
    code, out, _ = run_cli(capsys, "load", "magic_academy", "--graph", graph)
    assert code == 0 and "378" in out
    model = replay_file(tmp_path, "MATCH (s:Student) RETURN count(s) AS students")
    code, out, _ = run_cli(
        capsys, "ask", "How many students?", "--graph", graph, "--model", model, "-n", "1"
    )
    assert code == 0 and "1 rows" in out


def _cypherturn(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed command line in a child process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "cypherturn", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CYPHERTURN_HOME": str(home)},
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "q", "--graph", "atlantis", "--model", "replay:/nonexistent.json"], "error"),
        (["ask", "q", "--graph", "atlantis"], "not a known world"),
        (["ask", "q", "--model", "default", "--base-url", "http://127.0.0.1:9"], "--base-url"),
        (["ask", "q", "--model", "openai:m", "--n-ctx", "8192"], "--n-ctx"),
        (["ask", "q", "--strategy", "best"], "unknown strategy"),
        (["ask", "q", "--model", "llama:7b"], "unknown model spec"),
        (["ask", "q", "--engine", "bolt://127.0.0.1:1"], "error"),
        (["load", "atlantis"], "unknown graph"),
        (["load"], "name a world"),
    ],
)
def test_bad_input_is_a_clear_message_and_exit_1_without_traceback(
    args: list[str], message: str, cypherturn_home: Path
) -> None:
    done = _cypherturn(args, cypherturn_home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_load_official_graph_files_then_refuse_a_bad_combination(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tiny = Path(__file__).parent.parent / "worlds" / "official_tiny"
    args = [
        "load",
        "--cypher-script",
        str(tiny / "data.cypher"),
        "--schema",
        str(tiny / "schema.json"),
    ]
    code, out, _ = run_cli(capsys, *args, "--name", "cli_tiny_academy")
    assert code == 0, out
    assert "graph cli_tiny_academy" in out
    row = next(line for line in out.splitlines() if line.startswith("│"))
    assert [cell.strip() for cell in row.strip("│").split("│")][:2] == ["8", "9"]
    code, _, err = run_cli(capsys, *args)
    assert code == 1 and "--cypher-script needs --schema and --name" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["bench", "run", "b.jsonl", "--out", "r", "--budget", "0"],
            "Invalid value for '--budget'",
        ),
        (["bench", "run", "b.jsonl", "--out", "r", "--bogus"], "No such option: --bogus"),
        (["qer", "run", "--out", "q", "--runs", "0"], "Invalid value for '--runs'"),
        (["ask", "q", "--temperature", "hot"], "Invalid value for '--temperature'"),
    ],
)
def test_bad_option_values_are_usage_errors_exit_2_without_traceback(
    args: list[str], message: str, cypherturn_home: Path
) -> None:
    done = _cypherturn(args, cypherturn_home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
