"""Binding a follow-up's "those" to the previous result's names, on the real engine."""

from __future__ import annotations

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.grounding import (
    GraphIndex,
    PreviousResult,
    apply_edits,
    bind_reference,
    points_to_previous,
    previous_names,
    question_repairs,
    refers_to_previous,
)

PEOPLE = PreviousResult(label="Person", names=["Ada", "Alan"])


@pytest.mark.parametrize(
    ("question", "refers"),
    [
        ("Which crimes are those people party to?", True),
        ("What is their average age?", True),
        ("only the ones whose gender is F", True),
        ("how many of the people in your last result are there?", True),
        ("Can you add up the ages of the people you just listed?", True),
        ("Which people are not among those?", False),  # a complement
        ("the rest of them", False),
        ("the crimes of the second one in your answer from turn 3", False),
        ("Forget that. Which officers are there?", False),
        ("Which people are female?", False),
        ("Which people are aged above 40?", False),  # a comparative, not "the X above"
        ("the people listed above", True),
        ("What about the ones who are male?", False),  # a new condition, not a subset
        ("Which of them instead?", False),
        ("the crimes of the one of those people who is the oldest", True),
    ],
)
def test_which_questions_refer_to_the_whole_previous_result(question: str, refers: bool) -> None:
    assert refers_to_previous(question) is refers


def test_a_result_of_names_stored_on_one_label_is_a_previous_result(index: GraphIndex) -> None:
    assert previous_names(["name"], [["Ada"], ["Alan"]], index) == PEOPLE
    assert previous_names(["name"], [["Jane"]], index) == PreviousResult(
        label="Officer", names=["Jane"]
    )
    assert previous_names(["type"], [["Burglary"]], index) is None  # not a name
    assert previous_names(["name"], [["Ada"], ["Nobody"]], index) is None
    assert previous_names(["name", "age"], [["Ada", 36]], index) is None
    assert previous_names(["count"], [[3]], index) is None
    assert previous_names(["name"], [], index) is None


@pytest.mark.parametrize(
    ("question", "query", "expected", "rows"),
    [
        (
            "Which crimes are those people party to?",
            "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) RETURN DISTINCT c.id AS id",
            "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE p.name IN ['Ada', 'Alan'] "
            "RETURN DISTINCT c.id AS id",
            [["c1"], ["c2"]],
        ),
        (
            "How many of them are over 30 or female?",
            "MATCH (p:Person) WHERE p.age > 30 OR p.gender = 'F' RETURN count(p) AS count",
            "MATCH (p:Person) WHERE p.name IN ['Ada', 'Alan'] AND (p.age > 30 OR p.gender = 'F') "
            "RETURN count(p) AS count",
            [[2]],  # Grace (50, F) is not one of them: the OR stays inside the bound
        ),
        (
            "What is their total age?",
            "MATCH (p:Person) RETURN sum(p.age) AS total",
            "MATCH (p:Person) WHERE p.name IN ['Ada', 'Alan'] RETURN sum(p.age) AS total",
            [[77]],
        ),
    ],
)
def test_a_follow_up_is_bound_to_the_previous_names(
    question: str,
    query: str,
    expected: str,
    rows: list[list[object]],
    crime: GraphEngine,
    index: GraphIndex,
) -> None:
    finding = bind_reference(question, query, PEOPLE, index)
    assert finding is not None and finding.code == "unbound_reference"
    repaired, applied = apply_edits(query, [finding])
    assert repaired == expected and applied == [finding]
    assert sorted(crime.execute(repaired).rows) == rows


