"""Each long-running command exits with the codes README's "Exit codes" table documents.

0, 1, 2 and 3 are checked here in process; 4 (SESSIONS_LOST) in
``tests/runner/test_cli_run.py``; 130 (Ctrl-C) and 143 (SIGTERM), with work in
flight, in ``tests/reliability/test_signals.py`` (``chat``, ``ask``) and
``tests/reliability/test_kill_resume.py`` (``bench run``, ``qer run``).
"""

from __future__ import annotations

import io
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.cli import main
from cypherturn.cli._exit import ExitCode
from cypherturn.graph import GraphEngine

README = Path(__file__).resolve().parents[2] / "README.md"
GOOD = "MATCH (p:Person) RETURN count(p) AS n"
SLOW = "MATCH (a:Person), (b:Person), (c:Person), (d:Person), (e:Person) RETURN count(*) AS n"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the console entry point in process; return (exit code, stdout, stderr)."""
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
    engine = make_engine("exits")
    engine.write("UNWIND range(1, 200) AS i CREATE (:Person {name: 'p' + toString(i)})")
    return engine


def replay(tmp_path: Path, *responses: str) -> str:
    path = tmp_path / f"replay-{len(list(tmp_path.glob('replay-*')))}.json"
    path.write_text(json.dumps(list(responses)))
    return f"replay:{path}"


def test_the_table_documents_every_code_and_the_signals(tmp_path: Path) -> None:
    section = README.read_text(encoding="utf-8").split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\d+)` \| `(\w+)` \|", section, re.MULTILINE))
    assert rows == {str(int(code)): code.name for code in ExitCode}
    assert "SIGTERM" in section and "Ctrl-C" in section


def test_ask_exits_0_1_2_and_3(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["ask", "How many people?", "--no-answer"]
    ok = run_cli(capsys, *base, "--graph", people.graph, "--model", replay(tmp_path, GOOD))
    assert ok[0] == ExitCode.OK, ok
    missing = run_cli(capsys, *base, "--graph", "no_such_graph_here", "--model", "replay:x.json")
    assert missing[0] == ExitCode.ERROR and "error:" in missing[2]
    usage = run_cli(capsys, *base, "-n", "0")
    assert usage[0] == ExitCode.USAGE
    written = "CREATE (:Person {name: 'Eve'})"
    refused = run_cli(
        capsys, *base, "--graph", people.graph, "-n", "1", "--model", replay(tmp_path, written)
    )
    assert refused[0] == ExitCode.NO_EXECUTABLE_QUERY and "write_refused" in refused[1]


def test_ask_with_no_answer_within_its_time_budget_exits_3_with_the_reason(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every query would run for minutes: their timeouts are clamped to the budget's rest
    started = time.monotonic()
    code, out, _ = run_cli(
        capsys, "ask", "How many people?", "--graph", people.graph, "--strategy", "ras",
        "--model", replay(tmp_path, *[SLOW] * 5), "--max-seconds", "4", "--json",
    )  # fmt: skip
    wall = time.monotonic() - started
    record = json.loads(out)
    assert code == ExitCode.NO_EXECUTABLE_QUERY
    assert record["success"] is False and record["config"]["max_seconds"] == 4
    assert record["stop_reason"].startswith("the time budget of 4 s was spent")
    assert all(a["error_class"] == "timeout" for a in record["attempts"])
    assert record["elapsed_s"] < 4.0
    assert wall < 10.0  # loading the replay model and opening the graph included


def test_chat_exits_0_on_quit_and_end_of_input_1_on_bad_input_and_2_on_usage(
    people: GraphEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = ["chat", "--graph", people.graph, "--out", str(tmp_path / "chats")]
    for typed in ("/quit\n", ""):  # /quit, then Ctrl-D (end of input)
        monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
        code, out, _ = run_cli(capsys, *base, "--model", replay(tmp_path))
        assert code == ExitCode.OK and "transcript saved" in out
    bad = run_cli(capsys, "chat", "--graph", "bolt://localhost:1", "--model", replay(tmp_path))
    assert bad[0] == ExitCode.ERROR and "#GRAPH" in bad[2]
    assert run_cli(capsys, *base, "--budget", "0")[0] == ExitCode.USAGE


def test_a_chat_turn_with_no_answer_within_its_budget_says_so(
    people: GraphEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("How many people are there?\n/quit\n"))
    code, out, _ = run_cli(
        capsys, "chat", "--graph", people.graph, "--out", str(tmp_path / "chats"),
        "--strategy", "ras", "--max-seconds", "3", "--model", replay(tmp_path, *[SLOW] * 5),
    )  # fmt: skip
    shown = " ".join(out.split())  # the console wraps lines at its width
    assert code == ExitCode.OK
    assert (
        "this graph cannot answer that: no generated query executed within the time budget (the time budget of 3 s was spent"
        in shown
    ), shown


@pytest.mark.parametrize("command", [["bench", "run"], ["qer", "run"]])
def test_batch_runs_exit_1_on_bad_input_and_2_on_usage(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if command == ["bench", "run"]:
        bad = [*command, str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "run")]
        usage = [*command, str(tmp_path / "missing.jsonl"), "--out", "x", "--budget", "0"]
    else:
        bad = [*command, "--datasets", "atlantis", "--out", str(tmp_path / "run")]
        usage = [*command, "--runs", "0", "--out", str(tmp_path / "run")]
    code, _, err = run_cli(capsys, *bad)
    assert code == ExitCode.ERROR and "error:" in err and "Traceback" not in err
    assert run_cli(capsys, *usage)[0] == ExitCode.USAGE
