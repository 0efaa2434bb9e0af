"""Retries of transient endpoint failures (ModelCaller, RetryPolicy)."""

from __future__ import annotations

import pytest

from cypherturn.agent import ActionExecutor, ActionStep
from cypherturn.errors import ModelResponseError, ModelUnavailableError
from cypherturn.graph import GraphEngine
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel
from cypherturn.protocols import CUT_OFF, ModelCaller, RetryPolicy, run_action_loop


class Flaky(ReplayChatModel):
    """Raises ``error`` on the first ``failures`` calls, then replays."""

    def __init__(self, failures: int, error: Exception) -> None:
        super().__init__(["ok"] * 5)
        self.failures = failures
        self.error = error
        self.attempts = 0

    def chat(self, messages: list[ChatMessage], **kwargs: object) -> ChatResponse:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise self.error
        return super().chat(messages, **kwargs)  # type: ignore[arg-type]


def _caller(model: Flaky, attempts: int = 3) -> ModelCaller:
    policy = RetryPolicy(attempts=attempts, initial_delay_s=0.0)
    return ModelCaller(model, temperature=0.0, max_tokens=10, seed=None, retry=policy)


def test_delays_back_off_up_to_the_cap() -> None:
    policy = RetryPolicy(attempts=5, initial_delay_s=2.0, factor=3.0, max_delay_s=10.0)
    assert policy.delays() == [2.0, 6.0, 10.0, 10.0]


def test_transient_failures_are_retried() -> None:
    model = Flaky(2, ModelUnavailableError("HTTP 503"))
    assert _caller(model)([ChatMessage(role="user", content="hi")]).text == "ok"
    assert model.attempts == 3


def test_persistent_failure_is_raised_after_the_last_attempt() -> None:
    model = Flaky(3, ModelUnavailableError("HTTP 503"))
    with pytest.raises(ModelUnavailableError):
        _caller(model)([ChatMessage(role="user", content="hi")])
    assert model.attempts == 3


def test_unusable_answers_are_not_retried() -> None:
    model = Flaky(1, ModelResponseError("HTTP 400"))
    with pytest.raises(ModelResponseError):
        _caller(model)([ChatMessage(role="user", content="hi")])
    assert model.attempts == 1


class CutShort(ReplayChatModel):
    """Replays, reporting every completion as stopped by the token cap."""

    def chat(self, messages: list[ChatMessage], **kwargs: object) -> ChatResponse:
        response = super().chat(messages, **kwargs)  # type: ignore[arg-type]
        return response.model_copy(update={"finish_reason": "length"})


def test_a_reply_cut_at_the_token_cap_is_named_so(heroes: GraphEngine) -> None:
    model = CutShort(['{"action": "EXECUTE_CYPHER", "input": "MATCH (h:Hero) RETURN h.na'] * 3)
    steps: list[ActionStep] = []
    result = run_action_loop(
        call=ModelCaller(model, temperature=0.0, max_tokens=10, seed=None),
        messages=[ChatMessage(role="user", content="Name the heroes.")],
        turn=1,
        max_actions=3,
        executor=ActionExecutor(heroes),
        ask=lambda question, asks: ("", 0),
        on_step=steps.append,
        footer=lambda left: f"{left} left.",
    )
    assert result.prediction is None
    assert [s.observation for s in steps] == [CUT_OFF] * 3
    assert model.calls[1][-1].content.startswith(f"Observation:\n{CUT_OFF}")
