"""The memory in use, on the real engine with replay models: ask, chat /remember, learn, bench ask.

A replay model records every context it was given, so the tests check what the
product guarantees: a remembered pair reaches the model as an example turn pair
after the schema examples, its own question never does in a leave-one-out run,
and the result records which remembered questions were shown.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn import api
from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel

COUNT = "MATCH (p:Person) RETURN count(p) AS people"
PER_CITY = "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN c.name AS city, count(p) AS people"
NAMES = "MATCH (p:Person) RETURN p.name AS name ORDER BY name"


@pytest.fixture
def town(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("recall")
    engine.write(
        "CREATE (a:Person {name: 'Ada'}), (b:Person {name: 'Alan'}), (c:City {name: 'London'}),"
        " (a)-[:LIVES_IN]->(c), (b)-[:LIVES_IN]->(c)"
    )
    return engine


def _shown(model: ReplayChatModel, call: int = 0) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in model.calls[call]]


def test_ask_shows_the_nearest_remembered_pairs_last_and_records_them(town: GraphEngine) -> None:
    api.remember("How many people live in each city?", PER_CITY, graph=town.graph)
    api.remember("List the names of the people", NAMES, graph=town.graph)
    api.remember("zebra quantum flux", COUNT, graph=town.graph)
    config = api.AskConfig(graph=town.graph, strategy="single", budget=1, max_seconds=None)
    model = ReplayChatModel([COUNT])
    result = api.run_ask("How many people live in London?", config, model=model)
    shown = _shown(model)
    assert shown[-1] == ("user", "How many people live in London?")
    # the nearest pair is the last example, next to the question
    assert shown[-3:-1] == [("user", "How many people live in each city?"), ("assistant", PER_CITY)]
    assert result.recalled[-1] == "How many people live in each city?"
    assert "zebra quantum flux" not in result.recalled
    assert result.success and result.final_result is not None

    quiet = ReplayChatModel([COUNT])
    silent = api.run_ask(
        "How many people live in London?", config.model_copy(update={"recall": 0}), model=quiet
    )
    assert silent.recalled == [] and "recalled" not in silent.model_dump(mode="json")
    assert all(c != PER_CITY for _, c in _shown(quiet))


def test_ras_plus_keeps_recalled_pairs_after_its_own_examples(town: GraphEngine) -> None:
    api.remember("How many people live in each city?", PER_CITY, graph=town.graph)
    config = api.AskConfig(graph=town.graph, strategy="ras+", budget=2, max_seconds=None)
    model = ReplayChatModel([COUNT])
    result = api.run_ask("How many people live in each city?", config, model=model)
    shown = _shown(model)
    assert shown[-3:-1] == [("user", "How many people live in each city?"), ("assistant", PER_CITY)]
    assert sum(role == "assistant" for role, _ in shown) > 1  # its schema examples came first
    assert result.recalled == ["How many people live in each city?"]


def test_v1_shows_no_examples_and_records_none(town: GraphEngine) -> None:
    api.remember("How many people live in each city?", PER_CITY, graph=town.graph)
    config = api.AskConfig(
        graph=town.graph, strategy="single", budget=1, prompt_version="v1", max_seconds=None
    )
    model = ReplayChatModel([COUNT])
    assert api.run_ask("How many people?", config, model=model).recalled == []
    assert len(model.calls[0]) == 1


def test_chat_remember_keeps_the_query_that_ran_for_later_turns(
    town: GraphEngine, tmp_path: Path
) -> None:
    config = api.ChatConfig(graph=town.graph, strategy="single", budget=1, answer=False)
    model = ReplayChatModel([PER_CITY, COUNT])
    with api.ChatSession(config, model=model) as chat:
        with pytest.raises(ConfigError, match="no answered question"):
            chat.remember()
        chat.ask("How many people live in each city?")
        pair = chat.remember()
        assert (pair.cypher, pair.rows, pair.source) == (PER_CITY, 1, "user")
        chat.ask("How many people live in each town?")
    assert ("assistant", PER_CITY) in _shown(model, 1)
    stored = api.graph_memory(town.graph).pairs()
    assert [(p.question, p.cypher) for p in stored] == [
        ("How many people live in each city?", PER_CITY)
    ]


def test_learn_list_and_forget_on_the_command_line(
    town: GraphEngine, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        json.dumps({"question": "How many people?", "cypher": COUNT})
        + "\n"
        + json.dumps({"question": "broken", "cypher": "MATCH (p:Person RETURN p"})
        + "\n"
    )
    code, out, _ = cli("learn", str(path), "--graph", town.graph)
    assert code == 0 and "kept 1 pair(s) (1 new)" in out and "refused 1" in out
    code, out, _ = cli("learn", "--list", "--graph", town.graph)
    assert code == 0 and "How many people?" in out
    code, out, _ = cli("learn", "--forget", "how many people", "--graph", town.graph)
    assert code == 0 and api.graph_memory(town.graph).pairs() == []
    code, _, err = cli("learn", "--forget", "how many people", "--graph", town.graph)
    assert code == 1 and "holds no question" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "x", "cypher": "CREATE (n) RETURN n"}) + "\n")
    code, out, err = cli("learn", str(bad), "--graph", town.graph)
    assert code == 1 and "kept 0" in out and "Traceback" not in out + err
    code, out, err = cli("learn", "--graph", town.graph)
    assert code == 2 and "Traceback" not in out + err
    code, out, err = cli("learn", str(tmp_path / "none.jsonl"))
    assert code == 1 and "not a file" in err and "Traceback" not in out + err


def test_bench_ask_with_a_memory_never_shows_a_question_its_own_pair(
    town: GraphEngine, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    lines = [
        {"id": "a", "question": "How many people are there?", "cypher": COUNT},
        {"id": "b", "question": "How many people live in each city?", "cypher": PER_CITY},
        {"id": "c", "question": "List the names of the people", "cypher": NAMES},
    ]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps({**x, "graph": town.graph}) + "\n" for x in lines))
    replies = tmp_path / "replay.json"
    replies.write_text(json.dumps([COUNT, PER_CITY, NAMES]))
    out = tmp_path / "run"
    args = ["bench", "ask", str(path), "--out", str(out), "--model", f"replay:{replies}"]
    args += ["--strategy", "single", "-n", "1", "--memory", str(path), "--recall", "2"]
    code, stdout, stderr = cli(*args)
    assert code == 0, stdout + stderr
    answers = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    for answer, line in zip(answers, lines, strict=True):
        recalled = answer["result"]["recalled"]
        assert recalled and line["question"] not in recalled
        assert answer["ex"] == 1
    stored = json.loads((out / "ask.json").read_text())
    assert (stored["memory"], stored["recall"]) == ("set", 2)
    # the same directory without the memory is another configuration: refused
    code, _, stderr = cli(*args[:-4])
    assert code == 1 and "memory" in stderr and "Traceback" not in stderr


def test_chat_remember_this_on_the_command_line(
    town: GraphEngine,
    tmp_path: Path,
    cli: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replies = tmp_path / "replay.json"
    replies.write_text(json.dumps([COUNT]))
    typed = "/remember\nHow many people are there?\nremember this\n/remember 9\n/quit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    code, out, err = cli(
        "chat", "--graph", town.graph, "--out", str(tmp_path / "chats"),
        "--strategy", "single", "-n", "1", "--no-answer", "--model", f"replay:{replies}",
    )  # fmt: skip
    shown = " ".join(out.split())
    assert code == 0 and "Traceback" not in out + err
    assert "no answered question to remember yet" in shown
    assert "remembered How many people are there?" in shown and "no turn 9" in shown
    assert [p.cypher for p in api.graph_memory(town.graph).pairs()] == [COUNT]
