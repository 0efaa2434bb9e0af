"""`cypherturn bench ask` end to end: real engine, replay model, resume, refusals, report and viewer."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.cli import main
from cypherturn.graph import GraphEngine
from cypherturn.records import AskAnswer, DataSplit, GoldStatus, Harness, read_run
from cypherturn.reports import build_report, write_report
from cypherturn.viewer import read_page

GOLD_COUNT = "MATCH (p:Person) RETURN count(p) AS people"
GOLD_NAMES = "MATCH (p:Person) WHERE p.born < date('1900-01-01') RETURN p.name AS name"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
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
    engine = make_engine("people")
    engine.write(
        "CREATE (:Person {name: 'Ada', born: date('1815-12-10')}),"
        " (:Person {name: 'Alan', born: date('1912-06-23')})"
    )
    return engine


@pytest.fixture
def question_file(tmp_path: Path, people: GraphEngine) -> Path:
    """Three questions: a kept gold, a gold written with a date as text (repaired), a broken one."""
    lines = [
        {"id": "count", "question": "how many people?", "cypher": GOLD_COUNT, "category": "agg"},
        {"id": "old", "question": "who was born before 1900?", "category": "filter",
         "cypher": "MATCH (p:Person) WHERE p.born = '10/12/1815' RETURN p.name AS name"},
        {"id": "broken", "question": "who?", "cypher": "MATCH (p:Person RETURN p"},
    ]  # fmt: skip
    path = tmp_path / "questions.jsonl"
    path.write_text(
        "".join(json.dumps({**line, "graph": people.graph}) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def replies(tmp_path: Path, *queries: str) -> str:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps([f"```cypher\n{q}\n```" for q in queries]), encoding="utf-8")
    return f"replay:{path}"


def answers_of(out: Path) -> list[AskAnswer]:
    return [
        AskAnswer.model_validate_json(line)
        for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def test_scores_resumes_reports_and_refuses_changed_settings(
    tmp_path: Path, question_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    model = replies(
        tmp_path,
        GOLD_COUNT,  # single, count: the gold
        "MATCH (p:Person) RETURN p.name AS who",  # single, old: wrong rows
        "MATCH (p:Person RETURN count(p)",  # ras, count: a syntax error ...
        "MATCH (p:Person) RETURN count(p) AS n",  # ... then the right rows, another name
        "MATCH (p:Person) WHERE p.name = 'Ada' RETURN p.name AS name",  # ras, old: right
    )
    args = ["bench", "ask", str(question_file), "--out", str(out), "--model", model]
    args += ["--strategy", "single,ras", "-n", "2", "--prompt", "v1"]
    code, stdout, stderr = run_cli(capsys, *args)
    assert code == 0, stdout + stderr
    assert "golds: 1 kept, 1 repaired, 1 excluded (string_date 1, engine_error 1)" in stdout
    found = answers_of(out)
    assert [(a.strategy, a.question_id, a.executable, a.ex, a.ex_relaxed, a.attempts) for a in found] == [
        ("single", "count", True, 1, 1, 1),
        ("single", "old", True, 0, 0, 1),
        ("ras", "count", True, 0, 1, 2),
        ("ras", "old", True, 1, 1, 1),
    ]  # fmt: skip
    assert {(a.harness, a.split, a.prompt, a.budget) for a in found} == {
        (Harness.PAPER, DataSplit.DEVELOPMENT, "v1", 2)
    }
    assert found[1].gold_status is GoldStatus.REPAIRED
    golds = [json.loads(line) for line in (out / "golds.jsonl").read_text().splitlines()]
    assert [g["status"] for g in golds] == ["kept", "repaired", "excluded"]

    # Done answers are skipped: with no replies left, a re-asked question would fail.
    model_path = Path(model.removeprefix("replay:"))
    model_path.write_text("[]", encoding="utf-8")
    code, stdout, stderr = run_cli(capsys, *args)
    assert code == 0, stdout + stderr
    assert "0 answered, 4 already done" in stdout and len(answers_of(out)) == 4

    # A line torn by a kill is dropped and only that question is asked again.
    lines = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "answers.jsonl").write_text(
        "\n".join(lines[:3]) + "\n" + lines[3][:50], encoding="utf-8"
    )
    model_path.write_text(json.dumps(["MATCH (p:Person) RETURN p.name AS name"]), encoding="utf-8")
    code, stdout, stderr = run_cli(capsys, *args)
    assert code == 0, stdout + stderr
    again = answers_of(out)
    assert again[:3] == found[:3] and (again[3].question_id, again[3].ex_relaxed) == ("old", 0)

    code, _, stderr = run_cli(capsys, *args[:-4], "-n", "3", "--prompt", "v1")
    assert code == 1 and "budget" in stderr and "Traceback" not in stderr
    code, _, stderr = run_cli(capsys, *args[:7], "--strategy", "best")
    assert code == 1 and "unknown strategy 'best'" in stderr and "Traceback" not in stderr

    report = build_report([read_run(out)], n_resamples=200)
    main_table = next(t for t in report.tables if t.name == "ask")
    assert [row[0] for row in main_table.rows] == [f"{model} single@2 v1", f"{model} ras@2 v1"]
    assert main_table.rows[0][5] == "0.500 [0.095, 0.905]"  # EX 1 of 2, Wilson
    names = [t.name for t in report.tables]
    assert {"ask_graph", "ask_category", "ask_pairs", "ask_golds"} <= set(names)
    golds_row = next(t for t in report.tables if t.name == "ask_golds").rows[0]
    assert golds_row[1:5] == [3, 1, 1, 1]
    assert [(p.system, p.n, p.ex[0], p.ex_relaxed[0]) for p in report.ask_points] == [
        (f"{model} single@2 v1", 2, 0.5, 0.5),
        (f"{model} ras@2 v1", 2, 0.0, 0.5),  # "old" was re-asked and answered wrong
    ]
    assert (
        write_report(report, tmp_path / "report")
        and (tmp_path / "report" / "plots" / "ask_accuracy.png").stat().st_size > 0
    )
    page = read_page(out)
    assert page.kind == "ask" and sum(len(g.items) for g in page.groups) == 4


def test_a_file_labelled_on_another_graph_build_is_refused(
    tmp_path: Path, question_file: Path, people: GraphEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    labelled = tmp_path / "labelled.jsonl"
    code, stdout, stderr = run_cli(
        capsys, "bench", "ask-import", str(question_file), "-o", str(labelled)
    )
    assert code == 0, stdout + stderr
    assert "1 kept, 1 repaired, 1 excluded" in stdout
    people.write("CREATE (:Person {name: 'Grace', born: date('1906-12-09')})")
    out = tmp_path / "run"
    code, _, stderr = run_cli(
        capsys, "bench", "ask", str(labelled), "--out", str(out), "--model", replies(tmp_path)
    )
    assert code == 1 and "question count" in stderr and "relabel it" in stderr
    assert "Traceback" not in stderr


def test_a_missing_set_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, stderr = run_cli(
        capsys, "bench", "ask", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")
    )
    assert code == 1 and "not a packaged ask set" in stderr and "Traceback" not in stderr


SLOW_GOLD = "UNWIND range(1, 4000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x) AS sevens"


def test_a_gold_has_its_own_timeout(
    tmp_path: Path, people: GraphEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gold slower than a generated query may be is still a gold; past the gold timeout it is named."""
    source = tmp_path / "slow.jsonl"
    line = {
        "id": "slow",
        "question": "how many sevens?",
        "cypher": SLOW_GOLD,
        "graph": people.graph,
    }
    source.write_text(json.dumps(line) + "\n", encoding="utf-8")
    labelled = tmp_path / "labelled.jsonl"
    code, stdout, stderr = run_cli(capsys, "bench", "ask-import", str(source), "-o", str(labelled))
    assert code == 0 and "1 kept" in stdout, stdout + stderr

    out = tmp_path / "run"
    args = ["bench", "ask", str(labelled), "--out", str(out), "--strategy", "single"]
    code, stdout, stderr = run_cli(
        capsys, *args, "--model", replies(tmp_path, SLOW_GOLD), "--timeout", "0.05"
    )
    assert code == 0, stdout + stderr
    (answer,) = answers_of(out)
    assert answer.gold_status is GoldStatus.KEPT and not answer.executable
    assert json.loads((out / "ask.json").read_text())["gold_timeout_s"] == 120.0

    code, _, stderr = run_cli(
        capsys, *args[:3], "--out", str(tmp_path / "run2"), "--model", replies(tmp_path),
        "--gold-timeout", "0.05",
    )  # fmt: skip
    assert code == 1 and "ran past the gold timeout" in stderr and "--gold-timeout" in stderr
    assert "Traceback" not in stderr


def test_a_run_made_under_another_meaning_of_ras_plus_is_not_resumed(
    tmp_path: Path, question_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["bench", "ask", str(question_file), "--out", str(out), "--strategy", "ras+", "-n", "1"]
    code, stdout, stderr = run_cli(
        capsys, *args, "--model", replies(tmp_path, GOLD_COUNT, GOLD_NAMES)
    )
    assert code == 0, stdout + stderr
    # as written before `vote` left the default: the same name, other parts
    lines = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    old = []
    for line in lines:
        record = json.loads(line)
        record["result"]["grounding"]["vote"] = True
        old.append(json.dumps(record))
    (out / "answers.jsonl").write_text("\n".join(old) + "\n", encoding="utf-8")
    code, _, stderr = run_cli(capsys, *args, "--model", replies(tmp_path))
    assert code == 1 and "other parts (+vote)" in stderr and "Traceback" not in stderr
