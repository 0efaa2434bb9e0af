"""The static schema check, value grounding and deterministic repairs, on a real engine."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.grounding import (
    FINDING_CODES,
    GraphIndex,
    apply_edits,
    check_query,
    check_values,
    error_hint,
    graph_index,
)


def codes(query: str, index: GraphIndex) -> list[str]:
    return [f.code for f in check_query(query, index).findings]


VALID = [
    "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) RETURN p.name, c.type",
    "MATCH (c:Crime)<-[:PARTY_TO]-(p:Person) WHERE c.type = 'Burglary' RETURN count(p) AS n",
    "MATCH (p:Person)-[:PARTY_TO]-(c:Crime) RETURN count(*)",
    "MATCH (a:Person)-[k:KNOWS]->(b:Person) WHERE k.since > 2000 RETURN a.name, b.name",
    "MATCH (c:Crime) WITH c.type AS t, count(*) AS n WHERE n > 1 RETURN t, n ORDER BY n DESC",
    "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(c:Crime) RETURN o.name, count(c) AS n ORDER BY n DESC",
    "MATCH (p:Person) WHERE p.name IN ['Ada', 'Alan'] RETURN [x IN collect(p.surname) | toUpper(x)] AS s",
    "MATCH (p:Person) WITH collect(p.age) AS ages RETURN reduce(total = 0, a IN ages | total + a) AS t",
    "MATCH (p:Person) WHERE (p)-[:PARTY_TO]->(:Crime) RETURN p.name",
    "UNWIND ['Ada', 'Bob'] AS name MATCH (p:Person {name: name}) RETURN p.surname",
    "MATCH (p:Person) RETURN p.name AS name UNION MATCH (o:Officer) RETURN o.name AS name",
    "MATCH path = (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN length(path), b.name",
    "MATCH (c:Crime)-[:OCCURRED_AT]->(l:Location) RETURN l.address, count(c) AS crimes",
    "CALL db.labels() YIELD label RETURN label",
    "MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n",
    "MATCH (p:Person) WITH p ORDER BY p.age DESC LIMIT 2 RETURN p.name",
    "MATCH (p:Person) RETURN p.name AS select, p.age AS having",
]


@pytest.mark.parametrize("query", VALID)
def test_queries_that_run_correctly_get_no_finding(
    query: str, crime: GraphEngine, index: GraphIndex
) -> None:
    crime.execute(query)  # every case is valid on the engine
    report = check_query(query, index)
    assert report.parsed and report.findings == [], [f.message for f in report.findings]


def test_reversed_direction_is_found_and_repaired(crime: GraphEngine, index: GraphIndex) -> None:
    query = "MATCH (c:Crime)-[r:PARTY_TO]->(p:Person) RETURN count(p) AS n"
    assert crime.execute(query).rows == [[0]]
    (finding,) = check_query(query, index).findings
    assert finding.code == "reversed_direction"
    assert "(:Person)-[:PARTY_TO]->(:Crime)" in finding.message
    repaired, applied = apply_edits(query, [finding])
    assert applied == [finding]
    assert repaired == "MATCH (c:Crime)<-[r:PARTY_TO]-(p:Person) RETURN count(p) AS n"
    assert crime.execute(repaired).rows == [[3]]
    assert check_query(repaired, index).ok


def test_direction_is_judged_from_labels_bound_elsewhere(index: GraphIndex) -> None:
    query = "MATCH (c:Crime) MATCH (c)-[:PARTY_TO]->(p) RETURN p"
    (finding,) = check_query(query, index).findings
    assert finding.code == "reversed_direction"
    repaired, _ = apply_edits(query, [finding])
    assert repaired == "MATCH (c:Crime) MATCH (c)<-[:PARTY_TO]-(p) RETURN p"


def test_bracketless_arrow_is_flipped(index: GraphIndex) -> None:
    query = "MATCH (o:Officer)-->(c:Crime) RETURN c"
    assert codes(query, index) == []  # an untyped arrow names no type to check
    query = "MATCH (o:Officer)-[:INVESTIGATED_BY]->(c:Crime) RETURN c"
    (finding,) = check_query(query, index).findings
    assert (
        apply_edits(query, [finding])[0]
        == "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(c:Crime) RETURN c"
    )


def test_type_between_wrong_labels_gets_the_one_missing_hop(
    crime: GraphEngine, index: GraphIndex
) -> None:
    query = "MATCH (p:Person)-[:INVESTIGATED_BY]->(o:Officer) RETURN count(DISTINCT o) AS n"
    (finding,) = check_query(query, index).findings
    assert finding.code == "wrong_endpoints"
    assert "(:Crime)-[:INVESTIGATED_BY]->(:Officer)" in finding.message
    repaired = apply_edits(query, [finding])[0]
    # INVESTIGATED_BY only leaves Crime, and PARTY_TO is the only type between Person and Crime
    assert repaired == (
        "MATCH (p:Person)-[:PARTY_TO]->(:Crime)-[:INVESTIGATED_BY]->(o:Officer) "
        "RETURN count(DISTINCT o) AS n"
    )
    assert check_query(repaired, index).ok
    assert crime.execute(repaired).rows[0][0] > 0


@pytest.mark.parametrize(
    ("query", "repaired"),
    [
        # the type is right at the target, written in either direction
        (
            "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(p:Person) RETURN count(DISTINCT o) AS n",
            "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(:Crime)<-[:PARTY_TO]-(p:Person) "
            "RETURN count(DISTINCT o) AS n",
        ),
        # the type is right at the source, written in either direction
        (
            "MATCH (p:Person)-[:PARTY_TO]->(o:Officer) RETURN count(DISTINCT o) AS n",
            "MATCH (p:Person)-[:PARTY_TO]->(:Crime)-[:INVESTIGATED_BY]->(o:Officer) "
            "RETURN count(DISTINCT o) AS n",
        ),
        (
            "MATCH (o:Officer)<-[:PARTY_TO]-(p:Person) RETURN count(DISTINCT o) AS n",
            "MATCH (o:Officer)<-[:INVESTIGATED_BY]-(:Crime)<-[:PARTY_TO]-(p:Person) "
            "RETURN count(DISTINCT o) AS n",
        ),
    ],
)
def test_the_missing_hop_goes_on_the_side_the_type_does_not_join(
    crime: GraphEngine, index: GraphIndex, query: str, repaired: str
) -> None:
    (finding,) = check_query(query, index).findings
    assert finding.code == "wrong_endpoints"
    assert apply_edits(query, [finding])[0] == repaired
    assert check_query(repaired, index).ok
    assert crime.execute(repaired).rows[0][0] > 0


def test_no_path_edit_without_a_join_to_the_other_endpoint(index: GraphIndex) -> None:
    # OCCURRED_AT joins only Crime to Location: neither endpoint here is one of them
    query = "MATCH (p:Person)-[:OCCURRED_AT]->(o:Officer) RETURN o"
    (finding,) = check_query(query, index).findings
    assert finding.code == "wrong_endpoints" and finding.edit is None


def test_second_hop_moves_to_the_node_its_type_joins(crime: GraphEngine, index: GraphIndex) -> None:
    query = (
        "MATCH (c:Crime)-[:INVESTIGATED_BY]->(o:Officer)-[:OCCURRED_AT]->(l:Location) "
        "RETURN count(DISTINCT l) AS n"
    )
    (finding,) = check_query(query, index).findings
    repaired = apply_edits(query, [finding])[0]
    assert repaired == (
        "MATCH (c:Crime)-[:INVESTIGATED_BY]->(o:Officer), (c)-[:OCCURRED_AT]->(l:Location) "
        "RETURN count(DISTINCT l) AS n"
    )
    assert check_query(repaired, index).ok
    assert crime.execute(repaired).rows == [[1]]


def test_property_read_on_the_wrong_label_reads_it_one_hop_away(
    crime: GraphEngine, index: GraphIndex
) -> None:
    query = (
        "MATCH (c:Crime) WHERE c.type = 'Burglary' RETURN c.address AS address ORDER BY c.address"
    )
    report = check_query(query, index)
    repaired = apply_edits(query, report.findings)[0]
    assert repaired == (
        "MATCH (c:Crime), (c)-[:OCCURRED_AT]->(cLocation:Location) WHERE c.type = 'Burglary' "
        "RETURN cLocation.address AS address ORDER BY cLocation.address"
    )
    assert check_query(repaired, index).ok
    assert crime.execute(repaired).rows == [["1 Piccadilly"], ["1 Piccadilly"]]


def test_property_read_is_not_moved_when_two_neighbours_have_the_key(index: GraphIndex) -> None:
    # both Person and Officer next to Crime have a name
    query = "MATCH (c:Crime) RETURN c.name"
    (finding,) = check_query(query, index).findings
    assert finding.code == "property_not_on_label" and finding.edit is None


def test_unknown_names_with_case_repairs(crime: GraphEngine, index: GraphIndex) -> None:
    query = "MATCH (p:person)-[:party_to]->(c:Crimes) RETURN p.name"
    report = check_query(query, index)
    assert [f.code for f in report.findings] == [
        "unknown_label",
        "unknown_label",
        "unknown_relationship_type",
    ]
    by_name = {query[f.span[0] : f.span[1]]: f for f in report.findings if f.span}
    assert by_name["person"].edit is not None and by_name["party_to"].edit is not None
    assert by_name["Crimes"].edit is None and by_name["Crimes"].suggestions[0] == "Crime"
    repaired, applied = apply_edits(query, report.findings)
    assert (
        repaired == "MATCH (p:Person)-[:PARTY_TO]->(c:Crimes) RETURN p.name" and len(applied) == 2
    )


def test_property_on_the_wrong_label(index: GraphIndex) -> None:
    (finding,) = check_query("MATCH (c:Crime) RETURN c.gender", index).findings
    assert finding.code == "property_not_on_label"
    assert "Person" in finding.message
    # the one neighbour with the key: read it there
    assert finding.edit is not None
    assert finding.edit.replacement == ", (c)<-[:PARTY_TO]-(cPerson:Person) RETURN cPerson.gender"
    (unknown,) = check_query("MATCH (p:Person) RETURN p.colour", index).findings
    assert unknown.code == "unknown_property"
    (cased,) = check_query("MATCH (p:Person) RETURN p.Name", index).findings
    assert cased.edit is not None and cased.edit.replacement == "name"
    (rel,) = check_query("MATCH (:Person)-[k:KNOWS]->() RETURN k.weight", index).findings
    assert rel.code == "unknown_property"
    (in_map,) = check_query("MATCH (c:Crime {name: 'x'}) RETURN c", index).findings
    assert in_map.code == "property_not_on_label"


def test_undefined_variable(crime: GraphEngine, index: GraphIndex) -> None:
    query = "MATCH (c:Crime) WITH c.type AS t, count(*) AS n RETURN t, n, c"
    (finding,) = check_query(query, index).findings
    assert finding.code == "undefined_variable" and "'c'" in finding.message


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
    findings = check_query(query, index).findings
    assert [f.code for f in findings] == ["sql_habit"]
    assert words.split()[0].lower() in findings[0].message.lower() or words in findings[0].message


def test_not_equal_is_repaired(crime: GraphEngine, index: GraphIndex) -> None:
    query = "MATCH (c:Crime) WHERE c.type != 'Drugs' AND c.id <> '!=' RETURN count(c)"
    (finding,) = check_query(query, index).findings
    repaired, _ = apply_edits(query, [finding])
    assert repaired == "MATCH (c:Crime) WHERE c.type <> 'Drugs' AND c.id <> '!=' RETURN count(c)"
    assert crime.execute(repaired).rows == [[2]]


@pytest.mark.parametrize(
    ("query", "repaired", "rows"),
    [
        (
            "MATCH (p:Person) WHERE p.name NOT IN ['Ada', 'Alan'] RETURN p.surname AS surname",
            "MATCH (p:Person) WHERE NOT p.name IN ['Ada', 'Alan'] RETURN p.surname AS surname",
            [["Hopper"]],
        ),
        (
            "MATCH (c:Crime) WHERE c.type = 'Burglary' AND c.id NOT IN ['c1'] RETURN c.id AS id",
            "MATCH (c:Crime) WHERE c.type = 'Burglary' AND NOT c.id IN ['c1'] RETURN c.id AS id",
            [["c3"]],
        ),
        (
            "MATCH (p:Person) ORDER BY p.age DESC LIMIT 2 RETURN p.name AS name",
            "MATCH (p:Person) WITH * ORDER BY p.age DESC LIMIT 2 RETURN p.name AS name",
            [["Grace"], ["Alan"]],
        ),
        (
            "MATCH (p:Person) WHERE p.age > 40 ORDER BY p.age SKIP 1 RETURN p.name AS name",
            "MATCH (p:Person) WHERE p.age > 40 WITH * ORDER BY p.age SKIP 1 RETURN p.name AS name",
            [["Grace"]],
        ),
        (
            "MATCH (a:Person)-[:KNOWS {since: INTEGER}]->(b:Person) RETURN b.name AS name",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.name AS name",
            [["Alan"]],
        ),
        (
            "MATCH (o:Officer {name: STRING, rank: STRING}) RETURN o.name AS name",
            "MATCH (o:Officer) RETURN o.name AS name",
            [["Jane"]],
        ),
    ],
)
def test_shapes_the_engine_rejects_are_rewritten_as_cypher(
    query: str, repaired: str, rows: list[list[object]], crime: GraphEngine, index: GraphIndex
) -> None:
    from cypherturn.errors import QueryError

    with pytest.raises(QueryError):
        crime.execute(query)
    fixed, applied = apply_edits(query, check_query(query, index).findings)
    assert fixed == repaired and applied
    assert crime.execute(fixed).rows == rows
    assert all(f.edit is None for f in check_query(fixed, index).findings)


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (p:Person) RETURN p.name NOT IN ['Ada'] AS other",  # not a predicate
        "MATCH (p:Person) WHERE NOT p.name IN ['Ada'] RETURN p.name",  # already Cypher
        "MATCH (p:Person) RETURN p.name AS name ORDER BY name LIMIT 2",  # after RETURN
        "MATCH (p:Person) ORDER BY p.age LIMIT 2",  # no RETURN to keep
        "MATCH (p:Person {name: 'Ada'}) RETURN p.age",  # a value, not a type
        "MATCH (p:Person {name: name}) RETURN p.age",  # a variable, not a type name
        # WITH * would make the LIMIT cut rows before the aggregate instead of groups
        "MATCH (c:Crime)-[:OCCURRED_AT]->(l:Location) ORDER BY c.id LIMIT 1 RETURN count(c) AS n",
        "MATCH (p:Person) WHERE p.limit > 4 RETURN p.name",  # a key spelt like a keyword
        "UNWIND [1, 2] AS limit RETURN limit",
        "WITH 'Ada' AS STRING MATCH (p:Person {name: STRING}) RETURN p.age",  # a bound variable
    ],
)
def test_shapes_that_are_not_rewritten(query: str, index: GraphIndex) -> None:
    fixed, _ = apply_edits(query, check_query(query, index).findings)
    assert fixed == query


def test_unparsable_query_gets_no_verdict(index: GraphIndex) -> None:
    report = check_query("MATCH (p:Persn RETURN p", index)
    assert not report.parsed and report.findings == [] and report.parse_error
    assert not check_query("MATCH (p:Person) RETURN 'unterminated", index).parsed


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("MATCH (c:Crime) WHERE c.type = 'BURGLARY' RETURN count(c)", "'Burglary'"),
        ("MATCH (c:Crime {type: 'burglary'}) RETURN count(c)", "'Burglary'"),
        ("MATCH (o:Officer) WHERE o.rank IN ['sergeant'] RETURN o.name", "'Sergeant'"),
        ("MATCH (c:Crime) WHERE 'drugs' = c.type RETURN c.id", "'Drugs'"),
        ("MATCH (c:Crime) WHERE toLower(c.type) = 'Burglary' RETURN c.id", "'burglary'"),
    ],
)
def test_a_literal_with_one_case_insensitive_match_is_repaired(
    query: str, stored: str, crime: GraphEngine, index: GraphIndex
) -> None:
    before = crime.execute(query).rows
    assert before in ([], [[0]])
    (finding,) = check_values(query, index)
    assert finding.code == "value_not_found" and finding.edit is not None
    assert finding.edit.replacement == stored
    repaired, _ = apply_edits(query, [finding])
    after = crime.execute(repaired).rows
    assert after not in ([], [[0]])
    assert check_values(repaired, index) == []


def test_a_literal_with_no_match_lists_the_nearest_values(index: GraphIndex) -> None:
    (gender,) = check_values("MATCH (p:Person) WHERE p.gender = 'female' RETURN count(p)", index)
    assert gender.edit is None and gender.suggestions[0] == "F"
    (typo,) = check_values("MATCH (c:Crime) WHERE c.type = 'Burglery' RETURN c", index)
    assert typo.suggestions == ["Burglary"] and typo.edit is None
    (elsewhere,) = check_values("MATCH (l:Location) WHERE l.address = 'Burglary' RETURN l", index)
    assert "Crime.type = 'Burglary'" in elsewhere.message


def test_stored_literals_and_other_operators_are_not_findings(index: GraphIndex) -> None:
    assert check_values("MATCH (c:Crime) WHERE c.type = 'Drugs' RETURN c", index) == []
    assert check_values("MATCH (l:Location) WHERE l.address CONTAINS 'Picc' RETURN l", index) == []
    (missing,) = check_values(
        "MATCH (l:Location) WHERE l.address CONTAINS 'Oxford' RETURN l", index
    )
    assert missing.edit is None
    assert check_values("MATCH (c:Crime) WHERE c.type <> 'Nothing' RETURN c", index) == []
    assert check_values("MATCH (c) WHERE c.type = 'Nothing' RETURN c", index) == []  # no label


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
    from cypherturn.errors import QueryError

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


def test_nested_access_and_namespaced_functions(index: GraphIndex) -> None:
    (nested,) = check_query("MATCH (p:Person) WHERE p.ageGroup.name = 'x' RETURN p", index).findings
    assert nested.code == "unknown_property" and "'ageGroup'" in nested.message
    assert check_query("MATCH (c:Crime) RETURN date.truncate('month', date(c.date)) AS m", index).ok


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


def test_a_property_of_the_neighbouring_label_is_reached_through_its_one_hop(
    crime: GraphEngine, index: GraphIndex
) -> None:
    query = "MATCH (c:Crime) WHERE c.rank = 'Sergeant' AND c.type = 'Burglary' RETURN count(c) AS n"
    assert crime.execute(query).rows == [[0]]
    (finding,) = check_query(query, index).findings
    assert finding.code == "property_not_on_label" and finding.edit is not None
    repaired, _ = apply_edits(query, [finding])
    assert repaired == (
        "MATCH (c:Crime) WHERE (c)-[:INVESTIGATED_BY]->(:Officer {rank: 'Sergeant'}) "
        "AND c.type = 'Burglary' RETURN count(c) AS n"
    )
    assert crime.execute(repaired).rows == [[1]] and check_query(repaired, index).ok
    backwards = "MATCH (c:Crime) WHERE c.gender = 'M' RETURN c.id"
    fixed, _ = apply_edits(backwards, check_query(backwards, index).findings)
    assert fixed == "MATCH (c:Crime) WHERE (c)<-[:PARTY_TO]-(:Person {gender: 'M'}) RETURN c.id"
    assert crime.execute(fixed).rows == [["c2"]]


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (c:Crime) WHERE c.rank = 'Constable' RETURN count(c)",  # no Officer stores it
        "MATCH (c:Crime) WHERE c.rank <> 'Sergeant' RETURN count(c)",  # not an equality
        "MATCH (c:Crime) RETURN c.rank = 'Sergeant' AS r",  # not a WHERE predicate
        "MATCH (p:Person) WHERE p.address = '1 Piccadilly' RETURN p",  # Location is two hops away
    ],
)
def test_no_hop_repair_where_it_is_not_unambiguous(query: str, index: GraphIndex) -> None:
    findings = check_query(query, index).findings
    assert findings and all(f.edit is None for f in findings if f.code == "property_not_on_label")


def test_a_string_compared_with_a_date_property_is_repaired_as_a_date(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine("dated")
    engine.write("CREATE (:Crime {date: date('2017-08-15')}), (:Crime {date: date('2017-08-16')})")
    index = graph_index(engine)
    query = "MATCH (c:Crime) WHERE c.date = '2017-08-15' RETURN count(c) AS n"
    assert engine.execute(query).rows == [[0]]
    (finding,) = check_query(query, index).findings
    assert finding.code == "literal_type" and "DATE" in finding.message
    repaired, _ = apply_edits(query, [finding])
    assert repaired == "MATCH (c:Crime) WHERE c.date = date('2017-08-15') RETURN count(c) AS n"
    assert engine.execute(repaired).rows == [[1]] and check_query(repaired, index).ok
    (unfixable,) = check_query("MATCH (c:Crime) WHERE c.date = 'August' RETURN c", index).findings
    assert unfixable.code == "literal_type" and unfixable.edit is None


def test_a_type_that_cannot_join_the_endpoints_becomes_the_one_that_does(
    crime: GraphEngine, index: GraphIndex
) -> None:
    cases = {
        "MATCH (p:Person)-[:INVOLVED_IN]->(c:Crime) RETURN count(c) AS n": (
            "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) RETURN count(c) AS n",
            [[3]],
        ),
        "MATCH (o:Officer)-[r:PARTY_TO]->(c:Crime) RETURN count(r) AS n": (
            "MATCH (o:Officer)<-[r:INVESTIGATED_BY]-(c:Crime) RETURN count(r) AS n",
            [[2]],
        ),
    }
    for query, (expected, rows) in cases.items():
        (finding,) = check_query(query, index).findings
        assert finding.code in ("unknown_relationship_type", "wrong_endpoints")
        repaired, _ = apply_edits(query, [finding])
        assert repaired == expected and crime.execute(repaired).rows == rows
        assert check_query(repaired, index).ok
    for ambiguous in (
        "MATCH (p:Person)-[:PARTY_TO]->(q:Person) RETURN p",  # same label at both ends
        "MATCH (p:Person)-[:INVOLVED_IN]->(x) RETURN p",  # an endpoint without a label
        "MATCH (p:Person)-[:INVOLVED_IN*1..2]->(c:Crime) RETURN p",  # variable length
    ):
        assert all(f.edit is None for f in check_query(ambiguous, index).findings)


HARBOUR_GRAPH = """
CREATE (s1:Storehouse {name: 'Gavos Granary'}), (s2:Storehouse {name: 'Josa Vault'}),
       (s3:Storehouse {name: 'Mora Store'}),
       (t1:Territory {name: 'Nima Quay'}), (t2:Territory {name: 'Wyla Reach'}),
       (t3:Territory {name: 'Gavara Quay'}),
       (tr:Trader {name: 'Quilir Kelir'}), (b:Buyer {name: 'Mora Store'}),
       (i:Invoice {name: 'INV-1'}),
       (s1)-[:DOCKED_IN]->(t1), (s2)-[:DOCKED_IN]->(t2), (s3)-[:DOCKED_IN]->(t3),
       (tr)-[:OPERATES_IN]->(t1), (b)-[:VISITS]->(t3), (i)-[:ISSUED_BY]->(tr)
