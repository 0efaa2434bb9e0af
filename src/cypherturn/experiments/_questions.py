"""Question sets of the RAS experiment: one versioned JSON file per dataset, three complexity tiers.

A question set holds the nine questions of the RAS paper's Table 5 verbatim
(``source="paper"``), questions a template generator instantiated with values
sampled from the loaded graph (``source="template"``), and optionally questions
a model wrote (``source="model"``). Template questions carry the values they
use and a parameterised ``check_query`` that counts the matches of those values
in the graph, so a file can be validated against a freshly loaded graph.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.errors import ConfigError, DatasetError, QueryError
from cypherturn.graph import GraphEngine
from cypherturn.metrics import TIERS, Tier
from cypherturn.records import read_model

__all__ = [
    "DATASETS",
    "DATASET_GRAPHS",
    "QUESTION_SET_SCHEMA_VERSION",
    "TIERS",
    "Question",
    "QuestionSet",
    "Tier",
    "dataset_graph",
    "load_question_set",
    "read_question_set",
    "select_questions",
    "validate_question_set",
    "write_question_set",
]

QUESTION_SET_SCHEMA_VERSION: Literal[1] = 1
"""Layout version of question-set files."""


DATASET_GRAPHS = {"healthcare": "healthcare", "crime": "pole", "fraud": "fraud"}
"""RAS dataset name -> cypherturn world (graph) it is asked of (Crime is the POLE graph)."""

DATASETS = tuple(DATASET_GRAPHS)
"""Datasets of the RAS experiment (§4.1)."""

Source = Literal["paper", "template", "model"]
Value = str | int | float | bool


def dataset_graph(dataset: str) -> str:
    """The world (graph name) a dataset's questions are asked of.

    Raises:
        ConfigError: unknown dataset.
    """
    try:
        return DATASET_GRAPHS[dataset]
    except KeyError:
        raise ConfigError(
            f"unknown dataset {dataset!r}; choose from {', '.join(DATASETS)}"
        ) from None


class Question(BaseModel):
    """One natural-language question x of the experiment.

    Attributes:
        id: identifier, unique within its set and stable across versions
            (the paper's ids ``crime_easy`` ... ``health_hard`` for Table 5).
        dataset: ``healthcare``, ``crime`` or ``fraud``.
        tier: ``easy``, ``medium`` or ``hard``.
        question: the question text.
        source: ``paper`` (Table 5, verbatim), ``template`` or ``model``.
        template: the template id a template question came from.
        values: graph values the question names, placeholder -> value.
        check_query: read-only Cypher with ``$placeholder`` parameters whose first
            cell counts the graph matches of ``values`` (> 0 when they exist).
        generator_version: version of the generator that wrote it (empty for paper ones).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    dataset: str
    tier: Tier
    question: str = Field(min_length=1)
    source: Source
    template: str = ""
    values: dict[str, Value] = Field(default_factory=dict)
    check_query: str = ""
    generator_version: str = ""


class QuestionSet(BaseModel):
    """The questions of one dataset (the file ``experiments/data/questions/<dataset>.json``).

    Attributes:
        schema_version: file layout version.
        dataset: the dataset.
        graph: the cypherturn world the values were sampled from.
        generator_version: version of the template generator that wrote it.
        seed: sampling seed of the template generator.
        note: free text (e.g. why the paper's health questions do not match the schema).
        questions: the questions, in tier order.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = QUESTION_SET_SCHEMA_VERSION
    dataset: str
    graph: str
    generator_version: str
    seed: int = 0
    note: str = ""
    questions: list[Question]

    def tier(self, tier: str) -> list[Question]:
        """The questions of one tier, in file order."""
        return [q for q in self.questions if q.tier == tier]

    def problems(self) -> list[str]:
        """Structural problems: duplicate ids, foreign datasets, missing tiers (empty when valid)."""
        found = []
        duplicates = [i for i, n in Counter(q.id for q in self.questions).items() if n > 1]
        if duplicates:
            found.append(f"duplicate ids: {', '.join(sorted(duplicates))}")
        foreign = sorted({q.dataset for q in self.questions} - {self.dataset})
        if foreign:
            found.append(f"questions of other datasets: {', '.join(foreign)}")
        missing = [t for t in TIERS if not self.tier(t)]
        if missing:
            found.append(f"tiers without questions: {', '.join(missing)}")
        return found


def read_question_set(path: Path) -> QuestionSet:
    """Read a question-set file.

    Raises:
        DatasetError: unreadable, not JSON, not a valid set, or structurally invalid.
    """
    qs = read_model(path, QuestionSet, "question set")
    problems = qs.problems()
    if problems:
        raise DatasetError(f"{path}: {'; '.join(problems)}")
    return qs


def write_question_set(path: Path, qs: QuestionSet) -> None:
    """Write a question set as indented JSON (stable key order, one file per dataset).

    Raises:
        OSError: the file cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.loads(qs.model_dump_json())
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load_question_set(dataset: str, folder: Path | None = None) -> QuestionSet:
    """The question set of a dataset, from ``folder`` or the packaged data.

    Args:
        dataset: ``healthcare``, ``crime`` or ``fraud``.
        folder: a folder holding ``<dataset>.json``; ``None`` for the packaged set.

    Raises:
        ConfigError: unknown dataset.
        DatasetError: the file is missing or invalid.
    """
    dataset_graph(dataset)
    if folder is not None:
        return read_question_set(folder / f"{dataset}.json")
    packaged = resources.files("cypherturn.experiments") / "data" / "questions" / f"{dataset}.json"
    with resources.as_file(packaged) as path:
        return read_question_set(path)


def select_questions(qs: QuestionSet, tier: str, limit: int | None) -> list[Question]:
    """The first ``limit`` questions of a tier, the paper's question first (all when None).

    Raises:
        ConfigError: unknown tier.
    """
    if tier not in TIERS:
        raise ConfigError(f"unknown tier {tier!r}; choose from {', '.join(TIERS)}")
    chosen = sorted(qs.tier(tier), key=lambda q: q.source != "paper")
    return chosen if limit is None else chosen[:limit]


def validate_question_set(qs: QuestionSet, engine: GraphEngine) -> list[str]:
    """Check a set against the loaded graph: structure, and that every question's values exist.

    Each ``check_query`` runs read-only with the question's ``values`` as
    parameters; a first cell of 0 (or an engine error) is a problem.

    Args:
        qs: the question set.
        engine: an engine on the dataset's graph, loaded.

    Returns:
        One message per problem (empty when the set is valid).

    Raises:
        EngineConnectionError: the engine is unreachable.
    """
    problems = qs.problems()
    for q in qs.questions:
        if not q.check_query:
            if q.values:
                problems.append(f"{q.id}: values without a check query")
            continue
        try:
            result = engine.execute(q.check_query, dict(q.values))
        except QueryError as e:
            problems.append(f"{q.id}: check query failed: {e}")
            continue
        count = result.rows[0][0] if result.rows else 0
        if not isinstance(count, int) or count <= 0:
            problems.append(f"{q.id}: values {q.values} do not occur in graph {engine.graph}")
    return problems
