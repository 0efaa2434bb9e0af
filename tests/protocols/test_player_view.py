"""Players never hold the gold: the session view, and prompts unchanged by it (issue 38, item 5).

``golden_prompts.json`` holds every message the evaluated model and the user
simulator were given in six plays of the heroes session (guided and agentic, the
paper's agent and the harness settings beyond it, text and tool-call formats),
recorded with the code before the protocols received a view instead of the
session. The plays must reproduce them byte for byte. To record them again after
an intended prompt change, run this module with ``CYPHERTURN_RECORD_PROMPTS=1``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers_protocols import Played, act, play

from cypherturn.agent import ActionExecutor, AgentGrounding
from cypherturn.errors import ConfigError, DatasetError, GoldWithheldError
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.protocols import (
    ActionFormat,
    Framing,
    ModelCaller,
    ProtocolSettings,
    SessionEnv,
    Variant,
    load_prompts,
    play_session,
    player_view,
)
from cypherturn.records import ProtocolName
from cypherturn.sessions import GoldResult, PlayerTurn, Session, SessionView

GOLDEN = Path(__file__).with_name("golden_prompts.json")
AGENTIC = ProtocolName.AGENTIC
IRON = "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild {name: 'Iron Circle'}) RETURN h.name AS name"
WRONG = "MATCH (g:Guild)-[:MEMBER_OF]->(h:Hero) WHERE g.name = 'Iron Circle' RETURN h.name AS name"
OTHERS = (
    "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) WHERE g.name <> 'Iron Circle' RETURN h.name AS name"
)
STRONG = (
    "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) WHERE g.name <> 'Iron Circle' AND h.power > 80 "
    "RETURN h.name AS name"
)
GUILD = (
    "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) WHERE h.name = 'Bran Ironfist' RETURN g.name AS guild"
)
SEARCH = {"label": "Hero", "property": "name", "query": "ada"}
HARNESS: dict[str, Any] = {
    "grounding": AgentGrounding(repair=True, values=True, question=True, reference=True),
    "framing": Framing.EXPLICIT,
    "output_note": True,
    "chain_note": True,
    "repeat_guard": True,
}


def _guided_paper(session: Session, engine: GraphEngine) -> Played:
    replies = [
        act("EXECUTE_CYPHER", IRON),
        "not an action",
        act("SEARCH_VALUES", SEARCH),
        act("ASK_USER", "What do you mean?"),
        act("SUBMIT_ANSWER", OTHERS),
        act("ASK_USER", "Do you mean a power above some threshold?"),
        act("EXECUTE_CYPHER", STRONG),
        act("SUBMIT_ANSWER", STRONG),
        act("INSPECT_SCHEMA"),
        act("SUBMIT_ANSWER", GUILD),
    ]
    return play(session, engine, replies)


def _guided_harness(session: Session, engine: GraphEngine) -> Played:
    replies = [
        act("EXECUTE_CYPHER", WRONG),
        act("EXECUTE_CYPHER", WRONG),
        act("SUBMIT_ANSWER", WRONG),
        act("SUBMIT_ANSWER", "MATCH (h:Hero) WHERE NOT h.name IN ['Recruit 01'] RETURN h.name"),
        act("SEARCH_VALUES", SEARCH),
        act("SUBMIT_ANSWER", STRONG),
        act("ASK_USER", "Which one?"),
        act("SUBMIT_ANSWER", "MATCH (h:Hero {name: 'Bran Ironfist'})-[:MEMBER_OF]->(g) RETURN g"),
    ]
    return play(session, engine, replies, query_memory=True, last_action_note=True, **HARNESS)


def _guided_tools(session: Session, engine: GraphEngine) -> Played:
    def call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
        return {"text": "", "tool_calls": [{"id": f"c{n}", "name": name, "arguments": arguments}]}

    replies = [
        call("EXECUTE_CYPHER", {"query": IRON}, 1),
        call("SUBMIT_ANSWER", {"query": IRON}, 2),
        call("ASK_USER", {"question": "Which ones?"}, 3),
        call("SUBMIT_ANSWER", {"query": OTHERS}, 4),
        call("SEARCH_VALUES", SEARCH, 5),
        call("INSPECT_SCHEMA", {}, 6),
        call("SUBMIT_ANSWER", {"query": STRONG}, 7),
        call("SUBMIT_ANSWER", {"query": GUILD}, 8),
    ]
    return play(session, engine, replies, action_format=ActionFormat.TOOLS)


def _agentic_paper(session: Session, engine: GraphEngine) -> Played:
    # B = 12: turn 1 takes 5 units, turn 2 two, turn 3 the last five; turn 4 falls off the cliff
    replies = [
        act("INSPECT_SCHEMA"),
        act("SEARCH_VALUES", SEARCH),
        act("EXECUTE_CYPHER", IRON),
        act("ASK_USER", "Do you mean current members?"),
        act("SUBMIT_ANSWER", IRON),
        act("ASK_USER", "What labels exist?"),
        act("SUBMIT_ANSWER", OTHERS),
        act("ASK_USER", "Which threshold do you mean?"),
        act("ASK_USER", "Tell me more"),
        act("ASK_USER", "Tell me even more"),
        act("ASK_USER", "Tell me all of it"),
        act("EXECUTE_CYPHER", STRONG),
    ]
    sim = ["Yes, the current ones.", "Use the MEMBER_OF links.", "Strong ones.", "Just answer!"]
    return play(session, engine, replies, protocol=AGENTIC, sim_replies=sim)


def _agentic_harness(session: Session, engine: GraphEngine) -> Played:
    replies = [
        act("EXECUTE_CYPHER", WRONG),
        act("EXECUTE_CYPHER", WRONG),
        act("SUBMIT_ANSWER", WRONG),
        act("ASK_USER", "Do you mean the ones outside it"),
        act("SUBMIT_ANSWER", OTHERS),
        act("SUBMIT_ANSWER", STRONG),
        act("SUBMIT_ANSWER", GUILD),
    ]
    return play(
        session,
        engine,
        replies,
        protocol=AGENTIC,
        m=5,
        variant=Variant.PERSISTENT_SCHEMA,
        schema_first=True,
        sim_replies=["Yes, those."],
        **HARNESS,
    )


def _agentic_horizon(session: Session, engine: GraphEngine) -> Played:
    replies = [act("INSPECT_SCHEMA"), act("SUBMIT_ANSWER", IRON), act("SUBMIT_ANSWER", OTHERS)]
    replies += [act("ASK_USER", "Strong as in what?"), act("SUBMIT_ANSWER", STRONG)]
    replies += [act("SUBMIT_ANSWER", GUILD)]
    return play(session, engine, replies, protocol=AGENTIC, variant=Variant.DISCLOSED_HORIZON)


SCENARIOS: dict[str, Callable[[Session, GraphEngine], Played]] = {
    "guided_paper": _guided_paper,
    "guided_harness": _guided_harness,
    "guided_tools": _guided_tools,
    "agentic_paper": _agentic_paper,
    "agentic_harness": _agentic_harness,
    "agentic_horizon": _agentic_horizon,
}


def _transcript(played: Played) -> dict[str, Any]:
    """Every context the model and the simulator were given, and what each turn predicted."""
    sim_calls = played.sim_model.calls if played.sim_model is not None else []
    return {
        "calls": [[m.model_dump(mode="json") for m in call] for call in played.model.calls],
        "simulator_calls": [[m.model_dump(mode="json") for m in call] for call in sim_calls],
        "outcomes": [
            [o.turn, o.end.value, o.predicted_cypher, o.budget_remaining] for o in played.outcomes
        ],
    }


def test_every_prompt_is_the_recorded_one(session: Session, heroes: GraphEngine) -> None:
    transcripts = {name: _transcript(run(session, heroes)) for name, run in SCENARIOS.items()}
    if os.environ.get("CYPHERTURN_RECORD_PROMPTS"):
        GOLDEN.write_text(json.dumps(transcripts, indent=1, ensure_ascii=False) + "\n")
        pytest.skip(f"recorded {GOLDEN.name}")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert set(transcripts) == set(golden)
    for name, transcript in transcripts.items():
        assert transcript["outcomes"] == golden[name]["outcomes"], name
        for kind in ("calls", "simulator_calls"):
            assert len(transcript[kind]) == len(golden[name][kind]), (name, kind)
            for number, (now, then) in enumerate(
                zip(transcript[kind], golden[name][kind], strict=True)
            ):
                assert now == then, f"{name}: {kind}[{number}] differs"


def _call_turns(played: Played) -> list[int]:
    """The turn of each model call (one call per step the model took)."""
    return [s.turn for s in played.steps if not s.by_harness]


def _with_garbage_golds(session: Session, first: int) -> Session:
    """``session`` with the gold query and result of every turn from ``first`` on replaced."""
    garbage = {
        "gold_cypher": "RETURN 'garbage' AS garbage",
        "gold_result": GoldResult(columns=["garbage"], rows=[["no such row"]] * 40),
    }
    turns = [t.model_copy(update=garbage) if t.turn_index >= first else t for t in session.turns]
    return session.model_copy(update={"turns": turns})


@pytest.mark.parametrize("scenario", ["guided_paper", "guided_harness"])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_a_guided_turn_never_sees_its_own_or_later_golds(
    session: Session, heroes: GraphEngine, scenario: str, k: int
) -> None:
    run = SCENARIOS[scenario]
    clean, spoiled = run(session, heroes), run(_with_garbage_golds(session, k), heroes)
    turns = _call_turns(clean)
    assert _call_turns(spoiled) == turns
    for number, turn in enumerate(turns):
        same = spoiled.model.calls[number] == clean.model.calls[number]
        # up to turn k every prompt is the same; after it the history shows turn k's result
        assert same is (turn <= k), (scenario, k, number, turn)


@pytest.mark.parametrize("scenario", ["agentic_paper", "agentic_harness", "agentic_horizon"])
def test_an_agentic_play_reads_no_gold_at_all(
    session: Session, heroes: GraphEngine, scenario: str
) -> None:
    run = SCENARIOS[scenario]
    clean, spoiled = run(session, heroes), run(_with_garbage_golds(session, 1), heroes)
    assert _transcript(spoiled) == _transcript(clean)


def test_a_players_turn_has_no_gold(session: Session) -> None:
    guided = SessionView.of(session, oracle_history=True)
    assert set(PlayerTurn.model_fields) == {
        "turn_index", "utterance", "phenomena", "chain_mode", "depends_on", "simulator_reply",
    }  # fmt: skip
    for hidden in ("gold_cypher", "gold_result", "reference_description", "ambiguity_info"):
        assert all(not hasattr(turn, hidden) for turn in guided.turns), hidden
    assert guided.turns[2].simulator_reply == "Strong means a power above 80."
    assert guided.turns[0].simulator_reply is None
    # no gold query and no gold row in what the view dumps or prints
    shown = guided.model_dump_json() + repr(guided) + guided.model_copy().model_dump_json()
    for turn in session.turns:
        assert turn.gold_cypher not in shown
    assert "Recruit 25" not in shown and "Ada Stormborn" not in shown


@pytest.mark.parametrize("current", [1, 2, 3, 4])
def test_only_earlier_results_are_given_and_only_under_oracle_history(
    session: Session, current: int
) -> None:
    guided = SessionView.of(session, oracle_history=True)
    agentic = SessionView.of(session)
    for earlier in range(1, current):
        assert (
            guided.earlier_result(earlier, current=current)
            == session.turns[earlier - 1].gold_result
        )
        with pytest.raises(GoldWithheldError, match="no oracle history"):
            agentic.earlier_result(earlier, current=current)
    for withheld in range(current, len(session.turns) + 1):
        with pytest.raises(GoldWithheldError, match=f"turn {withheld} is withheld"):
            guided.earlier_result(withheld, current=current)
    # a turn past the session's last does not unlock its last result
    with pytest.raises(GoldWithheldError, match="not one of its 4 turns"):
        guided.earlier_result(4, current=5)


def test_each_protocol_refuses_the_other_protocols_view(
    session: Session, heroes: GraphEngine
) -> None:
    for protocol, view in (
        (ProtocolName.GUIDED, SessionView.of(session)),
        (AGENTIC, SessionView.of(session, oracle_history=True)),
    ):
        env = SessionEnv(
            call=ModelCaller(ReplayChatModel([]), temperature=0.0, max_tokens=10, seed=None),
            executor=ActionExecutor(heroes),
            prompts=load_prompts(),
            settings=ProtocolSettings(protocol=protocol),
            on_step=lambda _step: None,
            on_turn=lambda _outcome: None,
        )
        with pytest.raises(ConfigError, match="oracle history"):
            play_session(view, env)
    assert player_view(session, ProtocolName.GUIDED).oracle_history
    assert not player_view(session, AGENTIC).oracle_history


def test_a_view_needs_turns_numbered_in_order(session: Session) -> None:
    shuffled = session.model_copy(update={"turns": session.turns[::-1]})
    with pytest.raises(DatasetError, match=r"numbered \[4, 3, 2, 1\]"):
        SessionView.of(shuffled)
