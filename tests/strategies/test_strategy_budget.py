"""The wall-clock budget of one answer (``StrategyConfig.max_seconds``), on the real embedded FalkorDB.

The model is a replay model whose every call takes a set time, checked against
the call limits as a real call is (so the deadline cuts it in flight).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from cypherturn import api
from cypherturn.errors import ErrorClass
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.grounding import graph_index
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel, current_limits
from cypherturn.strategies import (
    StrategyConfig,
    StrategyResult,
    get_strategy,
    query_timeout_within,
)

GOOD = "MATCH (p:Person) RETURN count(p) AS n"
SLOW = "MATCH (a:Person), (b:Person), (c:Person), (d:Person), (e:Person) RETURN count(*) AS n"
"""200^5 rows: runs until its timeout."""


class SlowModel:
    """Replays ``responses``, each call taking ``seconds`` unless a limit ends it first."""

    def __init__(self, responses: Sequence[str], seconds: float) -> None:
        self._replay = ReplayChatModel(responses)
        self._seconds = seconds
        self.calls = 0

    @property
    def spec(self) -> str:
        return "replay:slow"

    @property
    def supports_grammar(self) -> bool:
        return False

    @property
    def supports_decoding_guards(self) -> bool:
        return False

    def chat(self, messages: list[ChatMessage], **options: Any) -> ChatResponse:
        self.calls += 1
        end = time.monotonic() + self._seconds
        while time.monotonic() < end:
            current_limits().check(self.spec)  # as a GGUF decode is aborted mid-way
            time.sleep(0.01)
        return self._replay.chat(messages, **{k: v for k, v in options.items() if k != "grammar"})


class Recording:
    """An engine that records the timeout of every query it runs."""

    def __init__(self, engine: GraphEngine) -> None:
        self._engine = engine
        self.timeouts: list[float | None] = []

    def execute(self, query: str, **options: Any) -> QueryResult:
        self.timeouts.append(options.get("timeout_s"))
        return self._engine.execute(query, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("budget")
    engine.write("UNWIND range(1, 200) AS i CREATE (:Person {name: 'p' + toString(i)})")
    return engine


def _run(
    name: str, engine: Any, model: Any, max_seconds: float | None, budget: int = 5
) -> StrategyResult:
    schema = graph_index(engine).schema_text()
    config = StrategyConfig(budget=budget, seed=0, max_seconds=max_seconds)
    return get_strategy(name).run(model, engine, "How many people?", schema, config)


def test_ras_plus_returns_the_verified_candidate_found_before_the_budget_ran_out(
    people: GraphEngine,
) -> None:
    # the vote wants a second agreeing candidate; the budget ends during its attempt (too
    # little is left after its model call to run a query whose timeout fits: 1.25 s)
    model = SlowModel([GOOD, GOOD, GOOD], seconds=1.0)
    result = _run("ras+:+vote", people, model, max_seconds=3.0)
    assert [a.verdict for a in result.attempts] == ["answer"], result.stop_reason
    assert result.success and result.final_query == GOOD and result.selected_attempt == 1
    assert result.final_result is not None and result.final_result.rows == [[200]]
    assert result.stop_reason == (
        "the time budget of 3 s was spent during attempt 2; 1 finished attempt(s) kept"
    )
    assert result.elapsed_s is not None and result.elapsed_s < 3.0
    # without the vote (the default) the verified candidate ends the loop at once
    plain = _run("ras+", people, SlowModel([GOOD], seconds=1.0), max_seconds=3.0)
    assert len(plain.attempts) == 1 and plain.success and plain.stop_reason is None


@pytest.mark.parametrize("name", ["ras", "ras+"])
def test_no_attempt_within_the_budget_is_no_answer_with_the_reason(
    people: GraphEngine, name: str
) -> None:
    result = _run(name, people, SlowModel([GOOD], seconds=5.0), max_seconds=2.0)
    assert result.attempts == [] and not result.success
    assert result.final_query == "" and result.final_result is None
    assert result.stop_reason == "the time budget of 2 s was spent during attempt 1"
    assert result.elapsed_s is not None and result.elapsed_s < 2.5


def test_queries_run_under_timeouts_clamped_to_what_is_left_and_the_run_ends_in_time(
    people: GraphEngine,
) -> None:
    engine = Recording(people)
    graph_index(engine)  # introspected first: its queries are the loader's, not the strategy's
    engine.timeouts.clear()
    started = time.monotonic()
    result = _run("ras", engine, SlowModel([SLOW] * 5, seconds=0.0), max_seconds=4.0)
    wall = time.monotonic() - started
    # every query got at most what keeps the engine's promise max(2L, L + 1) inside the budget
    assert engine.timeouts and all(t is not None and t <= 2.0 for t in engine.timeouts)
    assert engine.timeouts == sorted(engine.timeouts, reverse=True)
    assert all(a.error_class is ErrorClass.TIMEOUT for a in result.attempts)
    assert not result.success and result.stop_reason is not None
    assert wall < 4.0, wall


def test_the_largest_timeout_whose_promise_fits_is_chosen() -> None:
    from cypherturn.graph import timeout_promise_s

    for remaining in (1.5, 2.0, 3.7, 60.0):
        fit = query_timeout_within(remaining)
        assert timeout_promise_s(fit) <= remaining + 1e-9
        assert timeout_promise_s(fit * 1.01) > remaining


def test_without_a_budget_configs_and_results_keep_their_layout(people: GraphEngine) -> None:
    # benchmark and QER runs set no budget: their records are written as before
    assert "max_seconds" not in StrategyConfig().model_dump()
    result = _run("ras", people, ReplayChatModel([GOOD]), max_seconds=None)
    record = result.model_dump()
    assert "stop_reason" not in record and "elapsed_s" not in record
    assert "max_seconds" not in record["config"]
    assert StrategyResult.model_validate_json(result.model_dump_json()) == result


def test_ask_defaults_to_a_60_s_budget_and_api_ask_can_lift_it() -> None:
    assert api.AskConfig().strategy_config().max_seconds == api.DEFAULT_MAX_SECONDS == 60.0
    assert api.AskConfig(max_seconds=None).strategy_config().max_seconds is None
    assert api.ChatConfig(max_seconds=5).strategy_config().max_seconds == 5


def test_the_answer_in_words_gets_what_the_strategy_left(people: GraphEngine) -> None:
    result = _run("ras", people, ReplayChatModel([GOOD]), max_seconds=30.0)
    spent = result.model_copy(update={"elapsed_s": 30.0})
    never = ReplayChatModel([])  # a model call would fail: none is made
    answer = api.answer_within_budget(never, "How many people?", spent)
    assert answer.source == "template" and "200" in answer.text
    assert answer.reason == "the time budget of 30 s was spent before the answer in words"
    written = api.answer_within_budget(
        ReplayChatModel(["There are 200 people."]), "How many people?", result
    )
    assert written.source == "model" and written.text == "There are 200 people."
