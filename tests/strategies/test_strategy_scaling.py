"""single / IS (Algorithm 1) / RAS (Algorithm 2) with a replay model against the real embedded FalkorDB engine."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.errors import ErrorClass, ModelResponseError, QueryError
from cypherturn.graph import GraphEngine
from cypherturn.models import ChatMessage, ReplayChatModel
from cypherturn.strategies import (
    EMPTY_EXTRACTION_MESSAGE,
    StrategyConfig,
    StrategyResult,
    extract_cypher,
    get_strategy,
    load_prompts,
)

SCHEMA_TEXT = """Node properties:
Person {name: STRING, age: INTEGER}
Relationship properties:

The relationships:
(:Person)-[:KNOWS]->(:Person)"""

QUESTION = "What are the names of all people?"

BASE = len(load_prompts().initial_context(QUESTION, SCHEMA_TEXT))
"""Messages in C0 for the default prompt version, before any feedback."""

SYNTAX_ERROR = "MATCH (p:Person RETURN p.name"
UNDEFINED_VARIABLE = "```cypher\nMATCH (p:Person) RETURN q.name\n```"
GOOD = "MATCH (p:Person) RETURN p.name AS name ORDER BY name"


@pytest.fixture
def engine(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    graph = make_engine()
    graph.write(
        "CREATE (:Person {name: 'Alice', age: 30})-[:KNOWS]->(:Person {name: 'Bob', age: 25}),"
        " (:Person {name: 'Carol', age: 41})"
    )
    return graph


def engine_message(engine: GraphEngine, query: str) -> str:
    """The engine's own error for a query, obtained by executing it directly."""
    with pytest.raises(QueryError) as caught:
        engine.execute(query)
    return caught.value.engine_message


def run(
    name: str, engine: GraphEngine, responses: list[str], **config: int
) -> tuple[StrategyResult, ReplayChatModel]:
    model = ReplayChatModel(responses)
    result = get_strategy(name).run(model, engine, QUESTION, SCHEMA_TEXT, StrategyConfig(**config))
    return result, model


def assert_consistent(result: StrategyResult) -> None:
    """Invariants every result satisfies, whatever the model wrote."""
    assert 1 <= result.attempts_used <= result.budget
    assert [a.index for a in result.attempts] == list(range(1, result.attempts_used + 1))
    for attempt in result.attempts[:-1]:
        assert attempt.outcome == "error"
    for attempt in result.attempts:
        assert attempt.query == extract_cypher(attempt.raw_text)
        assert attempt.model_latency_s >= 0 and attempt.execution_latency_s >= 0
        assert attempt.prompt_tokens > 0 and attempt.completion_tokens >= 0
        if attempt.ok:
            assert attempt.error_class is None and attempt.error_message is None
            assert attempt.row_count is not None
        else:
            assert attempt.error_class is not None and attempt.error_message
            assert attempt.row_count is None
    last = result.attempts[-1]
    assert result.success == last.ok
    assert result.final_query == last.query
    assert (result.final_result is not None) == result.success
    assert result.prompt_version == load_prompts().version


def test_ras_appends_one_query_error_pair_per_failure(engine: GraphEngine) -> None:
    result, model = run("ras", engine, [SYNTAX_ERROR, UNDEFINED_VARIABLE, GOOD], seed=40)

    assert_consistent(result)
    assert result.success and result.attempts_used == 3
    assert result.final_query == GOOD
    assert result.final_result is not None
    assert result.final_result.rows == [["Alice"], ["Bob"], ["Carol"]]
    assert (
        [len(call) for call in model.calls] == result.context_messages == [BASE, BASE + 2, BASE + 4]
    )
    assert (
        result.context_prompt_tokens[0]
        < result.context_prompt_tokens[1]
        < result.context_prompt_tokens[2]
    )
    first, second = result.attempts[0], result.attempts[1]
    assert first.error_class == ErrorClass.SYNTAX
    assert second.error_class == ErrorClass.UNKNOWN_VARIABLE
    for before, after, failed in zip(model.calls, model.calls[1:], result.attempts, strict=False):
        assert after[: len(before)] == before
        assistant, feedback = after[len(before) :]
        assert assistant == ChatMessage(role="assistant", content=failed.query)
        assert feedback.role == "user"
        assert failed.error_message == engine_message(engine, failed.query)
        assert f"\n{failed.error_message}\n" in feedback.content
    assert [s["seed"] for s in model.settings] == [40, 41, 42]


def test_is_resamples_from_the_identical_context(engine: GraphEngine) -> None:
    result, model = run("is", engine, [SYNTAX_ERROR, UNDEFINED_VARIABLE, GOOD], seed=40)

    assert_consistent(result)
    assert result.success and result.attempts_used == 3
    assert result.context_messages == [BASE] * 3
    assert model.calls == [model.calls[0]] * 3
    assert len(set(result.context_prompt_tokens)) == 1
    assert [s["seed"] for s in model.settings] == [40, 41, 42]


