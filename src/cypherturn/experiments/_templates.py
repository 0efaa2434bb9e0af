"""Template question generator: schema-shaped templates filled with values sampled from the graph.

The RAS paper generates questions "conditioned on the graph schema and
representative subgraph samples" (§4.3). Here each template (package data,
``experiments/data/templates.yaml``) is a question pattern over the dataset's
schema plus a ``MATCH`` pattern (the subgraph shape the question is about); the generator samples value tuples from the instances
of that pattern in the loaded graph, so every value a question names exists
there, and stores a check query that proves it (see :func:`validate_question_set`).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from importlib import resources

import yaml

from cypherturn.errors import DatasetError
from cypherturn.experiments._questions import (
    QUESTION_SET_SCHEMA_VERSION,
    TIERS,
    Question,
    QuestionSet,
    Tier,
    Value,
    dataset_graph,
)
from cypherturn.graph import GraphEngine

__all__ = [
    "GENERATOR_VERSION",
    "PAPER_QUESTIONS",
    "TEMPLATES",
    "QuestionTemplate",
    "generate_question_set",
]

logger = logging.getLogger(__name__)

GENERATOR_VERSION = "templates-1"
"""Version of the template set and sampling procedure, stored in every generated question."""

_ID_PREFIX = {"healthcare": "health", "crime": "crime", "fraud": "fraud"}

HEALTH_NOTE = (
    "The paper's three health_* questions (Table 5) speak of patients, physicians and medical "
    "records; the public FAERS healthcare graph models Case, Drug, Reaction, Manufacturer, "
    "Outcome, Therapy. They are kept verbatim, as in the paper, to test robustness to a question "
    "that does not match the schema; the template questions use the graph's own vocabulary."
)

PAPER_QUESTIONS: dict[str, tuple[str, Tier, str]] = {
    "crime_easy": (
        "crime",
        "easy",
        "Find all crime incidents and return their incident IDs and crime types.",
    ),
    "crime_medium": (
        "crime",
        "medium",
        "Find people involved in crime incidents at a specific location and return the person "
        "name and incident ID.",
    ),
    "crime_hard": (
        "crime",
        "hard",
        "Identify repeat offenders who are connected to more than one crime incident and return "
        "the person name and the number of incidents.",
    ),
    "fraud_easy": (
        "fraud",
        "easy",
        "List all transactions that are marked as fraudulent and return their transaction IDs.",
    ),
    "fraud_medium": (
        "fraud",
        "medium",
        "Find customers who have more than two fraudulent transactions and return the customer "
        "name and the number of fraudulent transactions.",
    ),
    "fraud_hard": (
        "fraud",
        "hard",
        "Find pairs of accounts that have transferred money between each other and are both "
        "involved in at least one fraudulent transaction, and return the account IDs and the "
        "number of shared fraudulent transactions.",
    ),
    "health_easy": (
        "healthcare",
        "easy",
        "Find all patients in the database and return their names.",
    ),
    "health_medium": (
        "healthcare",
        "medium",
        "List all medical records for a specific patient and the physicians associated with those "
        "records.",
    ),
    "health_hard": (
        "healthcare",
        "hard",
        "Find patients who have been treated by more than one physician for the same medical "
        "condition and return the condition and physician count.",
    ),
}
"""RAS Table 5, verbatim: id -> (dataset, tier, question)."""


@dataclass(frozen=True, slots=True)
class QuestionTemplate:
    """A question pattern over one dataset's schema.

    Attributes:
        id: template id, unique per dataset.
        dataset / tier: where its questions go.
        text: the question with ``{placeholder}`` fields.
        match: the ``MATCH ... [WHERE ...]`` pattern whose instances the values come from.
        values: placeholder -> Cypher expression over the pattern's variables.
        gold: the Cypher that answers ``text`` exactly, with the check query's
            ``$placeholder`` parameters (:func:`cypherturn.experiments.gold_query`
            fills them in); not part of the generated questions, so adding or
            fixing one changes no question set.
    """

    id: str
    dataset: str
    tier: str
    text: str
    match: str
    values: tuple[tuple[str, str], ...]
    gold: str = ""

    def sample_query(self, limit: int) -> str:
        """Cypher listing distinct value tuples of the pattern, in a stable order."""
        exprs = ", ".join(f"{expr} AS {name}" for name, expr in self.values)
        names = ", ".join(name for name, _ in self.values)
        non_null = " AND ".join(f"{name} IS NOT NULL" for name, _ in self.values)
        return (
            f"{self.match} WITH DISTINCT {exprs} WHERE {non_null} "
            f"RETURN {names} ORDER BY {names} LIMIT {limit}"
        )

    def check_query(self) -> str:
        """Cypher counting the pattern's instances that carry the ``$placeholder`` values."""
        exprs = ", ".join(f"{expr} AS {name}" for name, expr in self.values)
        cond = " AND ".join(f"{name} = ${name}" for name, _ in self.values)
        return f"{self.match} WITH {exprs} WHERE {cond} RETURN count(*) AS matches"


