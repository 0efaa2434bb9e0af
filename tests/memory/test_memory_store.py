"""The memory of verified questions: pairs verified on the real engine, kept on disk, recalled by BM25."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.errors import ConfigError, DatasetError, QueryError, WriteRefusedError
from cypherturn.graph import GraphEngine
from cypherturn.memory import (
    QuestionMemory,
    Recall,
    VerifiedPair,
    learn_file,
    memory_path,
    normalize_question,
    verify_pair,
)

COUNT = "MATCH (p:Person) RETURN count(p) AS people"
NAMES = "MATCH (p:Person) RETURN p.name AS name"
CITIES = "MATCH (c:City) RETURN c.name AS city"


@pytest.fixture
def town(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("memory")
    engine.write(
        "CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'}), (:City {name: 'London'})"
    )
    return engine


def _pair(question: str, cypher: str = COUNT, graph: str = "g") -> VerifiedPair:
    return VerifiedPair(question=question, cypher=cypher, graph=graph)


def test_a_pair_is_kept_only_after_its_query_ran_read_only(town: GraphEngine) -> None:
    pair = verify_pair(town, " How many people? ", COUNT, "user")
    assert (pair.question, pair.graph, pair.rows, pair.source) == (
        "How many people?",
        town.graph,
        1,
        "user",
    )
    assert pair.verified_at
    with pytest.raises(WriteRefusedError):
        verify_pair(town, "add one", "CREATE (:Person {name: 'Eve'}) RETURN 1", "user")
    with pytest.raises(QueryError):
        verify_pair(town, "broken", "MATCH (p:Person RETURN p", "user")
    with pytest.raises(ConfigError):
        verify_pair(town, "  ", COUNT, "user")
    assert town.execute(COUNT).rows == [[2]]


def test_the_same_question_replaces_its_pair_and_survives_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    memory = QuestionMemory(path)
    assert memory.pairs() == [] and len(memory) == 0
    assert memory.add([_pair("How many people?"), _pair("Which cities?", CITIES)]) == 2
    assert memory.add([_pair("how many people", NAMES)]) == 0
    pairs = QuestionMemory(path).pairs()
    assert [(p.key, p.cypher) for p in pairs] == [
        ("which cities", CITIES),
        ("how many people", NAMES),
    ]
    assert memory.forget("Which cities?") and not memory.forget("Which cities?")
    assert [p.key for p in QuestionMemory(path).pairs()] == ["how many people"]


def _add_many(path: str, start: int) -> None:
    memory = QuestionMemory(Path(path))
    for i in range(start, start + 20):
        memory.add([_pair(f"question number {i}")])


def test_two_processes_adding_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_add_many, args=(str(path), s)) for s in (0, 100)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert len(QuestionMemory(path).pairs()) == 40


def test_a_damaged_or_newer_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("not json\n")
    with pytest.raises(DatasetError, match=r"m\.jsonl:1"):
        QuestionMemory(path).pairs()
    newer = _pair("q").model_dump() | {"schema_version": 99}
    path.write_text(json.dumps(newer) + "\n")
    with pytest.raises(DatasetError, match="newer"):
        QuestionMemory(path).pairs()


def test_the_memory_file_is_per_graph_and_per_server(tmp_path: Path) -> None:
    assert memory_path("pole", home=tmp_path) == tmp_path / "memory" / "pole.jsonl"
    remote = memory_path("pole", "falkordb://db:6379", home=tmp_path)
    assert remote.parent == tmp_path / "memory" and remote != memory_path("pole", home=tmp_path)
    assert memory_path("a/../b c", home=tmp_path).parent == tmp_path / "memory"
    with pytest.raises(ConfigError):
        memory_path(" ", home=tmp_path)


def test_normalized_questions_ignore_case_spacing_and_end_punctuation() -> None:
    assert normalize_question("How  many People?") == normalize_question("how many people")


def test_recall_ranks_by_shared_words_within_the_graph_and_can_leave_one_out() -> None:
    recall = Recall(
        [
            _pair("How many people live in each city?", graph="g"),
            _pair("Which cities are there?", CITIES, graph="g"),
            _pair("How many people are there?", graph="h"),
            _pair("List every person's name", NAMES, graph="g"),
        ]
    )
    nearest = recall.nearest("how many people live in London", 3, graph="g")
    assert nearest[0][0].question == "How many people live in each city?"
    assert all(p.graph == "g" for p, _ in nearest)
    assert all(score > 0 for _, score in nearest)
    # "cities" and "city" share a stem
    assert recall.nearest("the cities", 1, graph="g")[0][0].cypher == CITIES
    left_out = recall.nearest(
        "How many people live in each city?",
        3,
        graph="g",
        exclude=lambda p: p.key == "how many people live in each city",
    )
    assert "How many people live in each city?" not in [p.question for p, _ in left_out]
    assert recall.nearest("zebra quantum", 3) == []
    assert recall.nearest("people", 0) == []
    assert Recall([]).nearest("people", 3) == []


def test_learn_keeps_what_runs_and_says_why_it_refused_the_rest(
    town: GraphEngine, tmp_path: Path
) -> None:
    lines = [
        {"question": "How many people?", "cypher": COUNT},
        {"question": "Which cities?", "query": CITIES, "graph": town.graph},
        {"question": "Names", "gold": NAMES},
        {"question": "other graph", "cypher": COUNT, "graph": "elsewhere"},
        {"question": "broken", "cypher": "MATCH (p:Person RETURN p"},
        {"question": "a write", "cypher": "MATCH (p:Person) DETACH DELETE p"},
        {"question": "no query"},
        [1, 2],
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    memory = QuestionMemory(tmp_path / "m.jsonl")
    report = learn_file(path, town, memory)
    assert (report.kept, report.new, report.skipped, report.total) == (3, 3, 1, 3)
    assert [r.split(":")[0] for r in report.refused] == [
        "line 5",
        "line 6",
        "line 7",
        "line 8",
        "line 9",
    ]
    assert town.execute(COUNT).rows == [[2]]
    assert {p.source for p in memory.pairs()} == {"file"}
    with pytest.raises(DatasetError):
        learn_file(tmp_path / "missing.jsonl", town, memory)
