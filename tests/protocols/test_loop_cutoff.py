"""The action loop's reading of a reply cut at the completion limit.

Retries of transient endpoint failures belong to the model layer; their tests
are in tests/models/test_model_retry.py.
"""

from __future__ import annotations

from cypherturn.agent import ActionExecutor, ActionStep
from cypherturn.graph import GraphEngine
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel
from cypherturn.protocols import CUT_OFF, LoopResult, ModelCaller, run_action_loop


class CutShort(ReplayChatModel):
    """Replays, reporting every completion as stopped by the token cap."""

    def chat(self, messages: list[ChatMessage], **kwargs: object) -> ChatResponse:
        response = super().chat(messages, **kwargs)  # type: ignore[arg-type]
        return response.model_copy(update={"finish_reason": "length"})


def test_a_reply_cut_at_the_token_cap_is_named_so(heroes: GraphEngine) -> None:
    model = CutShort(['{"action": "EXECUTE_CYPHER", "input": "MATCH (h:Hero) RETURN h.na'] * 3)
    steps: list[ActionStep] = []
    result = _loop(model, heroes, steps)
    assert result.prediction is None
    assert [s.observation for s in steps] == [CUT_OFF] * 3
    assert model.calls[1][-1].content.startswith(f"Observation:\n{CUT_OFF}")


def _loop(model: ReplayChatModel, heroes: GraphEngine, steps: list[ActionStep]) -> LoopResult:
    return run_action_loop(
        call=ModelCaller(model, temperature=0.0, max_tokens=10, seed=None),
        messages=[ChatMessage(role="user", content="Name the heroes.")],
        turn=1,
        max_actions=3,
        executor=ActionExecutor(heroes),
        ask=lambda question, asks: ("", 0),
        on_step=steps.append,
        footer=lambda left: f"{left} left.",
    )


def test_a_projection_that_ran_away_is_read_up_to_its_first_repeat(heroes: GraphEngine) -> None:
    runaway = (
        '{"action": "SUBMIT_ANSWER", "input": "MATCH (h:Hero) RETURN h.name AS name, '
        "h.power AS power, h.name AS name, h.power AS power, h.na"
    )
    steps: list[ActionStep] = []
    result = _loop(CutShort([runaway]), heroes, steps)
    query = "MATCH (h:Hero) RETURN h.name AS name, h.power AS power"
    assert result.submitted == query
    assert steps[0].repaired and steps[0].payload == query
    assert steps[0].reply == runaway


def test_a_query_cut_anywhere_else_is_not_run(heroes: GraphEngine) -> None:
    cut = '{"action": "EXECUTE_CYPHER", "input": "MATCH (h:Hero) WHERE h.name IN [\'a\', \'a\', \'a'
    steps: list[ActionStep] = []
    _loop(CutShort([cut] * 3), heroes, steps)
    assert [s.action for s in steps] == [None] * 3
    assert [s.observation for s in steps] == [CUT_OFF] * 3
