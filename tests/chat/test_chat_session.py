"""`api.ChatSession` on the real embedded engine with replay models: follow-ups, scope, transcripts.

A replay model returns recorded completions in order: under ``ras+`` an
answered question takes one verified candidate, then one call for the answer
in words. The tests assert what the product guarantees (the query
recorded is the one that ran, answer numbers come from the rows, the context
carries the earlier turns, a transcript reloads as saved), not any wording.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn import api
from cypherturn.answers import NO_DATA, unsupported_numbers
from cypherturn.chat import (
    ChatTurn,
    read_transcript,
    refers_back,
    scope_problem,
    stem,
)
from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.grounding import graph_index
from cypherturn.models import ReplayChatModel

PER_CITY = (
    "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN c.name AS city, count(p) AS people ORDER BY city"
)
OLD_LONDONERS = (
    "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'London'}) WHERE p.born < 1900 "
    "RETURN p.name AS name, p.born AS born"
)


@pytest.fixture
def town(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("chat")
    engine.write(
        "CREATE (ada:Person {name: 'Ada Lovelace', born: 1815}),"
        " (alan:Person {name: 'Alan Turing', born: 1912}),"
        " (grace:Person {name: 'Grace Hopper', born: 1906}),"
        " (london:City {name: 'London'}), (ny:City {name: 'New York'}),"
        " (ada)-[:LIVES_IN]->(london), (alan)-[:LIVES_IN]->(london),"
        " (grace)-[:LIVES_IN]->(ny)"
    )
    return engine


def _config(engine: GraphEngine, tmp_path: Path | None = None, **extra: object) -> api.ChatConfig:
    transcript = tmp_path / "chat.json" if tmp_path is not None else None
    return api.ChatConfig(graph=engine.graph, budget=2, transcript=transcript, **extra)


def test_a_follow_up_is_resolved_against_the_earlier_turn(town: GraphEngine) -> None:
    model = ReplayChatModel(
        [
            PER_CITY,
            "London has 2 people and New York has 1.",
            OLD_LONDONERS,
            "Only Ada Lovelace, born in 1815.",
        ]
    )
    with api.ChatSession(_config(town), model=model) as chat:
        first = chat.ask("How many people live in each city?")
        follow = chat.ask("Which of those in London were born before 1900?")
    assert first.outcome == "answered" and first.query == PER_CITY
    assert first.result is not None and first.result.rows == [["London", 2], ["New York", 1]]
    assert first.answer is not None and first.answer.source == "model"
    assert first.asked == "How many people live in each city?"
    # the follow-up's context holds the first question, its query and its rows
    context = model.calls[2][-1].content
    assert "Conversation so far:" in context and "How many people live in each city?" in context
    assert PER_CITY in context and "London | 2" in context
    # the model is asked the conversation then the question (ras+ may add its notes after it)
    assert follow.asked.endswith("Which of those in London were born before 1900?")
    assert follow.asked in context
    assert follow.query == OLD_LONDONERS
    # the query recorded is the query that ran: re-running it gives the rows recorded
    assert follow.result is not None
    assert town.execute(follow.query).rows == follow.result.rows == [["Ada Lovelace", 1815]]
    assert follow.answer is not None and follow.answer.source == "model"
    assert unsupported_numbers(follow.answer.text, follow.result, follow.question) == []
    assert model.remaining == 0


def test_a_question_that_does_not_refer_back_is_asked_on_its_own(town: GraphEngine) -> None:
    born = "MATCH (p:Person) WHERE p.born < 1900 RETURN p.name AS name"
    model = ReplayChatModel([PER_CITY, "London has 2 people and New York has 1.", born, "Ada."])
    with api.ChatSession(_config(town), model=model) as chat:
        chat.ask("How many people live in each city?")
        alone = chat.ask("Which people were born before 1900?")
    assert alone.asked == "Which people were born before 1900?"
    assert all("Conversation so far:" not in m.content for m in model.calls[2])
    assert alone.query == born and alone.result is not None
    assert alone.result.rows == [["Ada Lovelace"]]


def test_a_follow_up_is_checked_against_its_own_question_not_the_earlier_ones(
    town: GraphEngine,
) -> None:
    crowded = (
        "MATCH (p:Person)-[:LIVES_IN]->(c:City) WITH c, count(p) AS n WHERE n > 1 "
        "RETURN c.name AS city"
    )
    residents = (
        "MATCH (p:Person)-[:LIVES_IN]->(c:City) WHERE c.name IN ['London'] RETURN p.name AS name"
    )
    model = ReplayChatModel([crowded, "London.", residents, "Ada and Alan."])
    with api.ChatSession(_config(town), model=model) as chat:
        chat.ask("Which cities have more than 1 resident?")
        follow = chat.ask("Who lives in those?")
    # "more than 1" belongs to the first question: the follow-up's query need not compare 1
    assert "more than 1" in follow.asked
    assert follow.outcome == "answered" and follow.query == residents
    assert follow.strategy is not None
    assert all(
        f.code != "question_threshold"
        for a in follow.strategy.attempts
        for f in [*a.findings, *a.repairs]
    )
    assert model.remaining == 0


def test_a_follow_up_about_those_is_bound_to_the_names_the_last_turn_listed(
    town: GraphEngine,
) -> None:
    londoners = "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'London'}) RETURN p.name AS name"
    everyone = "MATCH (p:Person) RETURN avg(p.born) AS born"
    model = ReplayChatModel([londoners, "Ada and Alan.", everyone, "On average 1863.5."])
    with api.ChatSession(_config(town), model=model) as chat:
        first = chat.ask("Who lives in London?")
        follow = chat.ask("What is the average birth year of those?")
    assert first.result is not None
    assert sorted(first.result.rows) == [["Ada Lovelace"], ["Alan Turing"]]
    # the model averaged over every person; "those" are the two Londoners it listed
    assert follow.outcome == "answered" and follow.query is not None
    assert follow.result is not None and follow.result.rows == [[1863.5]]
    assert town.execute(follow.query).rows == [[1863.5]]
    assert follow.strategy is not None
    assert "unbound_reference" in {r.code for a in follow.strategy.attempts for r in a.repairs}
    # a question that does not refer back is left alone
    model = ReplayChatModel([londoners, "Ada and Alan.", everyone, "1877."])
    with api.ChatSession(_config(town), model=model) as chat:
        chat.ask("Who lives in London?")
        alone = chat.ask("What is the average birth year of all people?")
    assert alone.query == everyone


@pytest.mark.parametrize(
    ("follow_up", "query", "rows"),
    [
        # "their" is the question's own people, not the Londoners listed before
        (
            "Which people live in New York, and what are their birth years?",
            "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'New York'}) "
            "RETURN p.name AS name, p.born AS born",
            [["Grace Hopper", 1906]],
        ),
        # "those cities" are not the people listed before
        (
            "How many people live in those cities?",
            "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN count(p) AS people",
            [[3]],
        ),
    ],
)
def test_a_reference_to_something_else_is_not_bound_to_the_last_names(
    town: GraphEngine, follow_up: str, query: str, rows: list[list[object]]
) -> None:
    londoners = "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'London'}) RETURN p.name AS name"
    model = ReplayChatModel([londoners, "Ada and Alan.", query, "Done."])
    with api.ChatSession(_config(town), model=model) as chat:
        chat.ask("Who lives in London?")
        follow = chat.ask(follow_up)
    assert follow.query == query and follow.result is not None
    assert follow.result.rows == rows


def test_an_elliptical_follow_up_keeps_the_count_the_conversation_asked_for(
    town: GraphEngine,
) -> None:
    count = "MATCH (p:Person)-[:LIVES_IN]->(c:City {{name: '{}'}}) RETURN count(p) AS people"
    london, new_york = count.format("London"), count.format("New York")
    model = ReplayChatModel([london, "2.", new_york, "1."])
    with api.ChatSession(_config(town), model=model) as chat:
        chat.ask("How many people live in London?")
        follow = chat.ask("And in New York?")
    assert follow.query == new_york and follow.result is not None
    assert follow.result.rows == [[1]]


def test_without_the_repair_part_a_follow_up_is_answered_unbound(town: GraphEngine) -> None:
    londoners = "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'London'}) RETURN p.name AS name"
    everyone = "MATCH (p:Person) RETURN avg(p.born) AS born"
    model = ReplayChatModel([londoners, "Ada and Alan.", everyone, "1877."])
    with api.ChatSession(_config(town, strategy="ras+:-repair"), model=model) as chat:
        chat.ask("Who lives in London?")
        follow = chat.ask("What is the average birth year of those?")
    assert follow.outcome == "answered" and follow.query == everyone


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which of those are burglaries?", True),
        ("And in 2020?", True),
        ("How many crimes did the first of them investigate?", True),
        ("What about London?", True),
        ("only burglaries?", True),
        ("cool, how many", True),
        ("Show me the previous result sorted by name", True),
        ("Which areas have the most crimes?", False),
        ("How many cases reported a death as the outcome?", False),
        ("List the officers by rank", False),
    ],
)
def test_refers_back(question: str, expected: bool) -> None:
    assert refers_back(question) is expected


def test_an_invented_number_is_replaced_by_the_rows(town: GraphEngine) -> None:
    model = ReplayChatModel([PER_CITY, "London has 5 people."])
    with api.ChatSession(_config(town), model=model) as chat:
        turn = chat.ask("How many people live in each city?")
    assert turn.answer is not None and turn.answer.source == "template"
    assert turn.answer.unsupported == ["5"]
    assert turn.result is not None
    assert unsupported_numbers(turn.answer.text, turn.result) == []


def test_an_empty_result_says_no_matching_data(town: GraphEngine) -> None:
    none = "MATCH (p:Person) WHERE p.born > 2000 RETURN p.name AS name"
    model = ReplayChatModel([none, none])
    with api.ChatSession(_config(town), model=model) as chat:
        turn = chat.ask("Which people were born after 2000?")
    assert turn.outcome == "answered" and turn.query == none
    assert turn.answer is not None and turn.answer.text == NO_DATA
    assert len(model.calls) == 2  # no model call for an empty answer


def test_a_question_about_nothing_in_the_graph_is_refused_without_a_model_call(
    town: GraphEngine,
) -> None:
    model = ReplayChatModel([])
    with api.ChatSession(_config(town), model=model) as chat:
        turn = chat.ask("What will the weather be tomorrow?")
    assert turn.outcome == "out_of_scope" and turn.strategy is None and turn.query is None
    assert turn.reason is not None and "mentions nothing" in turn.reason
    assert model.calls == []


def test_a_question_no_query_can_answer_is_out_of_scope(town: GraphEngine) -> None:
    dragons = "MATCH (d:Dragon)-[:LIVES_IN]->(c:City) RETURN count(d) AS dragons"
    model = ReplayChatModel([dragons, dragons])
    with api.ChatSession(_config(town), model=model) as chat:
        turn = chat.ask("How many dragons live in each city?")
    assert turn.outcome == "out_of_scope" and turn.answer is None
    assert turn.strategy is not None and turn.strategy.attempts_used == 2
    assert turn.reason is not None and "Dragon" in turn.reason
    # what ran is still recorded (for /cypher and /rows), but it is no answer
    assert turn.query == dragons and turn.result is not None and turn.result.rows == [[0]]


def test_out_of_scope_turns_are_left_out_of_the_context(town: GraphEngine) -> None:
    model = ReplayChatModel([PER_CITY, "London has 2."])
    with api.ChatSession(_config(town), model=model) as chat:
        refused = chat.ask("What will the weather be tomorrow?")
        turn = chat.ask("How many people live in each city?")
    assert refused.outcome == "out_of_scope"
    assert turn.asked == "How many people live in each city?"


def test_the_transcript_is_saved_every_turn_and_resumes_with_the_same_turns(
    town: GraphEngine, tmp_path: Path
) -> None:
    config = _config(town, tmp_path)
    model = ReplayChatModel([PER_CITY, "London has 2 people and New York has 1."])
    with api.ChatSession(config, model=model) as chat:
        chat.ask("How many people live in each city?")
        saved = read_transcript(tmp_path / "chat.json")
        assert [t.model_dump() for t in saved.turns] == [t.model_dump() for t in chat.turns]
        chat.ask("What will the weather be tomorrow?")
        before = [t.model_dump() for t in chat.turns]
    assert saved.graph == town.graph and saved.model == model.spec and saved.strategy == "ras+@2"
    again = ReplayChatModel([OLD_LONDONERS, "Ada Lovelace, born 1815."])
    resumed = api.ChatSession.resume(tmp_path / "chat.json", config, model=again)
    with resumed:
        assert [t.model_dump() for t in resumed.turns] == before
        turn = resumed.ask("Which of those in London were born before 1900?")
    assert turn.index == 3
    assert PER_CITY in again.calls[0][-1].content  # the restored turn is context
    final = read_transcript(tmp_path / "chat.json")
    assert [t.model_dump() for t in final.turns[:2]] == before and len(final.turns) == 3
    assert ChatTurn.model_validate(final.turns[2].model_dump()) == turn


def test_save_writes_another_copy(town: GraphEngine, tmp_path: Path) -> None:
    model = ReplayChatModel([PER_CITY, "London has 2."])
    with api.ChatSession(_config(town), model=model) as chat:
        chat.ask("How many people live in each city?")
        copy = chat.save(tmp_path / "copy" / "mine.json")
    assert read_transcript(copy).turns[0].query == PER_CITY


def test_bad_transcripts_and_a_closed_session_are_clear_errors(
    town: GraphEngine, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="cannot read chat transcript"):
        api.ChatSession.resume(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"graph": 3}')
    with pytest.raises(ConfigError, match=r"bad\.json: not a valid chat transcript: graph: "):
        api.ChatSession.resume(bad)
    newer = tmp_path / "newer.json"
    newer.write_text('{"schema_version": 99, "graph": "g"}')
    with pytest.raises(ConfigError, match="layout version 99"):
        api.ChatSession.resume(newer)
    other = tmp_path / "other.json"
    other.write_text('{"graph": "somewhere_else"}')
    with pytest.raises(ConfigError, match="somewhere_else"):
        api.ChatSession.resume(other, _config(town))
    with pytest.raises(ConfigError, match="not open"):
        api.ChatSession(_config(town), model=ReplayChatModel([])).ask("anything")


def test_scope_words_match_the_schema(town: GraphEngine) -> None:
    index = graph_index(town)
    assert stem("Crimes") == stem("crime") and stem("categories") == stem("category")
    assert stem("people") == stem("person") and stem("LIVES") == stem("live")
    assert scope_problem("How many persons are there?", index, follows=False) is None
    assert scope_problem("Who lives in London?", index, follows=False) is None
    assert scope_problem("what about 'Paris'?", index, follows=False) is None
    assert scope_problem("and the rest?", index, follows=False) is not None
    assert scope_problem("and the rest?", index, follows=True) is None
    assert scope_problem("and in 2020?", index, follows=False) is None  # a number may be data
    assert scope_problem("cool, how many", index, follows=True) is None
    assert scope_problem("What will the weather be tomorrow?", index, follows=True) is not None
    # a capitalised word counts when the graph stores it, inside a longer value too
    assert scope_problem("What will the weather be in Paris tomorrow?", index, follows=False)
    assert scope_problem("Tell me about Lovelace", index, follows=False) is None


def test_a_name_is_looked_up_in_properties_whose_values_are_not_all_listed(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine("manynames")
    engine.write(
        "UNWIND range(1, 60) AS i CREATE (:Member {name: 'Member ' + toString(i)})"
        " WITH count(*) AS made CREATE (:Member {name: 'Zebedee Quill'})"
    )
    index = graph_index(engine)
    assert not index.values[("Member", "name")].complete
    assert scope_problem("Tell me about Zebedee", index, follows=False) is None
    assert scope_problem("Tell me about Yolanda", index, follows=False) is not None


@pytest.mark.parametrize(
    ("question", "follows"),
    [
        ("How many crimes happened on streets that have a school?", False),  # relative "that"
        ("How many officers are there, and what are their ranks?", False),
        ("For each city, how many people live in it?", False),
        ("Is it in London?", True),
        ("Which of the people you showed were born in London?", True),
        ("What did your last answer count?", True),
    ],
)
def test_a_pronoun_with_its_antecedent_in_the_question_is_no_follow_up(
    question: str, follows: bool
) -> None:
    assert refers_back(question) is follows
