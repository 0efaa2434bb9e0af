"""Prompt templates, strategy selection and configuration (no engine needed)."""

from __future__ import annotations

import pytest

from cypherturn.errors import ConfigError
from cypherturn.strategies import (
    DEFAULT_BUDGET,
    PROMPT_VERSION,
    STRATEGY_NAMES,
    Strategy,
    StrategyConfig,
    get_strategy,
    load_prompts,
)

SCHEMA = "Node properties:\nPerson {name: STRING, tags: LIST}\nThe relationships:\n(:Person)-[:KNOWS]->(:Person)"


def test_initial_context_is_the_graphcypherqa_prompt_with_schema_and_question() -> None:
    prompts = load_prompts()

    context = prompts.initial_context("  Who knows Alice?\n", SCHEMA)

    assert prompts.version == PROMPT_VERSION
    assert len(context) == 1
    assert context[0].role == "user"
    text = context[0].content
    assert text.startswith("Task:Generate Cypher statement to query a graph database.")
    assert "Use only the provided relationship types and properties in the schema." in text
    assert f"Schema:\n{SCHEMA}\n" in text
    assert text.endswith("The question is:\nWho knows Alice?")


def test_schema_braces_are_not_template_fields() -> None:
    context = load_prompts().initial_context("q", "Person {name: STRING} {question}")

    assert "Person {name: STRING} {question}" in context[0].content


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


@pytest.mark.parametrize("name", ["single", "is", "ras"])
def test_get_strategy_by_name(name: str) -> None:
    strategy = get_strategy(name)

    assert isinstance(strategy, Strategy)
    assert strategy.name == name


def test_unknown_strategy_lists_the_valid_names() -> None:
    assert STRATEGY_NAMES == ("single", "is", "ras")
    with pytest.raises(ConfigError, match="choose one of: single, is, ras"):
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
