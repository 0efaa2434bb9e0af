"""Template question generator: schema-shaped templates filled with values sampled from the graph.

The RAS paper generates questions "conditioned on the graph schema and
representative subgraph samples" (§4.3). Here each template is a question
pattern over the dataset's schema plus a ``MATCH`` pattern (the subgraph shape
the question is about); the generator samples value tuples from the instances
of that pattern in the loaded graph, so every value a question names exists
there, and stores a check query that proves it (see :func:`validate_question_set`).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

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


def _t(
    dataset: str, tier: str, tid: str, text: str, match: str, *, gold: str, **values: str
) -> QuestionTemplate:
    return QuestionTemplate(tid, dataset, tier, text, match, tuple(values.items()), gold)


TEMPLATES: tuple[QuestionTemplate, ...] = (
    # Crime (POLE): easy
    _t(
        "crime",
        "easy",
        "ce1",
        "List the crimes of type {type} and return their ids and dates.",
        "MATCH (c:Crime)",
        gold="MATCH (c:Crime) WHERE c.type = $type RETURN c.id AS id, c.date AS date",
        type="c.type",
    ),
    _t(
        "crime",
        "easy",
        "ce2",
        "What is the age of the person named {name} {surname}?",
        "MATCH (p:Person)",
        gold="MATCH (p:Person) WHERE p.name = $name AND p.surname = $surname RETURN p.age AS age",
        name="p.name",
        surname="p.surname",
    ),
    _t(
        "crime",
        "easy",
        "ce3",
        "List the vehicles made by {make} with their registration numbers and years.",
        "MATCH (v:Vehicle)",
        gold="MATCH (v:Vehicle) WHERE v.make = $make RETURN v.reg AS reg, v.year AS year",
        make="v.make",
    ),
    _t(
        "crime",
        "easy",
        "ce4",
        "Which crimes have the last outcome '{outcome}'? Return their ids and types.",
        "MATCH (c:Crime)",
        gold="MATCH (c:Crime) WHERE c.last_outcome = $outcome RETURN c.id AS id, c.type AS type",
        outcome="c.last_outcome",
    ),
    # Crime: medium
    _t(
        "crime",
        "medium",
        "cm1",
        "Find the people who were party to crimes of type {type} and return their names and the crime ids.",
        "MATCH (:Person)-[:PARTY_TO]->(c:Crime)",
        gold=(
            "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) "
            "WHERE c.type = $type "
            "RETURN p.name AS name, p.surname AS surname, c.id AS crime_id"
        ),
        type="c.type",
    ),
    _t(
        "crime",
        "medium",
        "cm2",
        "Which crimes occurred at {address}, and which officers investigated them?",
        "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(c:Crime)-[:OCCURRED_AT]->(l:Location)",
        gold=(
            "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(c:Crime)-[:OCCURRED_AT]->(l:Location) "
            "WHERE l.address = $address "
            "RETURN c.id AS crime_id, o.name AS officer_name, o.surname AS officer_surname"
        ),
        address="l.address",
    ),
    _t(
        "crime",
        "medium",
        "cm3",
        "Which crimes were investigated by officer {name} {surname}? Return the crime types and dates.",
        "MATCH (c:Crime)-[:INVESTIGATED_BY]->(o:Officer)",
        gold=(
            "MATCH (c:Crime)-[:INVESTIGATED_BY]->(o:Officer) "
            "WHERE o.name = $name AND o.surname = $surname "
            "RETURN c.type AS type, c.date AS date"
        ),
        name="o.name",
        surname="o.surname",
    ),
    _t(
        "crime",
        "medium",
        "cm4",
        "List the people whose current address has postcode {postcode}, with their phone numbers.",
        "MATCH (ph:Phone)<-[:HAS_PHONE]-(p:Person)-[:CURRENT_ADDRESS]->(l:Location)",
        gold=(
            "MATCH (p:Person)-[:CURRENT_ADDRESS]->(l:Location) "
            "WHERE l.postcode = $postcode "
            "OPTIONAL MATCH (p)-[:HAS_PHONE]->(ph:Phone) "
            "RETURN p.name AS name, p.surname AS surname, ph.phoneNo AS phone"
        ),
        postcode="l.postcode",
    ),
    # Crime: hard
    _t(
        "crime",
        "hard",
        "ch1",
        "Which people, not party to any crime themselves, know someone who was party to a crime of "
        "type {type}? Return each person and how many such acquaintances they have.",
        "MATCH (p:Person)-[:KNOWS]-(f:Person)-[:PARTY_TO]->(c:Crime) WHERE NOT (p)-[:PARTY_TO]->(:Crime)",
        gold=(
            "MATCH (p:Person)-[:KNOWS]-(f:Person)-[:PARTY_TO]->(c:Crime) "
            "WHERE c.type = $type AND NOT (p)-[:PARTY_TO]->(:Crime) "
            "WITH p, count(DISTINCT f) AS acquaintances "
            "RETURN p.name AS name, p.surname AS surname, acquaintances"
        ),
        type="c.type",
    ),
    _t(
        "crime",
        "hard",
        "ch2",
        "Find pairs of people who know each other, both party to some crime, where the first was "
        "party to a crime of type {type}; return both names and how many crimes each was party to.",
        "MATCH (p:Person)-[:KNOWS]-(q:Person), (p)-[:PARTY_TO]->(c:Crime), (q)-[:PARTY_TO]->(:Crime)",
        gold=(
            "MATCH (p:Person)-[:KNOWS]-(q:Person) "
            "WHERE p <> q AND (p)-[:PARTY_TO]->(:Crime {type: $type}) AND (q)-[:PARTY_TO]->(:Crime) "
            "WITH DISTINCT p, q "
            "MATCH (p)-[:PARTY_TO]->(pc:Crime) "
            "WITH p, q, count(DISTINCT pc) AS crimes "
            "MATCH (q)-[:PARTY_TO]->(qc:Crime) "
            "RETURN p.name AS name, p.surname AS surname, q.name AS other_name, q.surname AS other_surname, crimes, count(DISTINCT qc) AS other_crimes"
        ),
        type="c.type",
    ),
    _t(
        "crime",
        "hard",
        "ch3",
        "For each officer of rank {rank}, count the investigated crimes whose last outcome is "
        "'{outcome}', and return only the officers with more than one such crime.",
        "MATCH (c:Crime)-[:INVESTIGATED_BY]->(o:Officer)",
        gold=(
            "MATCH (c:Crime)-[:INVESTIGATED_BY]->(o:Officer) "
            "WHERE o.rank = $rank AND c.last_outcome = $outcome "
            "WITH o, count(DISTINCT c) AS crimes "
            "WHERE crimes > 1 "
            "RETURN o.name AS name, o.surname AS surname, crimes"
        ),
        rank="o.rank",
        outcome="c.last_outcome",
    ),
    _t(
        "crime",
        "hard",
        "ch4",
        "Which people have a family relationship with someone living at {address} who was party to "
        "a crime? Return the people, their relatives and the crime types.",
        "MATCH (p:Person)-[:FAMILY_REL]-(q:Person)-[:CURRENT_ADDRESS]->(l:Location), (q)-[:PARTY_TO]->(:Crime)",
        gold=(
            "MATCH (p:Person)-[:FAMILY_REL]-(q:Person)-[:CURRENT_ADDRESS]->(l:Location), (q)-[:PARTY_TO]->(c:Crime) "
            "WHERE l.address = $address AND p <> q "
            "RETURN DISTINCT p.name AS name, p.surname AS surname, q.name AS relative_name, q.surname AS relative_surname, c.type AS crime_type"
        ),
        address="l.address",
    ),
    # Healthcare (FAERS): easy
    _t(
        "healthcare",
        "easy",
        "he1",
        "Find the cases reported by a reporter whose occupation is {occupation} and return their primary ids.",
        "MATCH (c:Case)",
        gold=(
            "MATCH (c:Case) "
            "WHERE c.reporterOccupation = $occupation "
            "RETURN c.primaryid AS primaryid"
        ),
        occupation="c.reporterOccupation",
    ),
    _t(
        "healthcare",
        "easy",
        "he2",
        "What is the primary substance of the drug {name}?",
        "MATCH (d:Drug)",
        gold="MATCH (d:Drug) WHERE d.name = $name RETURN d.primarySubstabce AS primary_substance",
        name="d.name",
    ),
    _t(
        "healthcare",
        "easy",
        "he3",
        "What does the outcome code {code} stand for?",
        "MATCH (o:Outcome)",
        gold="MATCH (o:Outcome) WHERE o.code = $code RETURN o.outcome AS outcome",
        code="o.code",
    ),
    _t(
        "healthcare",
        "easy",
        "he4",
        "List the cases with age unit {unit} and gender {gender}, with their ages.",
        "MATCH (c:Case)",
        gold=(
            "MATCH (c:Case) "
            "WHERE c.ageUnit = $unit AND c.gender = $gender "
            "RETURN c.primaryid AS primaryid, c.age AS age"
        ),
        unit="c.ageUnit",
        gender="c.gender",
    ),
    # Healthcare: medium
    _t(
        "healthcare",
        "medium",
        "hm1",
        "Which reactions were reported in cases where {name} was the primary suspect drug?",
        "MATCH (r:Reaction)<-[:HAS_REACTION]-(c:Case)-[:IS_PRIMARY_SUSPECT]->(d:Drug)",
        gold=(
            "MATCH (r:Reaction)<-[:HAS_REACTION]-(c:Case)-[:IS_PRIMARY_SUSPECT]->(d:Drug) "
            "WHERE d.name = $name "
            "RETURN DISTINCT r.description AS reaction"
        ),
        name="d.name",
    ),
    _t(
        "healthcare",
        "medium",
        "hm2",
        "Which drugs were primary suspects in the cases registered by manufacturer {manufacturer}?",
        "MATCH (m:Manufacturer)-[:REGISTERED]->(:Case)-[:IS_PRIMARY_SUSPECT]->(:Drug)",
        gold=(
            "MATCH (m:Manufacturer)-[:REGISTERED]->(:Case)-[:IS_PRIMARY_SUSPECT]->(d:Drug) "
            "WHERE m.manufacturerName = $manufacturer "
            "RETURN DISTINCT d.name AS drug"
        ),
        manufacturer="m.manufacturerName",
    ),
    _t(
        "healthcare",
        "medium",
        "hm3",
        "List the cases in age group {group} that resulted in the outcome '{outcome}'.",
        "MATCH (a:AgeGroup)<-[:FALLS_UNDER]-(c:Case)-[:RESULTED_IN]->(o:Outcome)",
        gold=(
            "MATCH (a:AgeGroup)<-[:FALLS_UNDER]-(c:Case)-[:RESULTED_IN]->(o:Outcome) "
            "WHERE a.ageGroup = $group AND o.outcome = $outcome "
            "RETURN DISTINCT c.primaryid AS primaryid"
        ),
        group="a.ageGroup",
        outcome="o.outcome",
    ),
    _t(
        "healthcare",
        "medium",
        "hm4",
        "Which report sources reported cases with the reaction '{reaction}'?",
        "MATCH (s:ReportSource)<-[:REPORTED_BY]-(:Case)-[:HAS_REACTION]->(x:Reaction)",
        gold=(
            "MATCH (s:ReportSource)<-[:REPORTED_BY]-(:Case)-[:HAS_REACTION]->(x:Reaction) "
            "WHERE x.description = $reaction "
            "RETURN DISTINCT s.name AS report_source"
        ),
        reaction="x.description",
    ),
    # Healthcare: hard
    _t(
        "healthcare",
        "hard",
        "hh1",
        "Which pairs of drugs appear in the same case reporting the reaction '{reaction}', one as "
        "primary suspect and the other as concomitant? Return both drugs and the number of such cases.",
        "MATCH (d1:Drug)<-[:IS_PRIMARY_SUSPECT]-(c:Case)-[:IS_CONCOMITANT]->(d2:Drug), (c)-[:HAS_REACTION]->(r:Reaction)",
        gold=(
            "MATCH (d1:Drug)<-[:IS_PRIMARY_SUSPECT]-(c:Case)-[:IS_CONCOMITANT]->(d2:Drug), (c)-[:HAS_REACTION]->(r:Reaction) "
            "WHERE r.description = $reaction AND d1 <> d2 "
            "RETURN d1.name AS primary_suspect, d2.name AS concomitant, count(DISTINCT c) AS cases"
        ),
        reaction="r.description",
    ),
    _t(
        "healthcare",
        "hard",
        "hh2",
        "For manufacturer {manufacturer}, count the registered cases per outcome and return only "
        "the outcomes with more than one case.",
        "MATCH (m:Manufacturer)-[:REGISTERED]->(:Case)-[:RESULTED_IN]->(:Outcome)",
        gold=(
            "MATCH (m:Manufacturer)-[:REGISTERED]->(c:Case)-[:RESULTED_IN]->(o:Outcome) "
            "WHERE m.manufacturerName = $manufacturer "
            "WITH o, count(DISTINCT c) AS cases "
            "WHERE cases > 1 "
            "RETURN o.outcome AS outcome, cases"
        ),
        manufacturer="m.manufacturerName",
    ),
    _t(
        "healthcare",
        "hard",
        "hh3",
        "Which drugs were primary suspects in more than one case that also listed {name} as a "
        "concomitant drug? Return the drugs and the number of shared cases.",
        "MATCH (d:Drug)<-[:IS_CONCOMITANT]-(c:Case)-[:IS_PRIMARY_SUSPECT]->(:Drug)",
        gold=(
            "MATCH (d:Drug)<-[:IS_CONCOMITANT]-(c:Case)-[:IS_PRIMARY_SUSPECT]->(p:Drug) "
            "WHERE d.name = $name "
            "WITH p, count(DISTINCT c) AS cases "
            "WHERE cases > 1 "
            "RETURN p.name AS drug, cases"
        ),
        name="d.name",
    ),
    _t(
        "healthcare",
        "hard",
        "hh4",
        "Which manufacturers registered cases in age group {group} whose reactions were also "
        "reported in cases of another manufacturer? Return each manufacturer and the number of shared reactions.",
        "MATCH (m:Manufacturer)-[:REGISTERED]->(c:Case)-[:FALLS_UNDER]->(a:AgeGroup), (c)-[:HAS_REACTION]->(:Reaction)",
        gold=(
            "MATCH (m:Manufacturer)-[:REGISTERED]->(c:Case)-[:FALLS_UNDER]->(a:AgeGroup), (c)-[:HAS_REACTION]->(r:Reaction) "
            "WHERE a.ageGroup = $group "
            "WITH DISTINCT m, r "
            "MATCH (other:Manufacturer)-[:REGISTERED]->(:Case)-[:HAS_REACTION]->(r) "
            "WHERE other <> m "
            "WITH m, count(DISTINCT r) AS shared_reactions "
            "RETURN m.manufacturerName AS manufacturer, shared_reactions"
        ),
        group="a.ageGroup",
    ),
    # Fraud (PaySim-style): easy
    _t(
        "fraud",
        "easy",
        "fe1",
        "List the transfers of at least {amount} and return their ids and amounts.",
        "MATCH (t:Transfer)",
        gold="MATCH (t:Transfer) WHERE t.amount >= $amount RETURN t.id AS id, t.amount AS amount",
        amount="toInteger(floor(t.amount))",
    ),
    _t(
        "fraud",
        "easy",
        "fe2",
        "What is the id of the client named {name}?",
        "MATCH (c:Client)",
        gold="MATCH (c:Client) WHERE c.name = $name RETURN c.id AS id",
        name="c.name",
    ),
    _t(
        "fraud",
        "easy",
        "fe3",
        "Is the merchant {name} flagged as high risk?",
        "MATCH (m:Merchant)",
        gold="MATCH (m:Merchant) WHERE m.name = $name RETURN m.highRisk AS high_risk",
        name="m.name",
    ),
    _t(
        "fraud",
        "easy",
        "fe4",
        "List the payments made at step {step} with their ids and amounts.",
        "MATCH (p:Payment)",
        gold="MATCH (p:Payment) WHERE p.step = $step RETURN p.id AS id, p.amount AS amount",
        step="p.step",
    ),
    # Fraud: medium
    _t(
        "fraud",
        "medium",
        "fm1",
        "Which merchants received payments from the client {name}? Return the merchant names and amounts.",
        "MATCH (c:Client)-[:PERFORMED]->(:Payment)-[:TO]->(:Merchant)",
        gold=(
            "MATCH (c:Client)-[:PERFORMED]->(p:Payment)-[:TO]->(m:Merchant) "
            "WHERE c.name = $name "
            "RETURN m.name AS merchant, p.amount AS amount"
        ),
        name="c.name",
    ),
    _t(
        "fraud",
        "medium",
        "fm2",
        "Which clients performed a transfer to the mule {name}? Return the clients and the amounts.",
        "MATCH (:Client)-[:PERFORMED]->(:Transfer)-[:TO]->(m:Mule)",
        gold=(
            "MATCH (c:Client)-[:PERFORMED]->(t:Transfer)-[:TO]->(m:Mule) "
            "WHERE m.name = $name "
            "RETURN c.name AS client, t.amount AS amount"
        ),
        name="m.name",
    ),
    _t(
        "fraud",
        "medium",
        "fm3",
        "Which banks received debits from the client {name}, and what is the total amount per bank?",
        "MATCH (c:Client)-[:PERFORMED]->(:Debit)-[:TO]->(:Bank)",
        gold=(
            "MATCH (c:Client)-[:PERFORMED]->(d:Debit)-[:TO]->(b:Bank) "
            "WHERE c.name = $name "
            "RETURN b.name AS bank, sum(d.amount) AS total_amount"
        ),
        name="c.name",
    ),
    _t(
        "fraud",
        "medium",
        "fm4",
        "What email address and phone number does the client {name} use?",
        "MATCH (e:Email)<-[:HAS_EMAIL]-(c:Client)-[:HAS_PHONE]->(:Phone)",
        gold=(
            "MATCH (e:Email)<-[:HAS_EMAIL]-(c:Client)-[:HAS_PHONE]->(ph:Phone) "
            "WHERE c.name = $name "
            "RETURN e.email AS email, ph.phoneNumber AS phone"
        ),
        name="c.name",
    ),
    # Fraud: hard
    _t(
        "fraud",
        "hard",
        "fh1",
        "Find the clients or mules who share a phone number with the client {name}, and count the "
        "fraudulent transactions each of them performed.",
        "MATCH (c:Client)-[:HAS_PHONE]->(:Phone)<-[:HAS_PHONE]-(o) WHERE o <> c",
        gold=(
            "MATCH (c:Client)-[:HAS_PHONE]->(:Phone)<-[:HAS_PHONE]-(o) "
            "WHERE c.name = $name AND o <> c AND (o:Client OR o:Mule) "
            "WITH DISTINCT o "
            "OPTIONAL MATCH (o)-[:PERFORMED]->(t:Transaction) "
            "WHERE t.fraud = true "
            "RETURN o.name AS name, count(DISTINCT t) AS fraudulent"
        ),
        name="c.name",
    ),
    _t(
        "fraud",
        "hard",
        "fh2",
        "Find the clients who transferred money to the client {name} and also received a transfer "
        "from them; return both names and the total amount in each direction.",
        "MATCH (a:Client)-[:PERFORMED]->(:Transfer)-[:TO]->(b:Client)-[:PERFORMED]->(:Transfer)-[:TO]->(a)",
        gold=(
            "MATCH (a:Client)<-[:TO]-(t1:Transfer)<-[:PERFORMED]-(b:Client) "
            "WHERE a.name = $name AND b <> a "
            "WITH a, b, sum(t1.amount) AS received "
            "MATCH (a)-[:PERFORMED]->(t2:Transfer)-[:TO]->(b) "
            "RETURN a.name AS client, b.name AS counterpart, received, sum(t2.amount) AS sent"
        ),
        name="a.name",
    ),
    _t(
        "fraud",
        "hard",
        "fh3",
        "Starting from the first transaction of the client {name}, follow the chain of next "
        "transactions and count how many of them are fraudulent.",
        "MATCH (c:Client)-[:FIRST_TX]->()-[:NEXT*1..3]->()",
        gold=(
            "MATCH (c:Client)-[:FIRST_TX]->(:Transaction)-[:NEXT*0..]->(t:Transaction) "
            "WHERE c.name = $name "
            "RETURN count(DISTINCT CASE WHEN t.fraud THEN t END) AS fraudulent"
        ),
        name="c.name",
    ),
    _t(
        "fraud",
        "hard",
        "fh4",
        "Which mules received transfers from more than one client who also paid the merchant "
        "{name}? Return each mule and the number of such clients.",
        "MATCH (m:Merchant)<-[:TO]-(:Payment)<-[:PERFORMED]-(c:Client)-[:PERFORMED]->(:Transfer)-[:TO]->(:Mule)",
        gold=(
            "MATCH (m:Merchant)<-[:TO]-(:Payment)<-[:PERFORMED]-(c:Client) "
            "WHERE m.name = $name "
            "WITH DISTINCT c "
            "MATCH (c)-[:PERFORMED]->(:Transfer)-[:TO]->(mule:Mule) "
            "WITH mule, count(DISTINCT c) AS clients "
            "WHERE clients > 1 "
            "RETURN mule.name AS mule, clients"
        ),
        name="m.name",
    ),
)
"""Every template, by dataset and tier (four per dataset and tier)."""


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
