"""Value and row equivalence rules of EX, on plain Python values (docs/design/ex-equivalence.md)."""

from __future__ import annotations

import datetime as dt

import pytest

from cypherturn.metrics._equivalence import (
    Tolerance,
    canonical,
    columns_permutation,
    rows_equal,
    unordered_list_columns,
    values_equal,
)

NODE = {"_kind": "node", "id": 1, "labels": ["A", "B"], "properties": {"x": 1}}


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (1, 1.0000001, True),
        (1, 1.00001, False),
        (0.0, 1e-15, True),
        (True, 1, False),
        (False, 0, False),
        (None, None, True),
        (None, 0, False),
        ("a", "a", True),
        ("a", "A", False),
        ([1, 2], [1, 2.0], True),
        ([1, 2], [2, 1], False),
        ({"a": 1, "b": [1]}, {"b": [1.0], "a": 1}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        (NODE, {**NODE, "labels": ["B", "A"]}, True),
        (NODE, {**NODE, "id": 2}, False),
        (NODE, {**NODE, "properties": {"x": 2}}, False),
        (dt.date(2020, 1, 2), "2020-01-02", True),
        (float("nan"), float("nan"), True),
        (float("inf"), float("inf"), True),
        (2**60, 2**60 + 1, False),
    ],
)
def test_values_equal(a: object, b: object, equal: bool) -> None:
    assert values_equal(a, b) is equal
    assert values_equal(b, a) is equal


def test_equal_canonical_keys_imply_equal_values() -> None:
    assert canonical(3) == canonical(3.0)
    assert canonical([1, {"k": 2.0}]) == canonical([1.0, {"k": 2}])
    assert canonical(True) != canonical(1)


def test_rows_multiset_and_duplicates() -> None:
    assert rows_equal([[1], [2], [2]], [[2], [1], [2]])
    assert not rows_equal([[1], [2], [2]], [[1], [1], [2]])
    assert not rows_equal([[1]], [[1], [1]])


def test_rows_tolerance_is_applied_exactly_after_canonical_matching() -> None:
    gold = [[1.0000001, "a"], [5.0, "b"]]
    pred = [[5.000000001, "b"], [1.0, "a"]]
    assert rows_equal(gold, pred)
    assert not rows_equal(gold, pred, tol=Tolerance(rel=1e-12, abs=0.0))


def test_ordered_rows_with_and_without_tie_blocks() -> None:
    gold = [["b", 1], ["a", 2], ["c", 2], ["d", 3]]
    swapped_tie = [["b", 1], ["c", 2], ["a", 2], ["d", 3]]
    assert not rows_equal(gold, swapped_tie, ordered=True)
    assert rows_equal(gold, swapped_tie, ordered=True, key_columns=[1])
    assert not rows_equal(gold, list(reversed(gold)), ordered=True, key_columns=[1])


def test_columns_permutation_finds_the_swap_and_handles_ambiguity() -> None:
    gold = [[1, "x"], [2, "y"]]
    pred = [["x", 1], ["y", 2]]
    assert columns_permutation(gold, pred, 2) == (1, 0)
    same_values = [[1, 2], [2, 1]]
    assert columns_permutation(same_values, [[2, 1], [1, 2]], 2) == (0, 1)
    crossed = [[1, 1], [2, 2]]
    assert columns_permutation(crossed, [[1, 2], [2, 1]], 2) is None


def test_columns_permutation_respects_the_search_cap() -> None:
    width = 6
    gold = [[0] * width, [1] * width]
    pred = [[0] * width, [1] * width]
    assert columns_permutation(gold, pred, width, max_candidates=1) == tuple(range(width))


def test_columns_permutation_with_ties_and_swapped_columns() -> None:
    # ORDER BY the second gold column; "a" and "c" tie on 2 and the prediction lists them the
    # other way round, with its columns swapped: a column need not hold the gold's sequence.
    gold = [["b", 1], ["a", 2], ["c", 2], ["d", 3]]
    pred = [[1, "b"], [2, "c"], [2, "a"], [3, "d"]]
    assert columns_permutation(gold, pred, 2, ordered=True, key_columns=[1]) == (1, 0)
    # Without key columns the rows compare strictly in order, and the swap of the tie is wrong.
    assert columns_permutation(gold, pred, 2, ordered=True) is None
    # Outside a tie block, order still matters.
    moved = [[2, "a"], [1, "b"], [2, "c"], [3, "d"]]
    assert columns_permutation(gold, moved, 2, ordered=True, key_columns=[1]) is None


def test_unordered_list_columns_compare_as_multisets() -> None:
    gold = [["x", [1, 2, 3]], ["y", ["b", "a"]]]
    pred = [[[3, 1, 2], "x"], [["a", "b"], "y"]]
    assert columns_permutation(gold, pred, 2) is None
    assert columns_permutation(gold, pred, 2, unordered_columns=frozenset({1})) == (1, 0)
    # A multiset, not a set: duplicates count.
    assert columns_permutation(
        [[[1, 1, 2]]], [[[1, 2, 2]]], 1, unordered_columns=frozenset({0})
    ) is None  # fmt: skip


def test_gold_columns_subset_of_predicted_columns() -> None:
    gold = [["Alice"], ["Bob"]]
    pred = [[30, "Bob"], [25, "Alice"]]
    assert columns_permutation(gold, pred, 1) is None
    assert columns_permutation(gold, pred, 1, pred_width=2) == (1,)
    assert columns_permutation(gold, [[30, "Bob"], [25, "Carol"]], 1, pred_width=2) is None


@pytest.mark.parametrize(
    ("query", "columns"),
    [
        ("MATCH (p:P) RETURN p.city AS c, collect(p.name) AS names", {1}),
        ("MATCH (p:P) WITH p ORDER BY p.name RETURN p.city AS c, collect(p.name) AS names", set()),
        ("MATCH (p:P) WITH p.city AS c, collect(p.name) AS ns RETURN c, ns, size(ns) AS n", {1, 2}),
        ("MATCH (p:P) WITH collect(p) AS ps UNWIND ps AS p RETURN p.name AS name", set()),
        ("MATCH (p:P) RETURN [p.a, p.b] AS pair", set()),
        ("MATCH (p:P) RETURN p.a AS a UNION MATCH (q:Q) RETURN collect(q.a) AS a", {0}),
        ("MATCH (p:P) WITH collect(p.name) AS ns WITH ns AS names RETURN names", {0}),
        ("not cypher (", set()),
    ],
)
def test_unordered_list_columns(query: str, columns: set[int]) -> None:
    assert unordered_list_columns(query) == frozenset(columns)
