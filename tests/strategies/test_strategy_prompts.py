"""Prompt templates, schema-derived examples, strategy selection and configuration."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine, GraphSchema
from cypherturn.strategies import (
    DEFAULT_BUDGET,
    PROMPT_VERSION,
    STRATEGY_NAMES,
    FewShotExample,
    Strategy,
    StrategyConfig,
    get_strategy,
    load_prompts,
    schema_examples,
)

SCHEMA = "Node properties:\nPerson {name: STRING, tags: LIST}\nThe relationships:\n(:Person)-[:KNOWS]->(:Person)"


def test_v1_context_is_the_graphcypherqa_prompt_with_schema_and_question() -> None:
    prompts = load_prompts("v1")

    context = prompts.initial_context("  Who knows Alice?\n", SCHEMA)

    assert prompts.version == "v1"
    assert len(context) == 1
    assert context[0].role == "user"
    text = context[0].content
    assert text.startswith("Task:Generate Cypher statement to query a graph database.")
    assert "Use only the provided relationship types and properties in the schema." in text
    assert f"Schema:\n{SCHEMA}\n" in text
    assert text.endswith("The question is:\nWho knows Alice?")


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_schema_braces_are_not_template_fields(version: str) -> None:
    context = load_prompts(version).initial_context("q", "Person {name: STRING} {question}")

    assert "Person {name: STRING} {question}" in context[0].content


def test_default_prompt_version_is_v2() -> None:
    assert PROMPT_VERSION == load_prompts().version == "v2"


def test_feedback_turn_is_the_query_then_the_engine_message_with_an_instruction() -> None:
    message = "Type mismatch: expected Integer but was String"

    assistant, user = load_prompts().feedback_turn("MATCH (p:Person) RETURN p.age + 'x'", message)

    assert (assistant.role, assistant.content) == (
        "assistant",
        "MATCH (p:Person) RETURN p.age + 'x'",
    )
    assert user.role == "user"
    assert f"\n{message}\n" in user.content
    assert "Correct the Cypher statement" in user.content


def test_unknown_prompt_version_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="prompt version 'v999'"):
        load_prompts("v999")


@pytest.mark.parametrize("name", ["single", "is", "ras", "ras+"])
def test_get_strategy_by_name(name: str) -> None:
    strategy = get_strategy(name)

    assert isinstance(strategy, Strategy)
    assert strategy.name == name


def test_unknown_strategy_lists_the_valid_names() -> None:
    assert STRATEGY_NAMES == ("single", "is", "ras", "ras+")
    with pytest.raises(ConfigError, match=r"known: single, is, ras, ras\+ \(or ras\+:<parts>\)"):
        get_strategy("beam")


def test_config_defaults_follow_the_paper_and_seeds_advance_per_attempt() -> None:
    config = StrategyConfig()
    seeded = StrategyConfig(seed=100)

    assert (config.budget, config.temperature) == (DEFAULT_BUDGET, 0.9) == (5, 0.9)
    assert config.attempt_seed(3) is None
    assert [seeded.attempt_seed(t) for t in (1, 2, 3)] == [100, 101, 102]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"budget": 0}, "budget"),
        ({"temperature": -0.1}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_config_rejects_bad_values_with_a_config_error(bad: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigError, match=rf"invalid strategy settings: {field}: "):
        StrategyConfig(**bad)


def test_config_read_back_from_disk_still_validates() -> None:
    with pytest.raises(ConfigError, match="budget"):
        StrategyConfig.model_validate({"budget": 0})
    assert StrategyConfig.model_validate({"budget": 3, "seed": 9}) == StrategyConfig(
        budget=3, seed=9
    )


def test_v1_is_the_papers_single_message_prompt_and_ignores_examples() -> None:
    examples = [FewShotExample(question="How many A?", cypher="MATCH (a:A) RETURN count(a)")]
    context = load_prompts("v1").initial_context("Q?", "SCHEMA", examples)
    assert [m.role for m in context] == ["user"]
    assert "SCHEMA" in context[0].content and "Q?" in context[0].content
    assert "Generate Cypher statement to query a graph database" in context[0].content


def test_v2_puts_schema_in_system_then_examples_then_question() -> None:
    examples = [
        FewShotExample(question="How many A?", cypher="MATCH (a:A) RETURN count(a)"),
        FewShotExample(question="List B names.", cypher="MATCH (b:B) RETURN b.name"),
    ]
    context = load_prompts("v2").initial_context("Q?", "SCHEMA", examples)
    assert [m.role for m in context] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "SCHEMA" in context[0].content
    assert [m.content for m in context[1:5]] == [
        "How many A?",
        "MATCH (a:A) RETURN count(a)",
        "List B names.",
        "MATCH (b:B) RETURN b.name",
    ]
    assert context[-1].content == "Q?"


def test_schema_examples_are_derived_from_the_schema_and_execute(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine()
    engine.write(
        "CREATE (:Person {name: 'Ada'})-[:LIVES_IN]->(:City {name: 'Paris'}),"
        " (:Person {name: 'Alan'})-[:LIVES_IN]->(:City {name: 'London'}),"
        " (:Person {name: 'Grace'})"
    )
    examples = schema_examples(engine.schema())
    assert [e.cypher for e in examples] == [
        "MATCH (p:Person) RETURN count(p) AS count",
        "MATCH (c:City) RETURN c.name AS name",
        "MATCH (a:Person)-[:LIVES_IN]->(b:City) RETURN DISTINCT a.name AS name",
    ]
    assert [engine.execute(e.cypher).rows for e in examples] == [
        [[3]],
        [["Paris"], ["London"]],
        [["Ada"], ["Alan"]],
    ]


def test_schema_examples_of_an_empty_schema_are_none() -> None:
    assert schema_examples(GraphSchema()) == []
