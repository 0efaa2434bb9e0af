"""Gold labels of the ask benchmark: faithful repairs from a case file, every label on the real engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from cypherturn.experiments import (
    AskItem,
    answer_digest,
    check_golds,
    property_types,
    reason_counts,
    repair_gold,
)
from cypherturn.graph import GraphEngine
from cypherturn.records import GoldReason, GoldStatus

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "gold_repairs.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_repair_case(case: dict[str, Any]) -> None:
    repair = repair_gold(case["gold"], case["types"])
    assert repair.query == case["query"]
    assert [r.value for r in repair.reasons] == case["reasons"]
    assert len(repair.hazards) == case.get("hazards", 0)


@pytest.fixture
def calls(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """Phone calls whose dates and durations are typed, as our POLE loader types them."""
    engine = make_engine("calls")
    engine.write(
        "CREATE (a:Phone {no: 'A'}), (b:Phone {no: 'B'}), (c:Phone {no: 'C'}),"
        " (:Call {day: date('2017-08-01'), seconds: 57, kind: 'SMS'})-[:CALLED]->(a),"
        " (:Call {day: date('2017-08-01'), seconds: 12, kind: 'CALL'})-[:CALLED]->(b),"
        " (:Call {day: date('2017-08-02'), seconds: 12, kind: 'CALL'})-[:CALLED]->(c)"
    )
    return engine


def item(id_: str, gold: str, graph: str, **extra: Any) -> AskItem:
    return AskItem(id=id_, graph=graph, question=f"question {id_}", gold=gold, **extra)


def test_schema_types_keys_of_one_type(calls: GraphEngine) -> None:
    types = property_types(calls.schema())
    assert types["day"] == "DATE" and types["seconds"] == "INTEGER" and types["kind"] == "STRING"


def test_every_label_on_the_engine(calls: GraphEngine) -> None:
    g = calls.graph
    items = [
        item("kept", "MATCH (c:Call {kind: 'CALL'}) RETURN count(c) AS n", g),
        item("repaired", "MATCH (c:Call {day: '01/08/2017'}) RETURN count(c) AS n", g),
        item("judged", "MATCH (c:Call) RETURN count(c) AS n", g, manual_logical=False),
        item("write", "MATCH (c:Call) SET c.kind = 'X' RETURN c", g),
        item("error", "MATCH (c:Call) RETURN c.kind AS k ORDER BY x", g),
        item("empty", "MATCH (c:Call {kind: 'FAX'}) RETURN c.kind AS k", g),
        item("empty-source", "MATCH (c:Call {kind: 'FAX'}) RETURN c.kind", g, manual_rows=False),
        item("nulls", "MATCH (c:Call {kind: 'FAX'}) RETURN avg(c.seconds) AS a", g),
        item("typed", "MATCH (c:Call) WHERE c.day > '15/07/2017' RETURN count(c) AS n", g),
        item("tie", "MATCH (c:Call) RETURN c.seconds AS s ORDER BY s LIMIT 1", g),
        item("limit", "MATCH (c:Call) RETURN c.kind AS k LIMIT 2", g),
        item("limit-uncut", "MATCH (c:Call {kind: 'SMS'}) RETURN c.kind AS k LIMIT 2", g),
        item("large", "MATCH (c:Call) RETURN c.kind AS k", g),
        item("again", "MATCH (c:Call {kind: 'CALL'})  RETURN count(c) AS n", g),
    ]
    items[-1] = items[-1].model_copy(update={"question": "Question  KEPT"})
    items[0] = items[0].model_copy(update={"question": "question kept"})
    checks = {
        c.question_id: c
        for c, _ in check_golds(items, {g: calls}.__getitem__, timeout_s=10, row_cap=2)
    }

    def label(qid: str) -> tuple[GoldStatus, list[GoldReason]]:
        return checks[qid].status, checks[qid].reasons

    assert label("kept") == (GoldStatus.KEPT, [])
    assert label("repaired") == (GoldStatus.REPAIRED, [GoldReason.STRING_DATE])
    assert checks["repaired"].rows == 1 and checks["repaired"].gold.count("date('2017-08-01')")
    assert label("judged") == (GoldStatus.EXCLUDED, [GoldReason.JUDGED_WRONG])
    assert label("write") == (GoldStatus.EXCLUDED, [GoldReason.WRITE])
    assert label("error") == (GoldStatus.EXCLUDED, [GoldReason.ENGINE_ERROR])
    assert label("empty") == (GoldStatus.EXCLUDED, [GoldReason.EMPTY_HERE])
    assert label("empty-source") == (GoldStatus.EXCLUDED, [GoldReason.EMPTY_ON_SOURCE])
    assert label("nulls") == (GoldStatus.EXCLUDED, [GoldReason.NULL_ONLY])
    assert label("typed")[1][0] is GoldReason.TYPED_VALUE
    assert label("tie") == (GoldStatus.EXCLUDED, [GoldReason.TIE_CUT])
    assert label("limit") == (GoldStatus.EXCLUDED, [GoldReason.LIMIT_WITHOUT_ORDER])
    assert label("limit-uncut") == (GoldStatus.KEPT, [])
    assert label("large") == (GoldStatus.EXCLUDED, [GoldReason.TOO_LARGE])
    assert label("again") == (GoldStatus.EXCLUDED, [GoldReason.DUPLICATE])
    counts = reason_counts(checks.values())
    assert counts["kept"] == 2 and counts["repaired"] == 1 and counts["excluded"] == 11


def test_only_usable_golds_come_with_their_answer(calls: GraphEngine) -> None:
    g = calls.graph
    out = check_golds(
        [
            item("ok", "MATCH (c:Call) RETURN c.kind AS k ORDER BY k", g),
            item("bad", "MATCH (c:Call) RETURN c.nope.nope.nope(", g),
        ],
        {g: calls}.__getitem__,
    )
    (ok, answer), (bad, none) = out
    assert ok.usable and answer is not None and answer.columns == ["k"]
    assert ok.digest == answer_digest(answer, ordered=True)
    assert not bad.usable and none is None and bad.rows == 0 and bad.digest == ""


def test_the_digest_ignores_row_order_unless_the_gold_orders(calls: GraphEngine) -> None:
    up = calls.execute("MATCH (c:Call) RETURN c.seconds AS s ORDER BY s")
    down = calls.execute("MATCH (c:Call) RETURN c.seconds AS s ORDER BY s DESC")
    assert answer_digest(up, ordered=False) == answer_digest(down, ordered=False)
    assert answer_digest(up, ordered=True) != answer_digest(down, ordered=True)
