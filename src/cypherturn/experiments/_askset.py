"""The `ask` accuracy set: plain-language questions with gold Cypher over POLE, Healthcare and Fraud.

Questions written the way people ask them (lower case, plurals, synonyms such
as "women" for a gender stored as ``'F'``), not in the template wording of the
RAS experiment's sets, so that answer accuracy (EX, relaxed EX) of ``cypherturn
ask`` can be measured per model and strategy (``cypherturn bench ask ask-dev``;
docs/design/ask-benchmark.md).

One versioned YAML file per dataset, ``experiments/data/ask/<dataset>.yaml``::

    schema_version: 1
    dataset: crime            # a dataset of the RAS experiment: healthcare, crime or fraud
    graph: pole               # the world the golds run on (must be the dataset's graph)
    questions:
      - id: crime_01          # unique over the whole set, stable across versions
        tier: easy            # easy, medium or hard
        question: how many people are on record?
        gold: MATCH (p:Person) RETURN count(p) AS people
        phenomena: [aggregation]
        ordered: false        # the gold's final RETURN has ORDER BY (checked on load)
        notes: why the question is hard, what the gold relies on

Golds are written for the embedded FalkorDB and kept deterministic: every one
returns at least one row, no ORDER BY ... LIMIT cuts through a tie, and none
depends on collect() order (``tests/experiments/test_ask_set.py`` executes them).
The Fraud graph is the one ``cypherturn load fraud`` builds (scale 1, seed 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cypherturn.cypher import output_order
from cypherturn.errors import ConfigError, CypherParseError, DatasetError
from cypherturn.experiments._questions import DATASETS, dataset_graph
from cypherturn.metrics import Tier

__all__ = [
    "ASK_PHENOMENA",
    "ASK_SET_SCHEMA_VERSION",
    "AskPhenomenon",
    "AskQuestion",
    "AskSetFile",
    "load_ask_set",
    "read_ask_file",
]

ASK_SET_SCHEMA_VERSION: Literal[1] = 1
"""Layout version of the ask-set files."""

AskPhenomenon = Literal[
    "direction",
    "value-case",
    "value-synonym",
    "property-on-label",
    "property-on-relationship",
    "subtype-label",
    "boolean",
    "numeric-filter",
    "date-filter",
    "join",
    "multi-hop",
    "aggregation",
    "aggregation-filter",
    "distinct",
    "top-k",
    "negation",
]
"""What a question exercises (a question carries one or more):