@pytest.mark.parametrize(
    ("question", "query", "previous"),
    [
        ("What is their average age?", "MATCH (p:Person) RETURN avg(p.age) AS a", None),
        ("Which people are female?", "MATCH (p:Person) WHERE p.gender = 'F' RETURN p.name", PEOPLE),
        ("the rest of them", "MATCH (p:Person) RETURN p.name AS name", PEOPLE),
        (
            "Their average age?",
            "MATCH (p:Person) WHERE p.name = 'Ada' RETURN avg(p.age) AS a",
            PEOPLE,
        ),
        ("Their average age?", "MATCH (p:Person {name: 'Ada'}) RETURN avg(p.age)", PEOPLE),
        (
            "Their crimes?",
            "MATCH (c:Crime) OPTIONAL MATCH (p:Person)-[:PARTY_TO]->(c) RETURN c.id",
            PEOPLE,
        ),
        ("Their officers?", "MATCH (o:Officer) RETURN o.name AS name", PEOPLE),
        (
            "Who do those people know?",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.name AS name",
            PEOPLE,  # two Person variables: which one "those people" are is not clear
        ),
        (
            "Their ages?",
            "MATCH (p:Person) RETURN p.age UNION MATCH (p:Person) RETURN p.age",
            PEOPLE,
        ),
        (
            "Who knows them?",  # the reference is written on the unlabelled end
            "MATCH (p:Person)-[:KNOWS]->(q) WHERE q.name IN ['Ada', 'Alan'] RETURN p.name",
            PEOPLE,
        ),
        (
            "Who do those people know?",  # KNOWS joins Person to Person: p may be the ones meant
            "MATCH (p)-[:KNOWS]->(q:Person) RETURN q.name",
            PEOPLE,
        ),
        (
            "Their crimes?",  # a comment could swallow the moved condition
            "MATCH (p:Person)-[:PARTY_TO]->(c:Crime)\nWHERE c.type = 'Burglary' // only\n"
            "RETURN c.id",
            PEOPLE,
        ),
        ("Their ages?", "MATCH (`the p`:Person) RETURN `the p`.age", PEOPLE),
        ("Their youngest?", "MATCH (p:Person) ORDER BY p.age LIMIT 1", PEOPLE),
        ("Their ages?", "MATCH (p:Person)", PEOPLE),
    ],
)
def test_no_binding_where_the_reference_is_not_clear_or_already_written(
    question: str, query: str, previous: PreviousResult | None, index: GraphIndex
) -> None:
    assert bind_reference(question, query, previous, index) is None


def test_the_question_repairs_bind_and_list_in_one_pass(
    crime: GraphEngine, index: GraphIndex
) -> None:
    query = "MATCH (p:Person {gender: 'F'}) RETURN count(p) AS count"
    question = "only the ones who are female"
    repaired, applied, left = question_repairs(
        query, question, index, previous=PEOPLE, reference=True
    )
    assert repaired == (
        "MATCH (p:Person {gender: 'F'}) WHERE p.name IN ['Ada', 'Alan'] RETURN DISTINCT p.name"
    )
    assert {f.code for f in applied} == {"answer_shape", "unbound_reference"} and left == []
    assert crime.execute(repaired).rows == [["Ada"]]
    unchanged, none, found = question_repairs(
        query, question, index, repair=False, previous=PEOPLE, reference=True
    )
    assert unchanged == query and none == []
    assert {f.code for f in found} == {"answer_shape", "unbound_reference"}
    without = question_repairs(query, question, index, previous=PEOPLE, asked=False)
    assert without == (query, [], [])


@pytest.mark.parametrize(
    ("question", "refers"),
    [
        # the pronoun's antecedent is in the question itself: a standalone question
        ("How many vehicles are there, and what are their makes?", False),
        ("For each officer, how many crimes did they investigate?", False),
        ("Which crimes mention a weapon, and where did these crimes happen?", False),
        ("For each area, list the streets and the crimes on them", False),
        # nothing before the word can be what it stands for: it points back
        ("How many of those are burglaries?", True),
        ("Where did those crimes happen?", True),
        ("What are their names?", True),
        # the assistant's earlier output named in other words than the templates'
        ("Which of the streets you showed have the most crimes?", True),
        ("Add up the ages in your previous answer", True),
        ("How many people are on that list?", True),
    ],
)
def test_a_reference_counts_only_without_an_antecedent_in_the_question(
    question: str, refers: bool
) -> None:
    assert refers_to_previous(question) is refers


@pytest.mark.parametrize(
    ("question", "points"),
    [
        ("What are their birth years?", True),
        ("Which of those were born before 1900?", True),
        ("Which of those people were born before 1900?", True),
        ("In which cities do those people live?", True),
        ("Which people live in New York, and what are their birth years?", False),
        ("How many people live in those cities?", False),
        ("Which of those cities is largest?", False),
        ("And the rest of them?", False),
        ("Who lives in New York?", False),
        # a change of topic in words no rule lists: the noun after "those" decides
        ("Switching subjects: how big are those cities?", False),
    ],
)
def test_a_reference_word_points_at_the_listed_people_or_elsewhere(
    question: str, points: bool
) -> None:
    assert points_to_previous(question, "Person", ["Person", "City"]) is points


def test_a_reference_to_another_label_binds_nothing(index: GraphIndex) -> None:
    query = "MATCH (p:Person) RETURN p.age"
    assert bind_reference("Their ages?", query, PEOPLE, index) is not None
    assert bind_reference("And those crimes?", query, PEOPLE, index) is None
