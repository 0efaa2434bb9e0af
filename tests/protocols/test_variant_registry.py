"""A protocol variant added through the registry is played, logged and recorded under its name."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_protocols import act, play

from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.protocols import (
    PROTOCOL_VARIANTS,
    PromptSet,
    ProtocolSettings,
    ProtocolVariant,
    TurnBudget,
    Variant,
    get_variant,
    register_variant,
)
from cypherturn.records import ProtocolName
from cypherturn.runner import run_session
from cypherturn.sessions import Session

Q1 = "MATCH (h:Hero) RETURN h.name AS name ORDER BY name"


def _countdown(prompts: PromptSet, budget: TurnBudget) -> str:
    return f"Questions after this one: {budget.total_turns - budget.turn}.\n\n"


COUNTDOWN = ProtocolVariant(
    "countdown",
    "questions left shown each turn, encouraging prompt, schema kept",
    efficiency_prompt="encouraging",
    keeps_schema=True,
    turn_note=_countdown,
)


def test_a_registered_variant_is_played_and_recorded(
    session: Session, heroes: GraphEngine, tmp_path: Path
) -> None:
    replies = [act("INSPECT_SCHEMA"), act("SUBMIT_ANSWER", Q1)] + [act("SUBMIT_ANSWER", Q1)] * 3
    with PROTOCOL_VARIANTS.registered(COUNTDOWN.name, COUNTDOWN):
        played = play(session, heroes, replies, protocol=ProtocolName.AGENTIC, variant="countdown")
        assert "Questions after this one: 3." in played.prompt(0)
        assert "Questions after this one: 0." in played.prompt(4)
        assert "(:Hero {" in played.prompt(2)  # the schema is kept
        system = played.model.calls[0][0].content
        assert "Use your available budget fully" in system and "Be efficient" not in system

        settings = ProtocolSettings(protocol=ProtocolName.AGENTIC, variant="countdown")
        assert ProtocolSettings.model_validate_json(settings.model_dump_json()) == settings
        result = run_session(
            session,
            model=ReplayChatModel(replies),
            engine=heroes,
            settings=settings,
            sim_model=ReplayChatModel([]),
            log_path=tmp_path / "log.jsonl",
        )
        assert [r.variant for r in result.records] == ["countdown"] * 4
        assert all(r.predicted_cypher == Q1 for r in result.records)
    with pytest.raises(ValueError, match=r"unknown protocol variant 'countdown'; known: base"):
        ProtocolSettings(protocol=ProtocolName.AGENTIC, variant="countdown")


def test_built_in_variants_are_registered_objects() -> None:
    assert PROTOCOL_VARIANTS.names() == tuple(v.value for v in Variant)
    assert get_variant(Variant.PERSISTENT_SCHEMA).keeps_schema
    assert get_variant(Variant.BUDGET_ENCOURAGING).default_multiplier == 10
    with pytest.raises(ConfigError, match="already registered"):
        register_variant(ProtocolVariant("base", "again"))
    with pytest.raises(ConfigError, match="unknown protocol variant 'x'"):
        get_variant("x")
