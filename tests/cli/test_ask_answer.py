"""`cypherturn ask`'s answer in words (`--no-answer`, `--json`) and `cypherturn chat`'s bad inputs.

Real engine, replay model, the console entry point in-process (or as a child
process for the exit codes and messages a user sees).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.answers import unsupported_numbers
from cypherturn.cli import main
from cypherturn.graph import GraphEngine, QueryResult

PEOPLE = "MATCH (p:Person) RETURN p.name AS name, p.born AS born ORDER BY name"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
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
    engine = make_engine("askanswer")
    engine.write("CREATE (:Person {name: 'Ada', born: 1815}), (:Person {name: 'Alan', born: 1912})")
    return engine


def _replay(tmp_path: Path, *responses: str) -> str:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(list(responses)))
    return f"replay:{path}"


def _ask(people: GraphEngine, model: str, *extra: str) -> list[str]:
    return ["ask", "Who are the people?", "--graph", people.graph, "--model", model, *extra]


def test_ask_prints_the_answer_beside_the_rows(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _replay(tmp_path, PEOPLE, "Ada, born in 1815, and Alan, born in 1912.")
    code, out, _ = _run(capsys, *_ask(people, model))
    assert code == 0, out
    assert "2 rows" in out and "Answer: Ada, born in 1815, and Alan, born in 1912." in out
    assert out.index("2 rows") < out.index("Answer:")


def test_an_unsupported_number_shows_the_templated_answer(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _replay(tmp_path, PEOPLE, "There are 3 people: Ada and Alan.")
    code, out, _ = _run(capsys, *_ask(people, model))
    assert code == 0
    assert "numbers not in the rows: 3" in out
    assert "Answer: 2 results: Ada (born: 1815); Alan (born: 1912)." in out
    assert "There are 3 people" not in out


def test_no_answer_skips_the_model_call(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one response only: an answer call would exhaust the replay and be reported
    model = _replay(tmp_path, PEOPLE)
    code, out, _ = _run(capsys, *_ask(people, model, "--no-answer"))
    assert code == 0 and "2 rows" in out
    assert "Answer" not in out and "model failed" not in out


def test_json_carries_tokens_and_seconds_of_each_attempt_and_the_answer(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _replay(tmp_path, "MATCH (p:Person RETURN p", PEOPLE, "Ada and Alan.")
    code, out, _ = _run(capsys, *_ask(people, model, "-n", "3", "--json"))
    record = json.loads(out)
    assert code == 0 and record["success"] is True
    assert [a["outcome"] for a in record["attempts"]] == ["error", "ok"]
    for attempt in record["attempts"]:
        assert attempt["prompt_tokens"] > 0 and attempt["completion_tokens"] > 0
        assert attempt["model_latency_s"] >= 0 and attempt["execution_latency_s"] >= 0
    answer = record["answer"]
    assert answer["source"] == "model" and answer["text"] == "Ada and Alan."
    assert answer["tokens"] > 0 and answer["prompt_tokens"] > 0 and answer["seconds"] >= 0
    assert answer["numbers_checked"] == [] and answer["unsupported"] == []
    assert record["seconds"] >= answer["seconds"]
    rows = QueryResult.model_validate(record["final_result"])
    assert unsupported_numbers(answer["text"], rows) == []


def test_json_without_answer_has_a_null_answer(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _replay(tmp_path, PEOPLE)
    code, out, _ = _run(capsys, *_ask(people, model, "--json", "--no-answer"))
    assert code == 0 and json.loads(out)["answer"] is None


def test_a_result_no_stored_data_matches_is_said_plainly_not_answered(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'Grace' is stored nowhere: the count of 0 is no answer, and no answer is written
    grace = "MATCH (p:Person {name: 'Grace'}) RETURN count(p) AS people"
    model = _replay(tmp_path, grace, grace)
    code, out, _ = _run(capsys, *_ask(people, model, "-n", "2"))
    assert code == 0
    assert "This graph cannot answer that: no stored data matches it" in out
    assert "Answer" not in out
    json_model = _replay(tmp_path, grace, grace)
    code, out, _ = _run(capsys, *_ask(people, json_model, "-n", "2", "--json"))
    record = json.loads(out)
    assert record["answer"] is None and "'Grace'" in record["problem"]


def _cypherturn(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cypherturn", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CYPHERTURN_HOME": str(home)},
        timeout=120,
        input="",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chat", "--graph", "atlantis", "--model", "replay:/x.json"], "not a known world"),
        (["chat", "--resume", "/nonexistent/chat.json"], "cannot read chat transcript"),
        (["chat", "--graph", "falkordb://localhost:6379"], "without a graph"),
        (["chat", "--strategy", "best", "--model", "replay:/x.json"], "unknown strategy"),
        (["chat", "--model", "llama:7b"], "unknown model spec"),
    ],
)
def test_chat_bad_input_is_one_clear_line_and_exit_1(
    args: list[str], message: str, cypherturn_home: Path, tmp_path: Path
) -> None:
    done = _cypherturn([*args, "--out", str(tmp_path)], cypherturn_home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