_TEMPLATE_FIELDS = ("id", "dataset", "tier", "text", "match", "values", "gold")


def _load_templates() -> tuple[QuestionTemplate, ...]:
    """The templates of the packaged ``data/templates.yaml``, in file order.

    Raises:
        DatasetError: an entry lacks a field or has one it should not.
    """
    text = resources.files("cypherturn.experiments").joinpath("data", "templates.yaml")
    entries = yaml.safe_load(text.read_text("utf-8"))["templates"]
    templates = []
    for entry in entries:
        if sorted(entry) != sorted(_TEMPLATE_FIELDS):
            raise DatasetError(
                f"templates.yaml: template {entry.get('id')!r} has fields {sorted(entry)}, "
                f"not {sorted(_TEMPLATE_FIELDS)}"
            )
        templates.append(
            QuestionTemplate(
                id=entry["id"],
                dataset=entry["dataset"],
                tier=entry["tier"],
                text=entry["text"],
                match=entry["match"],
                values=tuple(entry["values"].items()),
                gold=entry["gold"],
            )
        )
    return tuple(templates)


TEMPLATES: tuple[QuestionTemplate, ...] = _load_templates()
"""Every template, by dataset and tier (four per dataset and tier), from ``data/templates.yaml``."""


def _as_value(value: object) -> Value:
    if isinstance(value, bool | int | float | str):
        return value
    return str(value)


def generate_question_set(
    dataset: str,
    engine: GraphEngine,
    *,
    per_template: int = 3,
    seed: int = 0,
    sample_limit: int = 500,
) -> QuestionSet:
    """Instantiate every template of a dataset with value tuples sampled from the loaded graph.

    Args:
        dataset: ``healthcare``, ``crime`` or ``fraud``.
        engine: an engine on the dataset's graph, loaded.
        per_template: questions per template (fewer when the pattern has fewer instances).
        seed: sampling seed; the same graph and seed give the same set.
        sample_limit: distinct value tuples listed per template before sampling.

    Returns:
        The paper's Table 5 questions of the dataset followed by the template questions,
        ids ``<prefix>_<tier>_<NN>`` numbered per tier.

    Raises:
        ConfigError: unknown dataset.
        QueryError: a template's pattern does not run on this graph.
        EngineConnectionError: the engine is unreachable.
    """
    graph = dataset_graph(dataset)
    rng = random.Random(seed)
    questions = [
        Question(id=qid, dataset=dataset, tier=tier, question=text, source="paper")
        for qid, (ds, tier, text) in PAPER_QUESTIONS.items()
        if ds == dataset
    ]
    for tier in TIERS:
        number = 0
        for template in (t for t in TEMPLATES if t.dataset == dataset and t.tier == tier):
            rows = engine.execute(template.sample_query(sample_limit)).rows
            if not rows:
                logger.warning("template %s has no instance in graph %s", template.id, graph)
                continue
            for row in rng.sample(rows, min(per_template, len(rows))):
                values = {
                    name: _as_value(v) for (name, _), v in zip(template.values, row, strict=True)
                }
                number += 1
                questions.append(
                    Question(
                        id=f"{_ID_PREFIX[dataset]}_{tier}_{number:02d}",
                        dataset=dataset,
                        tier=tier,
                        question=template.text.format(**values),
                        source="template",
                        template=template.id,
                        values=values,
                        check_query=template.check_query(),
                        generator_version=GENERATOR_VERSION,
                    )
                )
    return QuestionSet(
        schema_version=QUESTION_SET_SCHEMA_VERSION,
        dataset=dataset,
        graph=graph,
        generator_version=GENERATOR_VERSION,
        seed=seed,
        note=HEALTH_NOTE if dataset == "healthcare" else "",
        questions=questions,
    )