"""


@pytest.fixture
def harbour(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("harbour")
    engine.write(HARBOUR_GRAPH)
    return engine


def test_names_of_the_neighbouring_label_become_a_hop_to_those_nodes(
    harbour: GraphEngine,
) -> None:
    index = graph_index(harbour)
    query = (
        "MATCH (n:Territory) WHERE n.name IN ['Gavos Granary', 'Josa Vault'] "
        "RETURN n.name AS name ORDER BY name"
    )
    assert harbour.execute(query).rows == []
    findings = check_values(query, index)
    assert [f.code for f in findings] == ["value_not_found", "value_not_found"]
    repaired, applied = apply_edits(query, findings)
    assert len(applied) == 1
    assert repaired == (
        "MATCH (n:Territory) WHERE ((n)<-[:DOCKED_IN]-(:Storehouse {name: 'Gavos Granary'}) "
        "OR (n)<-[:DOCKED_IN]-(:Storehouse {name: 'Josa Vault'})) RETURN n.name AS name ORDER BY name"
    )
    assert harbour.execute(repaired).rows == [["Nima Quay"], ["Wyla Reach"]]
    assert check_values(repaired, index) == []
    single = "MATCH (s:Storehouse) WHERE s.name = 'Wyla Reach' RETURN s.name AS name"
    fixed, _ = apply_edits(single, check_values(single, index))
    assert fixed == (
        "MATCH (s:Storehouse) WHERE (s)-[:DOCKED_IN]->(:Territory {name: 'Wyla Reach'}) "
        "RETURN s.name AS name"
    )
    assert harbour.execute(fixed).rows == [["Josa Vault"]]
    rest = "MATCH (n:Territory) WHERE NOT n.name IN ['Gavos Granary'] RETURN count(n) AS count"
    complement, _ = apply_edits(rest, check_values(rest, index))
    assert harbour.execute(complement).rows == [[2]]


@pytest.mark.parametrize(
    "query",
    [
        # one literal is a Territory name: the list is not the neighbour's
        "MATCH (n:Territory) WHERE n.name IN ['Gavos Granary', 'Nima Quay', 'Josa Vault'] RETURN n",
        # a Storehouse and a Buyer, both next to Territory, are called 'Mora Store'
        "MATCH (n:Territory) WHERE n.name = 'Mora Store' RETURN n",
        # invoices are two hops from territories
        "MATCH (n:Territory) WHERE n.name = 'INV-1' RETURN n",
        # not a whole predicate
        "MATCH (n:Territory) RETURN n.name IN ['Gavos Granary'] AS docked",
        # an expression whose value is used, not a filter
        "MATCH (n:Territory) RETURN (n.name IN ['Gavos Granary']) AS docked",
        "MATCH (n:Territory) WHERE any(x IN [1] WHERE n.name = 'Gavos Granary') RETURN n",
        # two tests of the same property: which one meant the neighbour is unclear
        "MATCH (n:Territory) WHERE n.name = 'Gavos Granary' OR n.name = 'Zzz' RETURN n",
        # the list holds something other than string literals
        "MATCH (n:Territory) WHERE n.name IN ['Gavos Granary', 1] RETURN n",
    ],
)
def test_no_neighbour_hop_where_it_is_not_unambiguous(query: str, harbour: GraphEngine) -> None:
    findings = check_values(query, graph_index(harbour))
    repaired, _ = apply_edits(query, findings)
    assert "DOCKED_IN" not in repaired and "VISITS" not in repaired


@pytest.mark.parametrize(
    ("query", "repaired"),
    [
        (
            "MATCH (n) WHERE n.rank = 'Sergeant' RETURN n.name AS name",
            "MATCH (n:Officer) WHERE n.rank = 'Sergeant' RETURN n.name AS name",
        ),
        # a relationship type narrows the labels of a key two labels hold
        (
            "MATCH (a:Person)-[:KNOWS]->(b) WHERE b.name = 'Alan' RETURN a.name",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.name = 'Alan' RETURN a.name",
        ),
        (
            "MATCH (n {rank: 'Sergeant'}) RETURN n.name",
            "MATCH (n:Officer {rank: 'Sergeant'}) RETURN n.name",
        ),
        (
            "MATCH (c)<-[:PARTY_TO]-(p:Person) WHERE c.type = 'Drugs' RETURN p.name",
            "MATCH (c:Crime)<-[:PARTY_TO]-(p:Person) WHERE c.type = 'Drugs' RETURN p.name",
        ),
    ],
)
def test_a_label_the_keys_and_types_imply_is_added_and_keeps_the_rows(
    query: str, repaired: str, crime: GraphEngine, index: GraphIndex
) -> None:
    (finding,) = check_query(query, index).findings
    assert finding.code == "missing_label"
    fixed, _ = apply_edits(query, [finding])
    assert fixed == repaired
    assert check_query(fixed, index).findings == []
    assert sorted(crime.execute(fixed).rows) == sorted(crime.execute(query).rows) != []


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (n) RETURN n.name AS name",  # name: Person and Officer
        "MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n",  # no evidence
        "MATCH (n) WHERE n.rank = 'Sergeant' AND n.age > 30 RETURN n.name",  # no label has both
        "MATCH (n)-[:KNOWS]->(m) RETURN count(*) AS n",  # types alone, no key
        # keys that do not keep only the nodes holding them: the label would change the rows
        "MATCH (n) WHERE n.rank IS NULL RETURN count(n) AS n",
        "MATCH (n) WHERE n.name = 'Ada' OR n.rank = 'Sergeant' RETURN n.name",
        "MATCH (n) WHERE NOT n.rank = 'Sergeant' RETURN n.name",
        "MATCH (n) RETURN count(n) AS all, count(n.rank) AS ranked",
        "MATCH (n) WHERE coalesce(n.rank, 'none') = 'none' RETURN n.name",
        "MATCH (n) WHERE any(x IN ['Sergeant'] WHERE n.rank = x) RETURN n.name",
        "MATCH (a:Person)-[k:KNOWS]->(b) WHERE k.since > 2000 RETURN a.name, b.name",
        # alternatives: either type's ends (name: Person and Officer, both ends of one)
        "MATCH (n)-[:PARTY_TO|INVESTIGATED_BY]-(m) WHERE n.name = 'Jane' RETURN m",
        "MATCH (p:Person) WITH p.name AS n RETURN n",  # rebound, not a node
    ],
)
def test_no_label_is_guessed_without_a_single_candidate(query: str, index: GraphIndex) -> None:
    assert "missing_label" not in codes(query, index)
