"""The `ask` accuracy set: it loads, covers the three datasets, and every gold is sound on the real graph.

Each gold runs on the real embedded FalkorDB with its dataset loaded: it returns
between 1 and 20 rows, re-execution reproduces it (EX 1 against itself), and
every ORDER BY ... LIMIT k is probed at the cut (the sessions audit's
:func:`probe_ties`): the k-th and (k+1)-th rows must differ on the sort keys.
The benchmark (``benchmarks/bench_ask_accuracy.py``) is played end to end with a
replay model on the real Fraud graph: scores, resume, and refused settings.
"""

from __future__ import annotations

import json
import runpy
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cypherturn.cypher import output_order
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments import (
    ASK_PHENOMENA,
    DATASETS,
    TIERS,
    AskQuestion,
    load_ask_set,
    read_ask_file,
)
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, GraphEngine
from cypherturn.metrics import ex_scores
from cypherturn.sessions import probe_ties
from cypherturn.worlds import get_world, load_world

QUESTIONS = load_ask_set()
MAX_GOLD_ROWS = 20
BENCH = Path(__file__).parents[2] / "benchmarks" / "bench_ask_accuracy.py"


@pytest.fixture(scope="module")
def graphs(embedded_server: EmbeddedFalkorDB) -> Iterator[dict[str, GraphEngine]]:
    """POLE, Healthcare and Fraud (default scale and seed) loaded once for this module."""
    engines: dict[str, FalkorDBEngine] = {}
    for graph in sorted({q.graph for q in QUESTIONS}):
        name = f"ask_{graph}_{uuid.uuid4().hex[:8]}"
        engine = FalkorDBEngine(embedded_server.client(), name, spec=f"embedded#{name}")
        load_world(engine, get_world(graph), replace=True)
        engines[graph] = engine
    yield dict(engines)
    for engine in engines.values():
        engine.drop()
        engine.close()


def test_set_covers_three_datasets_and_tiers() -> None:
    assert len(QUESTIONS) >= 30
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    per_dataset = Counter(q.dataset for q in QUESTIONS)
    assert set(per_dataset) == set(DATASETS)
    assert min(per_dataset.values()) >= 10
    for dataset in DATASETS:
        assert {q.tier for q in QUESTIONS if q.dataset == dataset} == set(TIERS)
    used = {p for q in QUESTIONS for p in q.phenomena}
    assert {"direction", "value-case", "value-synonym", "property-on-label"} <= used
    assert {"aggregation", "multi-hop", "top-k", "date-filter"} <= used
    assert used <= set(ASK_PHENOMENA)


def test_datasets_selects_in_the_order_asked() -> None:
    chosen = load_ask_set(["fraud", "crime"])
    assert list(dict.fromkeys(q.dataset for q in chosen)) == ["fraud", "crime"]
    assert {q.id for q in chosen} == {q.id for q in QUESTIONS if q.dataset in ("fraud", "crime")}


@pytest.mark.parametrize("question", QUESTIONS, ids=[q.id for q in QUESTIONS])
def test_gold_is_sound_on_the_real_graph(
    question: AskQuestion, graphs: dict[str, GraphEngine]
) -> None:
    engine = graphs[question.graph]
    first = engine.execute(question.gold)
    assert 1 <= len(first.rows) <= MAX_GOLD_ROWS, first.rows
    assert not first.truncated
    order = output_order(question.gold)
    assert ex_scores(first, engine.execute(question.gold), order) == (1, 1)
    for probe in probe_ties(question.gold, engine):
        assert probe.checked, f"cannot probe {probe.clause!r}"
        assert not probe.tied, f"rows {probe.limit} and {probe.limit + 1} tie: {probe.boundary}"
    if question.ordered:
        # Ordered golds here are top-k answers: each one's cut must have been probed.
        assert probe_ties(question.gold, engine), "ORDER BY without LIMIT"


def _write_set(folder: Path, dataset: str, edit: dict[str, object]) -> Path:
    """The packaged ``dataset`` file with ``edit`` applied to its first question, under ``folder``."""
    packaged = Path(__file__).parents[2] / "src/cypherturn/experiments/data/ask"
    payload = yaml.safe_load((packaged / f"{dataset}.yaml").read_text(encoding="utf-8"))
    payload["questions"][0].update(edit)
    path = folder / f"{dataset}.yaml"
    path.write_text(yaml.safe_dump(payload), encoding="utf-8")
    return path


