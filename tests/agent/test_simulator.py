"""The user simulator: three intents, leak filter, rotation and impatience (App. D.5)."""

from __future__ import annotations

from protocol_world import make_session

from cypherturn.agent import FALLBACK_REPLY, REJECTIONS, SimIntent, UserSimulator
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.sessions import SessionView

PROMPT = "You are a {persona}. You asked: {utterance}"


def _simulator(heroes: GraphEngine, replies: list[str]) -> tuple[UserSimulator, ReplayChatModel]:
    model = ReplayChatModel(replies)
    return UserSimulator(model, heroes.schema(), "journalist", PROMPT), model


def test_schema_probe_is_rejected_in_rotation(heroes: GraphEngine) -> None:
    sim, model = _simulator(heroes, [])
    turn = SessionView.of(make_session(heroes)).turns[0]
    texts = [
        sim.reply(q, turn, asks_before=0).text
        for q in [
            "What labels exist?",
            "Which relationship links them?",
            "Show the schema",
            "Can you give me the Cypher?",
            "What's the database property?",
        ]
    ]
    assert texts == [*REJECTIONS, REJECTIONS[0]]
    assert model.calls == []


def test_clarification_on_ambiguous_turn_gets_scripted_reply(heroes: GraphEngine) -> None:
    sim, model = _simulator(heroes, [])
    turn = SessionView.of(make_session(heroes)).turns[2]
    reply = sim.reply("Do you mean a power above some threshold?", turn, asks_before=0)
    assert reply.intent is SimIntent.DISAMBIGUATE
    assert reply.text == "Strong means a power above 80."
    assert model.calls == []


def test_general_question_goes_to_the_llm_in_persona(heroes: GraphEngine) -> None:
    sim, model = _simulator(heroes, ["I mean the members today."])
    turn = SessionView.of(make_session(heroes)).turns[0]
    reply = sim.reply("Do you mean current members?", turn, asks_before=0)
    assert reply.intent is SimIntent.GENERAL
    assert reply.text == "I mean the members today." and not reply.leaked
    assert model.settings[0]["temperature"] == 0.5
    system = model.calls[0][0].content
    assert "journalist" in system and turn.utterance in system
    assert "impatient" not in system


def test_leaking_reply_is_replaced(heroes: GraphEngine) -> None:
    sim, _ = _simulator(
        heroes, ["Use the MEMBER_OF links.", "Check founded_year.", "Look at each Guild.", "ok"]
    )
    turn = SessionView.of(make_session(heroes)).turns[0]
    for _ in range(3):
        reply = sim.reply("What do you want exactly?", turn, asks_before=0)
        assert reply.leaked and reply.text == FALLBACK_REPLY
    assert not sim.reply("What do you want exactly?", turn, asks_before=0).leaked


def test_impatience_after_three_asks(heroes: GraphEngine) -> None:
    sim, model = _simulator(heroes, ["a", "b"])
    turn = SessionView.of(make_session(heroes)).turns[0]
    sim.reply("Anything else?", turn, asks_before=2)
    sim.reply("Anything else?", turn, asks_before=3)
    assert "impatient" not in model.calls[0][0].content
    assert "impatient" in model.calls[1][0].content
