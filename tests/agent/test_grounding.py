"""Grounding inside the agent: EXECUTE_CYPHER and SUBMIT_ANSWER through ras+'s check, repairs and
value grounding, on the real engine (issue 16)."""

from __future__ import annotations

import pytest

from cypherturn.agent import (
    GROUNDING_CHECKS,
    ActionExecutor,
    ActionStep,
    AgentGrounding,
    TurnContext,
)
from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.grounding import PreviousResult
from cypherturn.records import Action

ALL = AgentGrounding(check=True, repair=True, values=True)
# the arrow is written the wrong way and `!=` is SQL: the engine runs neither as meant
WRONG = "MATCH (g:Guild)-[:MEMBER_OF]->(h:Hero) WHERE g.name != 'Iron Circle' RETURN h.name AS name"
RIGHT = "MATCH (g:Guild)<-[:MEMBER_OF]-(h:Hero) WHERE g.name <> 'Iron Circle' RETURN h.name AS name"
LOWER = "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild {name: 'iron circle'}) RETURN count(h) AS n"


def test_without_grounding_the_query_runs_as_written(heroes: GraphEngine) -> None:
    executor = ActionExecutor(heroes)
    for grounding in (None, AgentGrounding()):
        obs = executor.execute_cypher(WRONG, grounding)
        assert (obs.query, obs.repairs, obs.findings) == (None, [], [])
        assert "repaired" not in obs.text and "found:" not in obs.text
    assert executor.submit_answer(WRONG).text == "Submitted."


def test_repairs_run_the_repaired_query_and_say_so(heroes: GraphEngine) -> None:
    plain = ActionExecutor(heroes).execute_cypher(WRONG)
    assert not plain.rows  # the paper's agent gets an error or nothing here
    obs = ActionExecutor(heroes).execute_cypher(WRONG, ALL)
    assert obs.ok and obs.rows == 2 and obs.query == RIGHT
    assert {f.code for f in obs.repairs} == {"reversed_direction", "sql_habit"}
    assert obs.findings == []
    rows, notes = obs.text.split("\nThe harness repaired your query before running it:\n")
    assert rows.splitlines()[0] == "name" and rows.endswith("(2 rows)")
    assert f"The query that ran: {RIGHT}" in notes
    assert "'<>'" in notes


def test_check_alone_reports_without_changing_the_query(heroes: GraphEngine) -> None:
    obs = ActionExecutor(heroes).execute_cypher(WRONG, AgentGrounding(check=True))
    assert obs.query is None and obs.repairs == []
    assert {f.code for f in obs.findings} >= {"reversed_direction", "sql_habit"}
    listed = obs.text.split("stored values found:\n", 1)[1].splitlines()
    assert listed == [f"- {f.message}" for f in obs.findings]


def test_an_empty_result_gets_the_value_check_and_a_unique_stored_value(
    heroes: GraphEngine,
) -> None:
    found = ActionExecutor(heroes).execute_cypher(LOWER, AgentGrounding(values=True))
    assert found.query is None and found.text.startswith("n\n0\n")
    (finding,) = found.findings
    assert finding.code == "value_not_found" and "'Iron Circle'" in finding.message
    fixed = ActionExecutor(heroes).execute_cypher(LOWER, AgentGrounding(repair=True, values=True))
    assert fixed.query == LOWER.replace("'iron circle'", "'Iron Circle'")
    assert fixed.text.startswith("n\n27\n") and fixed.findings == []
    assert [f.code for f in fixed.repairs] == ["value_not_found"]


def test_a_submission_is_repaired_and_value_checked(heroes: GraphEngine) -> None:
    executor = ActionExecutor(heroes)
    repaired = executor.submit_answer(WRONG, AgentGrounding(repair=True))
    assert repaired.query == RIGHT and repaired.text.startswith("Submitted.\n")
    assert f"The query submitted: {RIGHT}" in repaired.text
    checked = executor.submit_answer(LOWER, AgentGrounding(values=True))
    assert checked.query is None and [f.code for f in checked.findings] == ["value_not_found"]


