"""The session generator on the real engine: every phenomenon on every world, verified independently."""

from __future__ import annotations

import pytest
from session_graphs import WORLDS, WorldGraphs

from cypherturn.graph import GraphData
from cypherturn.sessions import (
    ChainMode,
    Persona,
    Phenomenon,
    SessionGenerator,
    compare_results,
    compose_session,
    is_chain_dependent,
    verify_session,
)
from cypherturn.worlds import get_world

# What to ask for first so that the phenomenon has something to work on.
LEADS: dict[Phenomenon, list[Phenomenon]] = {
    Phenomenon.EXPAND: [Phenomenon.EXPAND],
    Phenomenon.PIVOT: [Phenomenon.PIVOT],
    Phenomenon.FIRST: [Phenomenon.EXPAND, Phenomenon.FIRST],
    Phenomenon.COUNT: [Phenomenon.COUNT],
    Phenomenon.AGG_SUM: [Phenomenon.AGG_SUM],
    Phenomenon.AGG_AVG: [Phenomenon.AGG_AVG],
    Phenomenon.AGG_MAX: [Phenomenon.AGG_MAX],
    Phenomenon.FILTER: [Phenomenon.FILTER],
    Phenomenon.REFINE: [Phenomenon.VALUE_FILTER, Phenomenon.REFINE],
    Phenomenon.VALUE_FILTER: [Phenomenon.VALUE_FILTER],
    Phenomenon.MULTI_CONDITION: [Phenomenon.MULTI_CONDITION],
    Phenomenon.CONTRAST: [Phenomenon.CONTRAST],
    Phenomenon.TOPIC_SHIFT: [Phenomenon.EXPAND, Phenomenon.TOPIC_SHIFT],
}


@pytest.mark.parametrize("world", WORLDS)
def test_every_phenomenon_gives_executable_non_empty_gold(world: str, worlds: WorldGraphs) -> None:
    generator = worlds.generator(world)
    engine = worlds.engine(world)
    for phenomenon, lead in LEADS.items():
        for attempt in range(15):
            session = generator.session(
                session_id=f"{world}-{phenomenon.value}-{attempt}",
                persona=list(Persona)[attempt % len(Persona)],
                length=len(lead) + 1,
                seed=attempt,
                key=f"lead/{phenomenon.value}/{attempt}",
                prefer=lead,
            )
            if phenomenon in session.turns[-1].phenomena:
                break
        else:
            pytest.fail(f"{world}: no {phenomenon.value} turn in 15 targeted sessions")
        turn = session.turns[-1]
        assert turn.gold_result.rows, (world, phenomenon, turn.gold_cypher)
        assert verify_session(session, engine) == [], (world, phenomenon, turn.gold_cypher)


@pytest.mark.parametrize("world", WORLDS)
def test_generated_sessions_pass_every_audit(world: str, worlds: WorldGraphs) -> None:
    engine = worlds.engine(world)
    for session in worlds.sample(world)[:6]:
        assert verify_session(session, engine) == [], session.session_id


@pytest.mark.parametrize("world", WORLDS)
def test_session_structure(world: str, worlds: WorldGraphs) -> None:
    for session in worlds.sample(world):
        assert [t.turn_index for t in session.turns] == list(range(1, 11))
        first = session.turns[0]
        assert (
            first.chain_mode is ChainMode.NONE
            and first.phenomena == []
            and first.depends_on is None
        )
        for previous, turn in zip(session.turns, session.turns[1:], strict=False):
            assert len(turn.phenomena) == 1
            if is_chain_dependent(turn.chain_mode):
                assert turn.depends_on is not None and turn.depends_on < turn.turn_index
                if Phenomenon.FIRST not in turn.phenomena:
                    assert turn.depends_on == previous.turn_index
            else:
                assert turn.depends_on is None
            assert 0 < turn.gold_result.row_count <= 1000
            assert turn.utterance and "{" not in turn.utterance
        skeletons = [t.skeleton for t in session.turns]
        assert [c.gold for c in compose_session([s for s in skeletons if s is not None])] == [
            t.gold_cypher for t in session.turns
        ]


def test_chain_dependent_golds_rederive_the_prior_set(worlds: WorldGraphs) -> None:
    for session in worlds.sample("magic_academy"):
        for turn in session.turns:
            if turn.depends_on is None or not is_chain_dependent(turn.chain_mode):
                continue
            prior = session.turns[turn.depends_on - 1].gold_cypher
            origin = prior.splitlines()[0]
            assert turn.gold_cypher.startswith(origin), (prior, turn.gold_cypher)
            names = [
                str(r[0])
                for r in session.turns[turn.depends_on - 1].gold_result.rows
                if isinstance(r[0], str)
            ]
            pasted = [n for n in names if f"'{n}'" in turn.gold_cypher and f"'{n}'" not in prior]
            assert not pasted, f"prior result pasted as literals: {pasted}"


def test_same_seed_same_bytes_other_seed_other_sessions(worlds: WorldGraphs) -> None:
    engine = worlds.engine("ocean_kingdom")
    schema = get_world("ocean_kingdom").declared_schema()

    def run(seed: int) -> list[str]:
        generator = SessionGenerator("ocean_kingdom", engine, schema)
        return [
            generator.session(
                session_id=f"s{i}", persona=Persona.STUDENT, length=8, seed=seed, key=f"k{i}"
            ).to_line()
            for i in range(5)
        ]

    assert run(1) == run(1)
    assert run(1) != run(2)


@pytest.mark.parametrize("world", ["ancient_empire", "celestial_court", "stellar_colony"])
def test_gold_results_do_not_depend_on_the_order_of_tied_rows(
    world: str, worlds: WorldGraphs
) -> None:
    data = get_world(world).build(seed=0)
    reversed_copy = worlds.load_copy(
        GraphData(
            name=data.name,
            nodes=list(reversed(data.nodes)),
            relationships=list(reversed(data.relationships)),
            indexes=data.indexes,
        )
    )
    original = worlds.engine(world)
    # The copy does return tied rows in another order: an un-broken tie shows it.
    label, prop = {"ancient_empire": ("Legion", "specialty"), "celestial_court": ("Official", "rank"),
                   "stellar_colony": ("Colony", "tier")}[world]  # fmt: skip
    cut = f"MATCH (n:{label}) WITH n ORDER BY n.{prop} ASC LIMIT 3 RETURN n.name AS name"
    assert (
        compare_results(_stored(original.execute(cut)), reversed_copy.execute(cut)) is not None
    ), "the reversed copy should break ties differently"
    checked = 0
    for session in worlds.sample(world):
        for turn in session.turns:
            assert (
                compare_results(turn.gold_result, reversed_copy.execute(turn.gold_cypher)) is None
            ), turn.gold_cypher
            checked += 1
    assert checked == 120


def _stored(result):  # type: ignore[no-untyped-def]
    from cypherturn.sessions import GoldResult, canonical_rows

    return GoldResult(columns=list(result.columns), rows=canonical_rows(result.rows))