def test_packaged_file_reads_back_from_a_folder(tmp_path: Path) -> None:
    _write_set(tmp_path, "fraud", {})
    assert load_ask_set(["fraud"], folder=tmp_path) == load_ask_set(["fraud"])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"ordered": True}, "ordered is True but the gold's final RETURN has no ORDER BY"),
        ({"phenomena": ["spelling"]}, "phenomena"),
        ({"phenomena": []}, "phenomena"),
        ({"tier": "expert"}, "tier"),
        ({"gold": "MATCH (c:Crime RETURN c"}, "the gold does not parse"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_question_is_refused_by_name(
    tmp_path: Path, edit: dict[str, object], message: str
) -> None:
    path = _write_set(tmp_path, "crime", edit)
    with pytest.raises(DatasetError, match="not a valid ask set") as caught:
        read_ask_file(path)
    assert message in str(caught.value)


def test_duplicate_ids_and_foreign_graph_are_refused(tmp_path: Path) -> None:
    path = _write_set(tmp_path, "crime", {"id": "crime_02"})
    with pytest.raises(DatasetError, match="duplicate question ids: crime_02"):
        read_ask_file(path)
    payload = yaml.safe_load(path.read_text(encoding="utf-8"))
    payload["questions"][0]["id"] = "crime_01"
    payload["graph"] = "healthcare"
    path.write_text(yaml.safe_dump(payload), encoding="utf-8")
    with pytest.raises(DatasetError, match="is asked of graph 'pole', not 'healthcare'"):
        read_ask_file(path)


def test_unknown_dataset_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown dataset 'pole'"):
        load_ask_set(["pole"])
    with pytest.raises(DatasetError, match="cannot read ask set"):
        load_ask_set(["fraud"], folder=tmp_path)
    (tmp_path / "fraud.yaml").write_text("questions: [unclosed", encoding="utf-8")
    with pytest.raises(DatasetError, match="not YAML"):
        load_ask_set(["fraud"], folder=tmp_path)


def _run_bench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the benchmark script in-process as ``__main__``; return (exit code, stdout, stderr)."""
    old = sys.argv
    sys.argv = [str(BENCH), *args]
    try:
        runpy.run_path(str(BENCH), run_name="__main__")
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    return code, out, err


def _fenced(*queries: str) -> str:
    return json.dumps([f"```cypher\n{q}\n```" for q in queries])


def test_benchmark_scores_resumes_and_refuses_changed_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], embedded_server: EmbeddedFalkorDB
) -> None:
    first, second = load_ask_set(["fraud"])[:2]
    renamed = "MATCH (t:CashOut) RETURN count(*) AS cashouts"  # right rows, another column name
    replies = tmp_path / "replies.json"
    replies.write_text(
        _fenced(
            first.gold,  # single, fraud_01: the gold
            "MATCH (t:Transaction) RETURN count(t) AS transactions",  # single, fraud_02: wrong
            "MATCH (c:Client RETURN c",  # ras, fraud_01: a syntax error, then the gold
            first.gold,
            renamed,  # ras, fraud_02
        ),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    spec = f"replay:{replies}"
    args = ["--models", spec, "--strategies", "single,ras", "--datasets", "fraud"]
    args += ["--limit", "2", "--out", str(out)]
    code, stdout, stderr = _run_bench(capsys, *args)
    assert code == 0, stdout + stderr
    log = out / "records.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    outcomes = [
        (r["strategy"], r["question_id"], r["executable"], r["ex"], r["ex_relaxed"], r["attempts"])
        for r in records
    ]
    assert outcomes == [
        ("single", first.id, True, 1, 1, 1),
        ("single", second.id, True, 0, 0, 1),
        ("ras", first.id, True, 1, 1, 2),
        ("ras", second.id, True, 0, 1, 1),
    ]
    assert records[2]["result"]["attempts"][0]["outcome"] == "error"
    assert records[3]["final_query"] == renamed
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"| {spec} | single | 2 | 1.00 | 0.50 | 0.50 | 1.0 |" in summary
    assert f"| {spec} | ras | 2 | 1.00 | 0.50 | 1.00 | 1.5 |" in summary

    # Done lines are skipped: with no replies left, any re-asked question would be an error line.
    replies.write_text("[]", encoding="utf-8")
    code, stdout, stderr = _run_bench(capsys, *args)
    assert code == 0, stdout + stderr
    assert len(log.read_text(encoding="utf-8").splitlines()) == 4

    # A write torn by a kill is dropped and only that question is asked again.
    lines = log.read_text(encoding="utf-8").splitlines()
    log.write_text("".join(f"{line}\n" for line in lines[:3]) + lines[3][:40], encoding="utf-8")
    replies.write_text(_fenced(renamed), encoding="utf-8")
    code, stdout, stderr = _run_bench(capsys, *args)
    assert code == 0, stdout + stderr
    resumed = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert resumed[:3] == records[:3]
    assert (resumed[3]["question_id"], resumed[3]["ex_relaxed"]) == (second.id, 1)

    code, _, stderr = _run_bench(capsys, *args, "--budget", "3")
    assert code == 1 and "budget 5 -> 3" in stderr
    code, _, stderr = _run_bench(capsys, *args[:2], "--strategies", "best", "--out", str(out))
    assert code == 2 and "unknown strategy 'best'" in stderr
    assert "Traceback" not in stderr
