"""A strategy added through the registry runs end to end: api.ask on the real engine, replay model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from cypherturn import api
from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.models import ChatModel, ReplayChatModel
from cypherturn.strategies import (
    STRATEGIES,
    FewShotExample,
    Strategy,
    StrategyConfig,
    StrategyResult,
    TokenCallback,
    get_strategy,
    register_strategy,
    strategy_names,
)


@dataclass(frozen=True)
class ReflectTwice:
    """A new strategy: RAS with a budget of at most ``cap`` attempts, under its own name."""

    cap: int = 2
    name: str = "mine"

    def run(
        self,
        model: ChatModel,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> StrategyResult:
        config = config or StrategyConfig()
        capped = config.model_copy(update={"budget": min(self.cap, config.budget)})
        result = get_strategy("ras").run(model, engine, question, schema_text, capped, examples)
        return result.model_copy(update={"strategy": self.name})


def _factory(options: str | None, *, on_token: TokenCallback | None) -> Strategy:
    if options is None:
        return ReflectTwice()
    if not options.isdigit():
        raise ConfigError(f"mine:<cap> takes a number, not {options!r}")
    return ReflectTwice(cap=int(options), name=f"mine:{options}")


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("registry")
    engine.write("CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'})")
    return engine


def test_a_registered_strategy_runs_through_api_ask(people: GraphEngine) -> None:
    bad, good = "MATCH (p:Person RETURN p", "MATCH (p:Person) RETURN count(p) AS n"
    with STRATEGIES.registered("mine", _factory):
        assert strategy_names()[-1] == "mine"
        model = ReplayChatModel([bad, bad, good])
        result = api.ask("How many people?", graph=people.graph, strategy="mine", model=model)
        assert result.strategy == "mine" and result.budget == 2
        assert [a.ok for a in result.attempts] == [False, False]  # capped before the good one
        assert len(model.calls) == 2
        assert len(model.calls[1]) > len(model.calls[0])  # RAS fed the engine's error back

        model = ReplayChatModel([bad, good])
        result = api.ask("How many people?", graph=people.graph, strategy="mine:3", model=model)
        assert result.strategy == "mine:3" and result.success
        assert result.final_result is not None and result.final_result.rows == [[2]]

        with pytest.raises(ConfigError, match="takes a number"):
            get_strategy("mine:x")
    with pytest.raises(
        ConfigError, match=r"unknown strategy 'mine'; known: single, is, ras, ras\+"
    ):
        get_strategy("mine")


def test_registration_is_checked() -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_strategy("ras", _factory)
    with pytest.raises(ConfigError, match="holds no ':'"):
        register_strategy("a:b", _factory)
    with pytest.raises(ConfigError, match="takes no options"):
        get_strategy("is:3")
    assert get_strategy("ras+:check,values").name == "ras+:check,values"