def test_first_attempt_is_identical_for_is_and_ras(engine: GraphEngine) -> None:
    _, is_model = run("is", engine, [GOOD], seed=7, max_tokens=200)
    _, ras_model = run("ras", engine, [GOOD], seed=7, max_tokens=200)
    _, single_model = run("single", engine, [GOOD], seed=7, max_tokens=200)

    assert is_model.calls == ras_model.calls == single_model.calls
    assert is_model.settings == ras_model.settings == single_model.settings
    assert is_model.settings[0] == {"temperature": 0.9, "max_tokens": 200, "seed": 7, "tools": []}
    expected = load_prompts().initial_context(QUESTION, SCHEMA_TEXT)
    assert is_model.calls[0] == expected


@pytest.mark.parametrize("name", ["is", "ras"])
def test_stops_at_the_first_executable_query(engine: GraphEngine, name: str) -> None:
    result, model = run(name, engine, [SYNTAX_ERROR, GOOD, SYNTAX_ERROR, SYNTAX_ERROR])

    assert_consistent(result)
    assert result.success and result.attempts_used == 2
    assert model.remaining == 2
    assert result.attempts[1].row_count == 3


@pytest.mark.parametrize(("name", "growth"), [("is", [0, 0, 0]), ("ras", [0, 2, 4])])
def test_fallback_returns_the_last_query_after_the_budget(
    engine: GraphEngine, name: str, growth: list[int]
) -> None:
    last = "MATCH (p:Person) RETURN no_such_function(p.name)"
    result, model = run(name, engine, [SYNTAX_ERROR, UNDEFINED_VARIABLE, last], budget=3)

    assert_consistent(result)
    assert not result.success
    assert result.attempts_used == result.budget == 3
    assert result.final_query == last
    assert result.final_result is None
    assert result.context_messages == [BASE + extra for extra in growth]
    assert result.attempts[-1].error_message == engine_message(engine, last)
    assert model.remaining == 0


def test_single_makes_one_attempt_whatever_the_budget(engine: GraphEngine) -> None:
    result, model = run("single", engine, [SYNTAX_ERROR, GOOD], budget=5)

    assert_consistent(result)
    assert result.budget == 1 and result.attempts_used == 1
    assert not result.success and result.final_query == SYNTAX_ERROR.strip()
    assert model.remaining == 1


def test_empty_extraction_is_a_syntax_failure_fed_back_with_the_raw_answer(
    engine: GraphEngine,
) -> None:
    prose = "I am not sure which label to use."
    result, model = run("ras", engine, [prose, GOOD])

    assert_consistent(result)
    failed = result.attempts[0]
    assert failed.query == ""
    assert failed.error_class == ErrorClass.SYNTAX
    assert failed.error_message == EMPTY_EXTRACTION_MESSAGE
    assert failed.execution_latency_s == 0.0
    assistant, feedback = model.calls[1][BASE:]
    assert assistant.content == prose
    assert EMPTY_EXTRACTION_MESSAGE in feedback.content
    assert result.success


def test_write_queries_are_refused_failures_and_change_nothing(engine: GraphEngine) -> None:
    before = engine.node_count()

    result, _ = run("ras", engine, ["CREATE (:Person {name: 'Mallory'})", GOOD])

    assert_consistent(result)
    assert result.attempts[0].error_class == ErrorClass.WRITE_REFUSED
    assert engine.node_count() == before
    assert result.success


def test_row_cap_is_passed_to_the_engine(engine: GraphEngine) -> None:
    result, _ = run("single", engine, [GOOD], row_cap=2)

    assert result.attempts[0].row_count == 2
    assert result.attempts[0].truncated
    assert result.final_result is not None and result.final_result.truncated


def test_model_errors_propagate_instead_of_counting_as_failures(engine: GraphEngine) -> None:
    model = ReplayChatModel([SYNTAX_ERROR])

    with pytest.raises(ModelResponseError, match="replay exhausted"):
        get_strategy("ras").run(model, engine, QUESTION, SCHEMA_TEXT, StrategyConfig(budget=3))


def test_result_round_trips_through_json(engine: GraphEngine) -> None:
    result, _ = run("ras", engine, [SYNTAX_ERROR, GOOD], seed=1)

    dumped = result.model_dump(mode="json")
    again = StrategyResult.model_validate_json(result.model_dump_json())

    assert again == result
    assert dumped["attempts_used"] == 2
    assert dumped["context_messages"] == [BASE, BASE + 2]
    assert dumped["strategy"] == "ras" and dumped["config"]["budget"] == 5
    assert dumped["attempts"][0]["error_class"] == "syntax"
