"""ras+ with a replay model against the real embedded FalkorDB: checks, repairs, selection, feedback."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.grounding import check_query, graph_index
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel
from cypherturn.strategies import (
    GROUNDING_PARTS,
    NOTES_HEADER,
    GroundingParts,
    StrategyConfig,
    StrategyResult,
    answer_key,
    get_strategy,
    grounded_examples,
    load_prompts,
)

QUESTION = "How many people took part in a burglary?"
REVERSED = "MATCH (c:Crime)-[:PARTY_TO]->(p:Person) WHERE c.type = 'Burglary' RETURN count(p) AS n"
SHOUTED = "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE c.type = 'BURGLARY' RETURN count(p) AS n"
GOOD = "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE c.type = 'Burglary' RETURN count(p) AS n"
WRONG_LABEL = "MATCH (p:Person) WHERE p.type STARTS WITH 'Burg' RETURN count(p) AS n"
NO_MATCH = "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE c.type = 'Arson' RETURN count(p) AS n"
EMPTY = "MATCH (p:Person) WHERE p.age > 200 RETURN p.name"


@pytest.fixture
def crime(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("grounded")
    engine.write(
        "CREATE (a:Person {name: 'Ada', age: 36})-[:PARTY_TO]->(:Crime {type: 'Burglary'}),"
        " (b:Person {name: 'Alan', age: 41})-[:PARTY_TO]->(:Crime {type: 'Drugs'}),"
        " (:Person {name: 'Grace', age: 50})-[:PARTY_TO]->(:Crime {type: 'Burglary'})"
    )
    return engine


def run(
    name: str, engine: GraphEngine, responses: list[str], budget: int = 3
) -> tuple[StrategyResult, ReplayChatModel]:
    model = ReplayChatModel(responses)
    schema = graph_index(engine).schema_text()
    result = get_strategy(name).run(
        model, engine, QUESTION, schema, StrategyConfig(budget=budget, seed=0)
    )
    return result, model


def test_a_reversed_direction_is_repaired_and_recorded(crime: GraphEngine) -> None:
    result, _ = run("ras+", crime, [REVERSED, GOOD])
    (attempt,) = result.attempts  # verified: no second candidate is drawn (no vote)
    assert attempt.votes is None
    assert attempt.original_query == REVERSED
    assert (
        attempt.query
        == "MATCH (c:Crime)<-[:PARTY_TO]-(p:Person) WHERE c.type = 'Burglary' RETURN count(p) AS n"
    )
    assert [r.code for r in attempt.repairs] == ["reversed_direction"]
    assert attempt.verdict == "answer" and attempt.findings == []
    assert result.final_result is not None and result.final_result.rows == [[2]]
    assert result.success and result.selected_attempt == 1 and result.strategy == "ras+"


def test_a_literal_in_the_wrong_case_is_repaired_after_zero_rows(crime: GraphEngine) -> None:
    result, _ = run("ras+:check,values,repair", crime, [SHOUTED])
    (attempt,) = result.attempts
    assert attempt.query == GOOD and attempt.original_query == SHOUTED
    assert [r.code for r in attempt.repairs] == ["value_not_found"]
    assert result.final_result is not None and result.final_result.rows == [[2]]


def test_without_repair_the_finding_fails_the_attempt_and_feeds_back(crime: GraphEngine) -> None:
    result, model = run("ras+:check,values,feedback", crime, [SHOUTED, GOOD])
    first, second = result.attempts
    assert first.verdict == "explained_empty" and first.repairs == [] and first.query == SHOUTED
    assert [f.code for f in first.findings] == ["value_not_found"]
    assert second.verdict == "answer" and result.final_query == GOOD
    # notes feedback: a fresh C0 whose question carries the finding, without the failed query
    c0 = model.calls[0]
    retry = model.calls[1]
    assert len(retry) == len(c0) and retry[:-1] == c0[:-1]
    assert NOTES_HEADER in retry[-1].content and "'Burglary'" in retry[-1].content
    assert SHOUTED not in "".join(m.content for m in retry)


def test_the_papers_feedback_form_appends_the_query_and_the_findings(crime: GraphEngine) -> None:
    result, model = run("ras+:check,values", crime, [SHOUTED, GOOD])
    retry = model.calls[1]
    assert len(retry) == len(model.calls[0]) + 2
    assert retry[-2].role == "assistant" and retry[-2].content == SHOUTED
    assert "stored values include 'Burglary'" in retry[-1].content
    assert result.final_query == GOOD


def test_a_flagged_query_that_runs_is_not_the_answer(crime: GraphEngine) -> None:
    result, _ = run("ras+", crime, [WRONG_LABEL, GOOD, GOOD])
    first = result.attempts[0]
    assert first.outcome == "ok" and first.verdict == "explained_empty"
    assert "property_not_on_label" in {f.code for f in first.findings}
    assert result.selected_attempt == 2 and result.final_result is not None
    assert result.final_result.rows == [[2]]


def test_zero_rows_no_check_explains_is_an_answer_without_select(crime: GraphEngine) -> None:
    result, _ = run("ras+:check,values,repair", crime, [EMPTY, GOOD])
    (attempt,) = result.attempts
    assert attempt.verdict == "empty" and result.success and result.final_query == EMPTY


def test_select_keeps_looking_past_an_empty_result_and_keeps_it_as_a_fallback(
    crime: GraphEngine,
) -> None:
    found, _ = run("ras+:check,values,repair,select", crime, [EMPTY, GOOD])
    assert [a.verdict for a in found.attempts] == ["empty", "answer"]
    assert found.selected_attempt == 2
    fallback, _ = run("ras+", crime, [EMPTY, NO_MATCH, "MATCH (p:Person RETURN p"])
    assert [a.verdict for a in fallback.attempts] == ["empty", "explained_empty", "error"]
    assert fallback.selected_attempt == 1 and fallback.final_query == EMPTY and fallback.success


def test_ras_plus_with_no_part_is_ras(crime: GraphEngine) -> None:
    responses = ["MATCH (p:Person RETURN p", "MATCH (p:Persn) RETURN p.name", GOOD]
    plain, plain_model = run("ras", crime, list(responses))
    bare, bare_model = run("ras+:", crime, list(responses))
    assert (
        bare.strategy == "ras+:" and bare.grounding is not None and bare.grounding.enabled() == []
    )
    assert [a.query for a in bare.attempts] == [a.query for a in plain.attempts]
    assert [a.outcome for a in bare.attempts] == [a.outcome for a in plain.attempts]
    assert bare_model.calls == plain_model.calls


def test_a_grammar_is_not_offered_to_a_model_without_grammar_support(crime: GraphEngine) -> None:
    result, model = run("ras+", crime, [GOOD, GOOD])
    assert not result.attempts[0].grammar and model.settings[0]["seed"] == 0


def test_strategy_names() -> None:
    assert get_strategy("ras+:values,check").name == "ras+:check,values"
    default = [p for p in GROUNDING_PARTS if p != "vote"]
    assert get_strategy("ras+:" + ",".join(default)).name == "ras+"
    with pytest.raises(ConfigError, match="unknown ras\\+ part"):
        get_strategy("ras+:spell")
    with pytest.raises(ConfigError, match="unknown strategy"):
        get_strategy("rass")


def test_the_values_part_puts_stored_values_in_the_prompt(crime: GraphEngine) -> None:
    _, with_values = run("ras+", crime, [GOOD, GOOD])
    _, without = run("ras+:check", crime, [GOOD])
    assert "Crime.type: 'Burglary', 'Drugs'" in with_values.calls[0][0].content
    assert "Stored values" not in without.calls[0][0].content
    assert load_prompts().version == "v2"


def test_grounded_examples_run_and_pass_the_check(make_engine: Callable[..., GraphEngine]) -> None:
    engine = make_engine("examples")
    engine.write(
        "UNWIND range(0, 2) AS k CREATE (:Officer {name: 'Officer ' + toString(k), "
        "rank: CASE WHEN k = 0 THEN 'Inspector' ELSE 'Sergeant' END})"
    )
    engine.write(
        "UNWIND range(1, 40) AS i MATCH (o:Officer {name: 'Officer ' + toString(i % 3)}) "
        "CREATE (:Crime {type: CASE WHEN i % 3 = 0 THEN 'Drugs' ELSE 'Burglary' END, "
        "date: date({year: 2017, month: 8 + i % 2, day: 1 + i % 28})})"
        "-[:INVESTIGATED_BY]->(o), (:Location {address: 'Street ' + toString(i % 5)})"
        "<-[:OCCURRED_AT]-(:Crime {type: 'Drugs'})-[:INVESTIGATED_BY]->(o)"
    )
    index = graph_index(engine)
    examples = grounded_examples(index)
    assert len(examples) == 5
    assert "more than 10" in examples[2].question and "n > 10" in examples[2].cypher
    assert "(c:Crime)" in examples[3].cypher and examples[3].cypher.count("[:") == 2
    assert "date('2017-08-01')" in examples[4].cypher and "august 2017" in examples[4].question
    assert "drugs" in examples[0].question and "'Drugs'" in examples[0].cypher
    for example in examples:
        assert engine.execute(example.cypher).rows
        assert check_query(example.cypher, index).ok


OTHER = "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) RETURN count(p) AS n"
BY_TYPE = "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE c.type = 'Burglary' RETURN c.type AS t, count(p) AS n"
SWAPPED = (
    "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE c.type = 'Burglary' RETURN count(p) AS m, c.type"
)


def test_vote_waits_for_two_candidates_that_return_the_same_rows(crime: GraphEngine) -> None:
    result, _ = run("ras+:+vote", crime, [OTHER, GOOD, GOOD], budget=5)
    assert [a.votes for a in result.attempts] == [1, 1, 2]
    assert result.selected_attempt == 2 and result.final_query == GOOD
    assert result.final_result is not None and result.final_result.rows == [[2]]


def test_vote_without_agreement_returns_the_earliest_of_the_largest_group(
    crime: GraphEngine,
) -> None:
    drugs = "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) WHERE c.type = 'Drugs' RETURN count(p) AS n"
    result, _ = run("ras+:+vote", crime, [OTHER, GOOD, drugs], budget=3)
    assert [a.votes for a in result.attempts] == [1, 1, 1]
    assert result.selected_attempt == 1 and result.final_query == OTHER
    # a failed attempt between two agreeing ones neither votes nor ends the loop
    result, _ = run("ras+:+vote", crime, [GOOD, "MATCH (p:Person RETURN p", OTHER, GOOD], budget=4)
    assert [a.votes for a in result.attempts] == [1, None, 1, 2]
    assert result.selected_attempt == 1


def test_rows_agree_whatever_the_column_names_order_and_number_type(crime: GraphEngine) -> None:
    result, _ = run("ras+:+vote", crime, [BY_TYPE, SWAPPED], budget=2)
    assert result.attempts[1].votes == 2
    a, b = (crime.execute(q) for q in (GOOD, SWAPPED))
    assert answer_key(a) != answer_key(b)
    one, two = (crime.execute(q) for q in (GOOD, "RETURN 2.0 AS x"))
    assert answer_key(one) == answer_key(two)
    listed = crime.execute("MATCH (p:Person) RETURN p.name AS name ORDER BY name")
    assert len(listed.rows) == 3
    reversed_order = crime.execute("MATCH (p:Person) RETURN p.name AS who ORDER BY who DESC")
    assert answer_key(listed) == answer_key(reversed_order)


def test_greedy_decodes_the_first_attempt_at_temperature_zero(crime: GraphEngine) -> None:
    _, model = run("ras+:+vote", crime, [OTHER, GOOD, GOOD], budget=3)
    assert [s["temperature"] for s in model.settings] == [0.0, 0.9, 0.9]
    _, sampled = run("ras+:check,values,repair,vote", crime, [OTHER, GOOD, GOOD], budget=3)
    assert [s["temperature"] for s in sampled.settings] == [0.9, 0.9, 0.9]


def test_the_link_part_names_the_stored_values_the_question_mentions(crime: GraphEngine) -> None:
    model = ReplayChatModel([GOOD, GOOD])
    schema = graph_index(crime).schema_text()
    question = "How many people took part in burglaries?"
    get_strategy("ras+").run(model, crime, question, schema, StrategyConfig(budget=2, seed=0))
    asked = model.calls[0][-1].content
    assert "\"burglaries\": (:Crime {type: 'Burglary'})" in asked
    unlinked = ReplayChatModel([GOOD, GOOD])
    parts = ",".join(p for p in GROUNDING_PARTS if p != "link")
    get_strategy(f"ras+:{parts}").run(
        unlinked, crime, question, schema, StrategyConfig(budget=2, seed=0)
    )
    assert "burglaries" in unlinked.calls[0][-1].content
    assert "(:Crime {type: 'Burglary'})" not in unlinked.calls[0][-1].content


THRESHOLD_QUESTION = "Which crime types have more than one person taking part, and how many each?"
LIMITED = (
    "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) "
    "RETURN c.type AS type, count(p) AS n ORDER BY n DESC LIMIT 1"
)
FILTERED = (
    "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) "
    "WITH c.type AS type, count(p) AS n WHERE n > 1 RETURN type, n"
)


def test_a_query_that_ignores_the_questions_threshold_is_not_the_answer(
    crime: GraphEngine,
) -> None:
    model = ReplayChatModel([LIMITED, LIMITED, FILTERED])
    schema = graph_index(crime).schema_text()
    result = get_strategy("ras+:-repair").run(
        model, crime, THRESHOLD_QUESTION, schema, StrategyConfig(budget=4, seed=0)
    )
    first, second, third = result.attempts
    assert first.verdict == second.verdict == "flagged"
    assert [f.code for f in first.findings] == ["question_threshold"]
    assert third.verdict == "answer" and result.selected_attempt == 3
    assert result.final_query == FILTERED
    assert result.final_result is not None and result.final_result.rows == [["Burglary", 2]]
    # the note tells the next attempt why, without the failed query
    note = model.calls[1][-1].content
    assert "more than one" in note and LIMITED not in note


def test_a_limit_written_for_the_threshold_is_repaired_into_the_filter(
    crime: GraphEngine,
) -> None:
    model = ReplayChatModel([LIMITED])
    schema = graph_index(crime).schema_text()
    result = get_strategy("ras+").run(
        model, crime, THRESHOLD_QUESTION, schema, StrategyConfig(budget=2, seed=0)
    )
    (first,) = result.attempts
    assert first.original_query == LIMITED
    assert first.query == (
        "MATCH (p:Person)-[:PARTY_TO]->(c:Crime) "
        "WITH c.type AS type, count(p) AS n WHERE n > 1 RETURN type, n ORDER BY n DESC"
    )
    assert [r.code for r in first.repairs] == ["question_threshold"]
    assert first.verdict == "answer" and first.findings == []
    assert result.final_result is not None and result.final_result.rows == [["Burglary", 2]]


def test_parts_can_be_named_by_what_is_dropped_from_or_added_to_the_default() -> None:
    strategy = get_strategy("ras+:-greedy")
    kept = [p for p in GROUNDING_PARTS if p not in ("vote", "greedy")]
    assert strategy.name == "ras+:" + ",".join(kept)
    assert get_strategy("ras+:" + ",".join(kept)).name == strategy.name
    assert get_strategy("ras+:-vote").name == "ras+" == get_strategy("ras+").name
    voting = get_strategy("ras+:+vote,-link").name
    assert voting == "ras+:" + ",".join(p for p in GROUNDING_PARTS if p != "link")
    with pytest.raises(ConfigError, match="not both"):
        get_strategy("ras+:check,-vote")
    with pytest.raises(ConfigError, match="unknown ras\\+ part"):
        get_strategy("ras+:-votes")


class ProbableReplay(ReplayChatModel):
    """A replay model that reports a given completion probability per call (as GGUF models do)."""

    def __init__(self, responses: list[str], probabilities: list[float]) -> None:
        super().__init__(responses)
        self.probabilities = list(probabilities)

    def chat(self, messages: list[ChatMessage], **options: Any) -> ChatResponse:
        response = super().chat(messages, **options)
        return response.model_copy(update={"logprob": math.log(self.probabilities.pop(0))})


def confident_run(
    name: str, engine: GraphEngine, responses: list[str], probabilities: list[float]
) -> StrategyResult:
    model = ProbableReplay(responses, probabilities)
    schema = graph_index(engine).schema_text()
    return get_strategy(name).run(model, engine, QUESTION, schema, StrategyConfig(budget=3, seed=0))


def test_a_probable_greedy_first_answer_ends_the_vote(crime: GraphEngine) -> None:
    result = confident_run("ras+:+vote", crime, [GOOD, OTHER, OTHER], [0.8, 0.9, 0.9])
    (attempt,) = result.attempts
    assert attempt.temperature == 0.0 and attempt.votes == 1
    assert attempt.logprob == pytest.approx(math.log(0.8))
    assert result.final_query == GOOD and result.selected_attempt == 1
    # below the threshold, or with the part off, the vote goes on and may overturn it
    for name, probability in (("ras+:+vote", 0.3), ("ras+:+vote,-confident", 0.8)):
        voted = confident_run(name, crime, [GOOD, OTHER, OTHER], [probability, 0.9, 0.9])
        assert [a.votes for a in voted.attempts] == [1, 1, 2]
        assert voted.final_query == OTHER


def test_a_repaired_or_sampled_first_answer_is_not_taken_on_its_probability(
    crime: GraphEngine,
) -> None:
    repaired = confident_run("ras+:+vote", crime, [REVERSED, GOOD], [0.99, 0.5])
    assert len(repaired.attempts) == 2 and repaired.attempts[0].repairs
    sampled = confident_run("ras+:+vote,-greedy", crime, [GOOD, GOOD], [0.99, 0.5])
    assert len(sampled.attempts) == 2 and sampled.attempts[0].temperature == 0.9


def test_records_from_before_the_confident_part_read_it_as_off() -> None:
    old = {part: True for part in GROUNDING_PARTS if part != "confident"}
    assert not GroundingParts.model_validate(old).confident
    assert GroundingParts().confident
    assert GroundingParts.model_validate(GroundingParts().model_dump()).confident


def test_records_from_before_the_vote_part_read_it_as_on() -> None:
    """Before 2026-12-06 every ras+ answer voted; its record names no vote part, or names it on."""
    old = {part: True for part in GROUNDING_PARTS if part not in ("vote", "confident")}
    assert GroundingParts.model_validate(old).vote
    assert not GroundingParts().vote
    assert not GroundingParts.model_validate(GroundingParts().model_dump()).vote
