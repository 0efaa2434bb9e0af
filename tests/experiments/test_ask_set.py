"""The `ask` accuracy sets (development and test): they load, cover the three datasets, and every gold is sound.

Each gold runs on the real embedded FalkorDB with its dataset loaded: it returns
between 1 and 20 rows, re-execution reproduces it (EX 1 against itself), and
every ORDER BY ... LIMIT k is probed at the cut (the sessions audit's
:func:`probe_ties`): the k-th and (k+1)-th rows must differ on the sort keys.
The held-out test split (``data/ask-test/``) passes the same checks and shares
no question with the development set. ``cypherturn bench ask`` is played end to
end in ``test_ask_bench.py``.
"""

from __future__ import annotations

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

DEVELOPMENT = load_ask_set()
TEST = load_ask_set(split="test")
QUESTIONS = DEVELOPMENT + TEST
MAX_GOLD_ROWS = 20


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


@pytest.mark.parametrize("questions", [DEVELOPMENT, TEST], ids=["development", "test"])
def test_set_covers_three_datasets_and_tiers(questions: list[AskQuestion]) -> None:
    assert len(questions) >= 30
    assert len({q.id for q in questions}) == len(questions)
    per_dataset = Counter(q.dataset for q in questions)
    assert set(per_dataset) == set(DATASETS)
    assert min(per_dataset.values()) >= 10
    for dataset in DATASETS:
        assert {q.tier for q in questions if q.dataset == dataset} == set(TIERS)
    used = {p for q in questions for p in q.phenomena}
    assert {"direction", "value-case", "value-synonym", "property-on-label"} <= used
    assert {"aggregation", "multi-hop", "top-k", "date-filter"} <= used
    assert used <= set(ASK_PHENOMENA)


def test_the_test_split_shares_no_question_with_the_development_set() -> None:
    assert not {q.id for q in DEVELOPMENT} & {q.id for q in TEST}
    assert not {q.question.lower() for q in DEVELOPMENT} & {q.question.lower() for q in TEST}


def test_datasets_selects_in_the_order_asked() -> None:
    chosen = load_ask_set(["fraud", "crime"])
    assert list(dict.fromkeys(q.dataset for q in chosen)) == ["fraud", "crime"]
    assert {q.id for q in chosen} == {q.id for q in DEVELOPMENT if q.dataset in ("fraud", "crime")}


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
