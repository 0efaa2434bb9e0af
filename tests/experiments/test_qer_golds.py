"""The golds of the RAS experiment's questions are sound on the real graphs.

Every packaged question has a gold or a recorded reason for none. Each gold runs
on the real embedded FalkorDB with its dataset loaded, passes the schema check
(:func:`cypherturn.grounding.check_query`) with no finding, reproduces itself on
re-execution (EX 1 against itself), cuts no ORDER BY ... LIMIT through a tie (the
sessions audit's :func:`probe_ties`), and returns rows, except the questions
pinned below whose correct answer is empty on the packaged graph (the scorer
leaves those out of EX and counts them).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest

from cypherturn.cypher import output_order
from cypherturn.experiments import (
    DATASETS,
    GENERATOR_VERSION,
    PAPER_GOLDS,
    PAPER_NO_GOLD,
    PAPER_QUESTIONS,
    TEMPLATES,
    Question,
    dataset_graph,
    gold_query,
    load_question_set,
    no_gold_reason,
)
from cypherturn.graph import DEFAULT_ROW_CAP, EmbeddedFalkorDB, FalkorDBEngine, GraphEngine
from cypherturn.grounding import check_query, graph_index
from cypherturn.metrics import ex_scores
from cypherturn.sessions import probe_ties
from cypherturn.worlds import get_world, load_world

QUESTIONS = [q for d in DATASETS for q in load_question_set(d).questions]
WITH_GOLD = [q for q in QUESTIONS if gold_query(q) is not None]

# The correct answer of these questions is empty on the packaged graphs (no officer of that
# rank has two such crimes; no drug is the primary suspect in two cases with that concomitant).
EMPTY_ANSWERS = {
    "crime_hard_07",
    "crime_hard_09",
    "health_hard_04",
    "health_hard_07",
    "health_hard_08",
    "health_hard_09",
}
# Crime (POLE) has 28,762 crimes: "find all crime incidents" is beyond the default row cap.
OVER_ROW_CAP = {"crime_easy"}


@pytest.fixture(scope="module")
def graphs(embedded_server: EmbeddedFalkorDB) -> Iterator[dict[str, GraphEngine]]:
    """Crime (POLE), Healthcare and Fraud loaded once for this module, by dataset."""
    engines: dict[str, FalkorDBEngine] = {}
    for dataset in DATASETS:
        name = f"golds_{dataset}_{uuid.uuid4().hex[:8]}"
        engine = FalkorDBEngine(embedded_server.client(), name, spec=f"embedded#{name}")
        load_world(engine, get_world(dataset_graph(dataset)), replace=True)
        engines[dataset] = engine
    yield dict(engines)
    for engine in engines.values():
        engine.drop()
        engine.close()


def test_every_template_has_a_gold_over_its_placeholders() -> None:
    for template in TEMPLATES:
        assert template.gold, template.id
        params = set(re.findall(r"\$(\w+)", template.gold))
        assert params == {name for name, _ in template.values}, template.id


def test_every_question_has_a_gold_or_a_reason() -> None:
    assert len(QUESTIONS) == 116
    for q in QUESTIONS:
        assert (gold_query(q) is None) == (no_gold_reason(q) is not None), q.id
    without = {q.id for q in QUESTIONS if gold_query(q) is None}
    assert without == set(PAPER_NO_GOLD)
    assert set(PAPER_GOLDS) | set(PAPER_NO_GOLD) == set(PAPER_QUESTIONS)
    assert "patients" in (no_gold_reason(next(q for q in QUESTIONS if q.id == "health_easy")) or "")


def test_values_are_written_in_as_escaped_literals(graphs: dict[str, GraphEngine]) -> None:
    question = Question(
        id="crime_easy_99",
        dataset="crime",
        tier="easy",
        question="What is the age of the person named O'Brien Back\\slash?",
        source="template",
        template="ce2",
        values={"name": "O'Brien", "surname": "Back\\slash"},
        generator_version=GENERATOR_VERSION,
    )
    gold = gold_query(question)
    assert gold is not None and "p.name = 'O\\'Brien'" in gold and "'Back\\\\slash'" in gold
    assert graphs["crime"].execute(gold).rows == []
    # Questions the golds were not written for get none, with the reason.
    other = question.model_copy(update={"generator_version": "templates-0"})
    assert gold_query(other) is None and "templates-0" in (no_gold_reason(other) or "")
    model_written = question.model_copy(update={"source": "model", "template": ""})
    assert gold_query(model_written) is None


@pytest.mark.parametrize("question", WITH_GOLD, ids=[q.id for q in WITH_GOLD])
def test_gold_is_sound_on_the_real_graph(
    question: Question, graphs: dict[str, GraphEngine]
) -> None:
    gold = gold_query(question)
    assert gold is not None
    engine = graphs[question.dataset]
    report = check_query(gold, graph_index(engine))
    assert report.parsed and not report.findings, report.findings
    first = engine.execute(gold)
    assert first.truncated == (question.id in OVER_ROW_CAP)
    if question.id in OVER_ROW_CAP:
        assert len(engine.execute(gold, row_cap=10 * DEFAULT_ROW_CAP).rows) > DEFAULT_ROW_CAP
        return
    assert (len(first.rows) == 0) == (question.id in EMPTY_ANSWERS), first.rows[:3]
    assert ex_scores(first, engine.execute(gold), output_order(gold)) == (1, 1)
    for probe in probe_ties(gold, engine):
        assert probe.checked and not probe.tied, probe
