"""End to end: the bundled GGUF model runs RAS with T=2 on a real tiny graph.

The 135M model is rarely right; the test checks that the loop and its records
are consistent with what the model and the engine actually did, not the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from cypherturn.errors import QueryError
from cypherturn.graph import GraphEngine
from cypherturn.models import load_model
from cypherturn.strategies import (
    EMPTY_EXTRACTION_MESSAGE,
    StrategyConfig,
    extract_cypher,
    get_strategy,
    load_prompts,
)

SCHEMA_TEXT = """Node properties:
Person {name: STRING, age: INTEGER}
City {name: STRING}
Relationship properties:

The relationships:
(:Person)-[:LIVES_IN]->(:City)"""


def test_ras_with_the_default_model_on_a_tiny_graph(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine()
    engine.write(
        "CREATE (:Person {name: 'Ada', age: 36})-[:LIVES_IN]->(:City {name: 'Paris'}),"
        " (:Person {name: 'Alan', age: 41})-[:LIVES_IN]->(:City {name: 'London'})"
    )
    model = load_model("smollm2-135m")
    config = StrategyConfig(budget=2, max_tokens=96, seed=1234)

    result = get_strategy("ras").run(
        model, engine, "Which people live in Paris?", SCHEMA_TEXT, config
    )

    assert result.model == "smollm2-135m" and result.strategy == "ras" and result.budget == 2
    assert result.attempts_used in (1, 2)
    assert result.success == result.attempts[-1].ok
    assert result.final_query == result.attempts[-1].query
    if result.attempts_used == 2:
        assert not result.attempts[0].ok
        base = len(load_prompts().initial_context("q", SCHEMA_TEXT))
        assert result.context_messages == [base, base + 2]
        assert result.context_prompt_tokens[1] > result.context_prompt_tokens[0]
    for attempt in result.attempts:
        assert attempt.raw_text.strip()
        assert attempt.query == extract_cypher(attempt.raw_text)
        assert 0 < attempt.completion_tokens <= 96
        assert attempt.prompt_tokens > 50
        assert attempt.model_latency_s > 0
        assert attempt.seed == 1234 + attempt.index - 1
        if attempt.ok:
            assert result.final_result is not None
            assert attempt.row_count == result.final_result.row_count
        elif not attempt.query:
            assert attempt.error_message == EMPTY_EXTRACTION_MESSAGE
        else:
            try:
                engine.execute(attempt.query)
            except QueryError as e:
                assert attempt.error_message == e.engine_message
            else:
                raise AssertionError(f"attempt {attempt.index} failed but its query runs now")