* ``direction``: a relationship whose direction matters (the reverse runs and returns 0 rows);
* ``value-case``: a value written in another case or number than stored (``thefts``/``Theft``);
* ``value-synonym``: a value written as another word than stored (``women``/``'F'``);
* ``property-on-label``: the property lives on another label than the question suggests;
* ``property-on-relationship``: the property lives on a relationship;
* ``subtype-label``: a kind of thing is a label (``CashOut``), not a property value;
* ``boolean`` / ``numeric-filter`` / ``date-filter``: a filter on a typed value;
* ``join``: one relationship hop; ``multi-hop``: two or more;
* ``aggregation``: count, sum, avg; ``aggregation-filter``: a filter on an aggregate (WITH ... WHERE);
* ``distinct``: duplicates must be removed; ``top-k``: ORDER BY ... LIMIT;
* ``negation``: a NOT filter.
"""

ASK_PHENOMENA: tuple[str, ...] = get_args(AskPhenomenon)
"""Every phenomenon tag, in documentation order."""


class AskQuestion(BaseModel):
    """One question of the ask set, with its gold query.

    Attributes:
        id: identifier, unique over the whole set and stable across versions.
        dataset: ``healthcare``, ``crime`` or ``fraud`` (the RAS experiment's names).
        graph: the world the gold runs on (``healthcare``, ``pole``, ``fraud``).
        question: the question as a user would type it.
        gold: read-only Cypher whose result is the answer (the EX reference).
        tier: ``easy``, ``medium`` or ``hard``.
        phenomena: what the question exercises (:data:`AskPhenomenon`).
        ordered: the gold's final RETURN has ORDER BY, so EX compares rows in order
            (:func:`cypherturn.cypher.output_order`); checked against the gold.
        notes: why the question is hard and what the gold relies on.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    dataset: str
    graph: str
    question: str = Field(min_length=1)
    gold: str = Field(min_length=1)
    tier: Tier
    phenomena: tuple[AskPhenomenon, ...] = Field(min_length=1)
    ordered: bool
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> AskQuestion:
        if dataset_graph(self.dataset) != self.graph:
            raise ValueError(
                f"{self.id}: dataset {self.dataset!r} is asked of graph "
                f"{dataset_graph(self.dataset)!r}, not {self.graph!r}"
            )
        try:
            order = output_order(self.gold)
        except CypherParseError as e:
            raise ValueError(f"{self.id}: the gold does not parse: {e}") from e
        if order.ordered != self.ordered:
            raise ValueError(
                f"{self.id}: ordered is {self.ordered} but the gold's final RETURN "
                f"{'has' if order.ordered else 'has no'} ORDER BY"
            )
        return self


class _AskEntry(BaseModel):
    """A question as written in a file (dataset and graph come from the file)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    tier: str
    question: str
    gold: str
    phenomena: list[str]
    ordered: bool
    notes: str = ""


class AskSetFile(BaseModel):
    """One ask-set file (``experiments/data/ask/<dataset>.yaml``).

    Attributes:
        schema_version: file layout version.
        dataset: the dataset every question of the file belongs to.
        graph: the world the golds run on.
        questions: the questions, without their dataset and graph.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = ASK_SET_SCHEMA_VERSION
    dataset: str
    graph: str
    questions: list[_AskEntry] = Field(min_length=1)

    def resolved(self) -> list[AskQuestion]:
        """The questions with the file's dataset and graph filled in.

        Raises:
            ValidationError: a question is invalid (see :class:`AskQuestion`).
        """
        return [
            AskQuestion.model_validate(
                {**entry.model_dump(), "dataset": self.dataset, "graph": self.graph}
            )
            for entry in self.questions
        ]


_SPLIT_FOLDERS = {"development": "ask", "test": "ask-test"}
"""Packaged ask-set folder of each data split."""


def _validation_message(path: Path, error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "file"
    return f"{path}: not a valid ask set: {where}: {first['msg']}"


def read_ask_file(path: Path) -> list[AskQuestion]:
    """Read one ask-set file.

    Args:
        path: a YAML file in the layout of the module docstring.

    Returns:
        Its questions, in file order.

    Raises:
        DatasetError: unreadable, not YAML, not a valid set, or duplicate ids.
    """
    try:
        payload = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DatasetError(f"cannot read ask set {path}: {e}") from e
    except yaml.YAMLError as e:
        raise DatasetError(f"{path}: not YAML: {e}") from e
    try:
        questions = AskSetFile.model_validate(payload).resolved()
    except ValidationError as e:
        raise DatasetError(_validation_message(path, e)) from e
    _check_unique(questions, str(path))
    return questions


def _check_unique(questions: Sequence[AskQuestion], where: str) -> None:
    duplicates = sorted(i for i, n in Counter(q.id for q in questions).items() if n > 1)
    if duplicates:
        raise DatasetError(f"{where}: duplicate question ids: {', '.join(duplicates)}")


def load_ask_set(
    datasets: Sequence[str] | None = None,
    folder: Path | None = None,
    *,
    split: str = "development",
) -> list[AskQuestion]:
    """The ask set, from ``folder`` or the packaged data.

    Args:
        datasets: which datasets (``healthcare``, ``crime``, ``fraud``); ``None`` for all,
            in :data:`cypherturn.experiments.DATASETS` order.
        folder: a folder holding ``<dataset>.yaml``; ``None`` for the packaged set.
        split: the packaged set to read: ``development`` (``data/ask/``: the 36
            questions the system was developed on) or ``test`` (``data/ask-test/``:
            36 questions written from the schemas and data alone, frozen on
            2026-12-05 before any system output on them was seen, never used to tune).

    Returns:
        The questions, dataset by dataset in the order asked, each in file order.

    Raises:
        ConfigError: unknown dataset or split.
        DatasetError: a file is missing or invalid, or ids repeat across files.
    """
    if split not in _SPLIT_FOLDERS:
        raise ConfigError(
            f"unknown ask-set split {split!r}; choose from {', '.join(_SPLIT_FOLDERS)}"
        )
    chosen = list(DATASETS if datasets is None else datasets)
    for dataset in chosen:
        dataset_graph(dataset)
    questions: list[AskQuestion] = []
    for dataset in dict.fromkeys(chosen):
        if folder is not None:
            found = read_ask_file(folder / f"{dataset}.yaml")
        else:
            packaged = resources.files("cypherturn.experiments") / "data" / _SPLIT_FOLDERS[split]
            with resources.as_file(packaged / f"{dataset}.yaml") as path:
                found = read_ask_file(path)
        foreign = sorted({q.dataset for q in found} - {dataset})
        if foreign:
            raise DatasetError(f"{dataset}.yaml holds questions of {', '.join(foreign)}")
        questions.extend(found)
    _check_unique(questions, "ask set")
    return questions
