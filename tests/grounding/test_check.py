"""The static schema check, value grounding and deterministic repairs, on a real engine.

Most cases are data: ``check_cases.json`` (graph, query, expected codes, repaired
query, rows), read by :func:`test_check_case`. The tests below it check what a case
file does not say: messages, suggestions, the index, hints.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cypherturn.errors import QueryError
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, GraphEngine
from cypherturn.grounding import (
    CHECKS,
    FINDING_CODES,
    GraphIndex,
    apply_edits,
    check_query,
    check_values,
    error_hint,
    graph_index,
)

CASE_FILE: dict[str, Any] = json.loads(
    Path(__file__).with_name("check_cases.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = CASE_FILE["cases"]

CaseGraphs = Callable[[str], tuple[GraphEngine, GraphIndex]]


@pytest.fixture(scope="module")
def case_graphs(embedded_server: EmbeddedFalkorDB) -> Iterator[CaseGraphs]:
    """``case_graphs(name) -> (engine, index)`` for the case file's graphs, each loaded once."""
    loaded: dict[str, tuple[FalkorDBEngine, GraphIndex]] = {}

    def get(name: str) -> tuple[GraphEngine, GraphIndex]:
        if name not in loaded:
            graph = f"check_{name}_{uuid.uuid4().hex[:8]}"
            engine = FalkorDBEngine(embedded_server.client(), graph, spec=f"embedded#{graph}")
            engine.ensure_graph()
            engine.write(CASE_FILE["graphs"][name])
            loaded[name] = (engine, graph_index(engine))
        return loaded[name]

    yield get
    for engine, _ in loaded.values():
        engine.drop()
        engine.close()


@pytest.mark.parametrize("case", CASES, ids=[f"{c['graph']}: {c['query'][:60]}" for c in CASES])
def test_check_case(case: dict[str, Any], case_graphs: CaseGraphs) -> None:
    engine, index = case_graphs(case["graph"])
    query = case["query"]
    values = case.get("check") == "values"

    def check(text: str) -> list[Any]:
        return check_values(text, index) if values else check_query(text, index).findings

    findings = check(query)
    assert [f.code for f in findings] == case["codes"], [f.message for f in findings]
    repaired, _ = apply_edits(query, findings)
    assert repaired == case.get("repaired", query)
    if case.get("rejected"):
        with pytest.raises(QueryError):
            engine.execute(query)
    if "rows" in case:
        assert engine.execute(repaired).rows == case["rows"]
    if repaired != query:  # a repair leaves nothing more to repair
        assert all(f.edit is None for f in check(repaired))


def test_every_check_of_the_table_has_a_case() -> None:
    found = set()
    for case in CASES:
        found |= set(case["codes"])
    table = {code for check in CHECKS for code in check.codes}
    assert table - {"engine_pitfall"} <= found  # engine_pitfall needs an index: below


def test_messages_name_what_the_graph_has(index: GraphIndex) -> None:
    (reversed_,) = check_query(
        "MATCH (c:Crime)-[r:PARTY_TO]->(p:Person) RETURN count(p) AS n", index
    ).findings
    assert "(:Person)-[:PARTY_TO]->(:Crime)" in reversed_.message
    (endpoints,) = check_query(
        "MATCH (p:Person)-[:INVESTIGATED_BY]->(o:Officer) RETURN o", index
    ).findings
    assert "(:Crime)-[:INVESTIGATED_BY]->(:Officer)" in endpoints.message
    (wrong_label,) = check_query("MATCH (c:Crime) RETURN c.gender", index).findings
    assert "Person" in wrong_label.message
    assert wrong_label.edit is not None
    assert (
        wrong_label.edit.replacement == ", (c)<-[:PARTY_TO]-(cPerson:Person) RETURN cPerson.gender"
    )
    (undefined,) = check_query(
        "MATCH (c:Crime) WITH c.type AS t, count(*) AS n RETURN t, n, c", index
    ).findings
    assert "'c'" in undefined.message
    (nested,) = check_query("MATCH (p:Person) WHERE p.ageGroup.name = 'x' RETURN p", index).findings
    assert "'ageGroup'" in nested.message


def test_unknown_names_with_case_repairs(index: GraphIndex) -> None:
    query = "MATCH (p:person)-[:party_to]->(c:Crimes) RETURN p.name"
    report = check_query(query, index)
    by_name = {query[f.span[0] : f.span[1]]: f for f in report.findings if f.span}
    assert by_name["person"].edit is not None and by_name["party_to"].edit is not None
    assert by_name["Crimes"].edit is None and by_name["Crimes"].suggestions[0] == "Crime"
    assert len(apply_edits(query, report.findings)[1]) == 2


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("MATCH (c:Crime) RETURN c.type, count(*) GROUP BY c.type", "GROUP BY"),
        ("MATCH (c:Crime) RETURN c.type AS t, count(*) AS n HAVING n > 1", "HAVING"),
        ("MATCH (c:Crime) WHERE c.type LIKE 'Bur%' RETURN c", "LIKE"),
        ("SELECT * FROM Crime", "SELECT"),
        ("MATCH (c:Crime) RETURN c.type RETURN c.date", "one RETURN"),
    ],
)
def test_sql_habits_get_a_hint(query: str, words: str, index: GraphIndex) -> None:
    (finding,) = check_query(query, index).findings
    assert words.split()[0].lower() in finding.message.lower() or words in finding.message