def test_an_engine_error_gets_the_hint_with_check(heroes: GraphEngine) -> None:
    query = "MATCH (h:Hero) RETURN h.name RETURN h.power"
    plain = ActionExecutor(heroes).execute_cypher(query)
    obs = ActionExecutor(heroes).execute_cypher(query, AgentGrounding(check=True))
    assert not obs.ok and obs.text.startswith(plain.text + "\n")
    assert "Hint: a query has one RETURN, at its end" in obs.text
    assert "Hint:" not in plain.text


def test_parts_are_read_from_a_list(heroes: GraphEngine) -> None:
    assert AgentGrounding.parse("check, values") == AgentGrounding(check=True, values=True)
    everything = AgentGrounding.parse("all")
    assert everything.enabled() == list(GROUNDING_CHECKS)
    assert AgentGrounding.parse("none") == AgentGrounding()
    assert AgentGrounding.parse("") == AgentGrounding() and not AgentGrounding().active
    assert ALL.enabled() == ["check", "repair", "values"]
    assert AgentGrounding(reference=True).active
    with pytest.raises(ConfigError, match="unknown grounding part 'grammar'"):
        AgentGrounding.parse("check,grammar")


def test_step_records_written_before_the_grounding_fields_still_read() -> None:
    old = '{"turn": 1, "step": 1, "action": "execute_cypher", "payload": "MATCH (n) RETURN n"}'
    step = ActionStep.model_validate_json(old)
    assert step.action is Action.EXECUTE_CYPHER
    assert (step.original_payload, step.grounding_repairs, step.grounding_findings) == (
        None,
        [],
        [],
    )


def test_parts_added_later_stay_out_of_the_recorded_settings() -> None:
    # a run recorded with check, repair and values keeps its configuration digest
    assert ALL.model_dump() == {"check": True, "repair": True, "values": True}
    both = AgentGrounding(question=True, reference=True)
    assert both.model_dump()["question"] is True and both.model_dump()["reference"] is True
    assert AgentGrounding.model_validate(both.model_dump()) == both


def test_the_question_and_reference_parts_read_the_turn_context(heroes: GraphEngine) -> None:
    query = "MATCH (h:Hero) RETURN count(h) AS count"
    guilds = PreviousResult(label="Guild", names=["Iron Circle"])
    context = TurnContext(question="Which heroes are there?", previous=guilds)
    executor = ActionExecutor(heroes)
    # without a context, or with the parts off, the count runs as written
    assert executor.submit_answer(query, AgentGrounding(question=True)).query is None
    assert executor.submit_answer(query, ALL, context).query is None
    listed = executor.execute_cypher(query, AgentGrounding(repair=True, question=True), context)
    assert (
        listed.query == "MATCH (h:Hero) RETURN DISTINCT h.name"
    )  # no alias the question never named
    assert [f.code for f in listed.repairs] == ["answer_shape"] and listed.rows and listed.rows > 1
    members = "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) RETURN DISTINCT h.name AS name"
    asked = TurnContext(question="Which heroes are members of those guilds?", previous=guilds)
    bound = executor.submit_answer(members, AgentGrounding(repair=True, reference=True), asked)
    assert bound.query == members.replace(
        "(g:Guild) RETURN", "(g:Guild) WHERE g.name IN ['Iron Circle'] RETURN"
    )
    assert [f.code for f in bound.repairs] == ["unbound_reference"]
    flagged = executor.submit_answer(members, AgentGrounding(reference=True), asked)
    assert flagged.query is None and [f.code for f in flagged.findings] == ["unbound_reference"]


def test_a_long_repair_is_shown_once_in_the_observation(heroes: GraphEngine) -> None:
    # the agentic history keeps every note: a bound list of names is quoted only in the query
    names = ["Iron Circle", *(f"Guild {i}" for i in range(29))]
    context = TurnContext(
        question="Which heroes are members of those guilds?",
        previous=PreviousResult(label="Guild", names=names),
    )
    members = "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) RETURN DISTINCT h.name AS name"
    obs = ActionExecutor(heroes).execute_cypher(
        members, AgentGrounding(repair=True, reference=True), context
    )
    assert obs.query is not None and "'Guild 28'" in obs.query
    assert obs.text.count("'Guild 28'") == 1
    assert "restrict g to those names" in obs.text
