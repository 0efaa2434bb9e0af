"""The packaged question sets validate against the real loaded graphs; generators are reproducible."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.experiments import (
    DATASETS,
    GENERATOR_VERSION,
    PAPER_QUESTIONS,
    TIERS,
    generate_model_questions,
    generate_question_set,
    load_question_set,
    read_question_set,
    select_questions,
    validate_question_set,
    write_question_set,
)
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel


@pytest.mark.parametrize("dataset", DATASETS)
def test_packaged_set_structure(dataset: str) -> None:
    qs = load_question_set(dataset)
    assert qs.dataset == dataset
    assert qs.generator_version == GENERATOR_VERSION
    assert qs.problems() == []
    ids = [q.id for q in qs.questions]
    assert len(ids) == len(set(ids))
    for tier in TIERS:
        generated = [q for q in qs.tier(tier) if q.source == "template"]
        assert len(generated) >= 10, (dataset, tier)
        assert all(q.values and q.check_query and q.generator_version for q in generated)
        # The paper's question heads each tier's selection.
        assert select_questions(qs, tier, 1)[0].source == "paper"
    paper = {q.id: q for q in qs.questions if q.source == "paper"}
    expected = {qid: v for qid, v in PAPER_QUESTIONS.items() if v[0] == dataset}
    assert set(paper) == set(expected) and len(paper) == 3
    for qid, (_, tier, text) in expected.items():
        assert (paper[qid].tier, paper[qid].question) == (tier, text)


def test_paper_table5_ids_and_health_note() -> None:
    assert sorted(PAPER_QUESTIONS) == sorted(
        f"{p}_{t}" for p in ("crime", "fraud", "health") for t in TIERS
    )
    assert "schema" in load_question_set("healthcare").note


@pytest.mark.slow
@pytest.mark.parametrize("dataset", DATASETS)
def test_packaged_values_exist_in_the_loaded_graph_and_regenerate_identically(
    dataset: str, dataset_engine: Callable[[str], GraphEngine]
) -> None:
    engine = dataset_engine(dataset)
    packaged = load_question_set(dataset)
    assert validate_question_set(packaged, engine) == []
    assert generate_question_set(dataset, engine) == packaged


def test_a_value_missing_from_the_graph_is_reported(fraud_engine: GraphEngine) -> None:
    qs = load_question_set("fraud")
    target = next(q for q in qs.questions if q.source == "template" and "name" in q.values)
    broken = target.model_copy(update={"values": {**target.values, "name": "Nobody Atall"}})
    qs = qs.model_copy(update={"questions": [broken if q is target else q for q in qs.questions]})
    problems = validate_question_set(qs, fraud_engine)
    assert len(problems) == 1 and problems[0].startswith(target.id)


def test_bad_files_are_dataset_errors(tmp_path: Path) -> None:
    qs = load_question_set("crime")
    dup = qs.model_copy(update={"questions": [*qs.questions, qs.questions[0]]})
    write_question_set(tmp_path / "crime.json", dup)
    with pytest.raises(DatasetError, match="duplicate ids: crime_easy"):
        read_question_set(tmp_path / "crime.json")
    no_hard = qs.model_copy(update={"questions": [q for q in qs.questions if q.tier != "hard"]})
    write_question_set(tmp_path / "crime.json", no_hard)
    with pytest.raises(DatasetError, match="tiers without questions: hard"):
        load_question_set("crime", tmp_path)
    (tmp_path / "fraud.json").write_text('{"dataset": "fraud"}')
    with pytest.raises(DatasetError, match="not a valid question set"):
        load_question_set("fraud", tmp_path)


def test_model_written_questions_are_marked(fraud_engine: GraphEngine) -> None:
    qs = load_question_set("fraud")
    replies = [
        "1. Which clients performed a payment to a merchant?\n2. Too short?\nnot a question",
        "- Which mules received transfers from two clients?\n- Which clients performed a payment to a merchant?",
        "Which clients share an SSN and performed a fraudulent transaction?",
    ]
    model = ReplayChatModel(replies, spec="replay:writer")
    extended = generate_model_questions(qs, model, fraud_engine, count=2)
    added = extended.questions[len(qs.questions) :]
    assert [(q.id, q.tier) for q in added] == [
        ("fraud_easy_m01", "easy"),
        ("fraud_medium_m01", "medium"),
        ("fraud_hard_m01", "hard"),
    ]
    assert all(q.source == "model" and q.generator_version.endswith("replay:writer") for q in added)
    assert extended.problems() == []
    prompt = model.calls[0][0].content
    assert "Graph schema:" in prompt and "Sample of the graph:" in prompt and "-[:" in prompt
    assert Counter(q.source for q in extended.questions)["model"] == 3