def test_unparsable_query_gets_no_verdict(index: GraphIndex) -> None:
    report = check_query("MATCH (p:Persn RETURN p", index)
    assert not report.parsed and report.findings == [] and report.parse_error
    assert not check_query("MATCH (p:Person) RETURN 'unterminated", index).parsed


def test_a_literal_with_no_match_lists_the_nearest_values(index: GraphIndex) -> None:
    (gender,) = check_values("MATCH (p:Person) WHERE p.gender = 'female' RETURN count(p)", index)
    assert gender.edit is None and gender.suggestions[0] == "F"
    (typo,) = check_values("MATCH (c:Crime) WHERE c.type = 'Burglery' RETURN c", index)
    assert typo.suggestions == ["Burglary"] and typo.edit is None
    (elsewhere,) = check_values("MATCH (l:Location) WHERE l.address = 'Burglary' RETURN l", index)
    assert "Crime.type = 'Burglary'" in elsewhere.message


def test_schema_text_lists_stored_values_within_the_budget(index: GraphIndex) -> None:
    plain = index.schema_text()
    grounded = index.schema_text(values=True)
    assert grounded.startswith(plain) and "Crime.type: 'Burglary', 'Drugs'" in grounded
    assert "Person.gender: 'F', 'M'" in grounded
    small = index.schema_text(values=True, budget_chars=40)
    assert len(small) - len(plain) < 40 + 80


def test_index_keys_are_complete(crime: GraphEngine, index: GraphIndex) -> None:
    assert index.label_keys["Person"] == frozenset({"name", "surname", "gender", "age"})
    assert index.type_keys["KNOWS"] == frozenset({"since"})
    assert ("Person", "PARTY_TO", "Crime") in index.triples()


def test_every_code_has_a_case() -> None:
    exercised = {
        "unknown_label", "unknown_relationship_type", "unknown_property", "property_not_on_label",
        "reversed_direction", "wrong_endpoints", "undefined_variable", "sql_habit", "value_not_found",
        "engine_pitfall", "literal_type", "missing_label",
        "question_threshold", "answer_shape",  # tests/grounding/test_question.py
        "unbound_reference",  # tests/grounding/test_reference.py
    }  # fmt: skip
    assert exercised == set(FINDING_CODES)


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (a:Crime)-[:INVESTIGATED_BY]->(b:Officer) RETURN b.name ORDER BY count(*) DESC",
        "MATCH (n:Person) WHERE exists((n)-[:PARTY_TO]->()) RETURN count(n)",
        "MATCH (c:Crime) RETURN c.type RETURN c.date",
        "MATCH (c:Crime) RETURN c.type, count(*) GROUP BY c.type",
    ],
)
def test_engine_errors_small_models_repeat_get_a_hint(query: str, crime: GraphEngine) -> None:
    with pytest.raises(QueryError) as caught:
        crime.execute(query)
    assert error_hint(caught.value.engine_message)


def test_complete_schema_and_categorical_values(index: GraphIndex) -> None:
    schema = index.complete_schema()
    person = next(label for label in schema.labels if label.label == "Person")
    assert set(person.properties) == {"name", "surname", "gender", "age"}
    values = index.categorical_values()
    assert set(values["gender"]) == {"F", "M"} and set(values["type"]) == {"Burglary", "Drugs"}
    assert "since" not in values  # an integer key has no string values


def test_a_misspelt_name_among_many_values_is_suggested(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine("drugs")
    engine.write(
        "UNWIND range(1, 60) AS i CREATE (:Drug {name: 'DRUG' + toString(i)})"
        " WITH 1 AS one LIMIT 1 CREATE (:Drug {name: 'REVLIMID'})"
    )
    index = graph_index(engine)
    (finding,) = check_values("MATCH (d:Drug) WHERE d.name = 'REVLIUMID' RETURN d", index)
    assert finding.suggestions[0] == "REVLIMID" and finding.edit is None


def test_sql_date_functions_get_the_date_hint() -> None:
    hint = error_hint("Unknown function 'strftime'")
    assert hint is not None and "date('" in hint


def test_a_filter_on_an_indexed_temporal_component_is_rewritten_so_the_engine_answers(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine("dates")
    engine.write(
        "UNWIND range(1, 12) AS i CREATE (:Case {reportDate: date({year: 2021, month: i, day: 1})})"
    )
    engine.write("CREATE INDEX FOR (c:Case) ON (c.reportDate)")
    engine.await_indexes()
    index = graph_index(engine)
    query = (
        "MATCH (c:Case) WHERE c.reportDate.month = 9 AND c.reportDate.year = 2021 "
        "RETURN count(c) AS n, c.reportDate.year AS y"
    )
    assert engine.execute(query).rows == []  # the engine's wrong answer this guards against
    report = check_query(query, index)
    assert [f.code for f in report.findings] == ["engine_pitfall", "engine_pitfall"]
    repaired, applied = apply_edits(query, report.findings)
    assert (
        len(applied) == 2
        and "AS y" in repaired
        and "toInteger(c.reportDate.year) = 2021" in repaired
    )
    assert engine.execute(repaired).rows == [[1, 2021]]
    assert check_query(repaired, index).ok
    assert check_query("MATCH (c:Case) RETURN c.reportDate.month AS m", index).ok
