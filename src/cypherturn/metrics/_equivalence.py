"""Result-set equivalence for EX (strict) and relaxed EX.

The rules are written down, with their reasons, in docs/design/ex-equivalence.md:

* values: type-aware; ``int`` and ``float`` are equal when numerically equal
  (floats within a relative tolerance, default 1e-6); ``bool`` is never a number;
  strings exact; lists element-wise and order-sensitive; maps by key; nodes and
  relationships by id, labels/type, endpoints and properties; paths element-wise;
  temporal objects as their ISO-8601 strings; ``NULL`` equals ``NULL`` only.
* rows: compared as multisets, unless the gold query's final RETURN has ORDER BY
  (decided by :func:`cypherturn.cypher.output_order`), in which case they are
  compared in order, block by block over ties of the ORDER BY keys.
* strict EX also needs the same column names in the same order (CypherTurn
  §Limitations); relaxed EX ignores names and searches column permutations, and
  compares as multisets the lists of the gold columns whose ``collect()`` order is
  undefined (:func:`unordered_list_columns`), as CypherBench's EX compares every
  list unordered (``to_hashable(unorder_list=True)`` in megagonlabs/cypherbench,
  ``cypherbench/metrics/execution_accuracy.py``).
* the subset variant (``ex_subset``) also accepts predicted results with extra
  columns: gold columns ⊆ predicted columns, under the relaxed rules.

Multiset comparison first matches rows by a hashable canonical key (floats rounded
to 12 significant digits), then pairs the leftovers under the tolerance with a
maximum bipartite matching (scipy), so that the tolerance is applied exactly.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from cypherturn.cypher import Projection, parse_query
from cypherturn.errors import CypherTurnError

__all__ = [
    "Tolerance",
    "canonical",
    "columns_permutation",
    "rows_equal",
    "sort_lists",
    "unordered_list_columns",
    "values_equal",
]

_LEFTOVER_LIMIT = 2_000
"""Rows left unmatched by canonical keys beyond which the tolerance pass is skipped."""


@dataclass(frozen=True, slots=True)
class Tolerance:
    """Numeric tolerance for float comparison: ``|a-b| <= max(rel * max(|a|,|b|), abs)``."""

    rel: float = 1e-6
    abs: float = 1e-12


DEFAULT_TOLERANCE = Tolerance()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _canonical_number(value: int | float) -> Hashable:
    if isinstance(value, int):
        return ("n", value)
    if math.isnan(value):
        return ("nan",)
    if math.isinf(value) or (value.is_integer() and abs(value) < 2**63):
        return ("n", int(value) if not math.isinf(value) else value)
    return ("n", float(f"{value:.12g}"))


def _temporal(value: Any) -> str | None:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return None


def canonical(value: Any) -> Hashable:
    """A hashable, type-tagged key; equal keys imply equal values under :func:`values_equal`.

    Args:
        value: a plain result value (see :class:`cypherturn.graph.QueryResult`).

    Returns:
        A nested tuple; numbers are tagged alike so ``3`` and ``3.0`` share a key,
        floats are rounded to 12 significant digits.
    """
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("b", value)
    if _is_number(value):
        return _canonical_number(value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list | tuple):
        return ("l", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        kind = value.get("_kind")
        if kind == "node":
            return (
                "node",
                value.get("id"),
                tuple(sorted(value.get("labels", []))),
                canonical(value.get("properties", {})),
            )
        if kind == "relationship":
            return (
                "rel",
                value.get("id"),
                value.get("type"),
                value.get("start"),
                value.get("end"),
                canonical(value.get("properties", {})),
            )
        if kind == "path":
            return (
                "path",
                canonical(value.get("nodes", [])),
                canonical(value.get("relationships", [])),
            )
        return ("m", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    temporal = _temporal(value)
    if temporal is not None:
        return ("s", temporal)
    return ("o", repr(value))


def values_equal(a: Any, b: Any, tol: Tolerance = DEFAULT_TOLERANCE) -> bool:
    """Type-aware equality of two result values under the EX rules.

    Args:
        a: a value from one result.
        b: a value from the other.
        tol: float tolerance.

    Returns:
        True when the values are equal as documented in docs/design/ex-equivalence.md.
    """
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        if math.isinf(fa) or math.isinf(fb):
            return fa == fb
        return abs(fa - fb) <= max(tol.rel * max(abs(fa), abs(fb)), tol.abs)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(values_equal(x, y, tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if a.get("_kind") != b.get("_kind"):
            return False
        if a.keys() != b.keys():
            return False
        if a.get("_kind") == "node":
            return (
                a.get("id") == b.get("id")
                and sorted(a.get("labels", [])) == sorted(b.get("labels", []))
                and values_equal(a.get("properties", {}), b.get("properties", {}), tol)
            )
        return all(values_equal(a[k], b[k], tol) for k in a)
    ta, tb = _temporal(a), _temporal(b)
    if ta is not None or tb is not None:
        return (ta if ta is not None else a) == (tb if tb is not None else b)
    return bool(a == b)


def _row_equal(a: Sequence[Any], b: Sequence[Any], tol: Tolerance) -> bool:
    return len(a) == len(b) and all(values_equal(x, y, tol) for x, y in zip(a, b, strict=True))


def _take(
    rows: Sequence[Sequence[Any]], keys: list[tuple[Hashable, ...]], wanted: Counter[Any]
) -> list[Sequence[Any]]:
    """The rows whose keys are still wanted, consuming ``wanted`` as it goes."""
    taken = []
    for row, key in zip(rows, keys, strict=True):
        if wanted[key] > 0:
            wanted[key] -= 1
            taken.append(row)
    return taken


def _multiset_equal(
    gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], tol: Tolerance
) -> bool:
    if len(gold) != len(pred):
        return False
    gold_keys = [tuple(canonical(v) for v in row) for row in gold]
    pred_keys = [tuple(canonical(v) for v in row) for row in pred]
    remaining = Counter(gold_keys)
    remaining.subtract(pred_keys)
    if not any(remaining.values()):
        return True
    # Keys that differ only within the tolerance end up here: pair them exactly.
    surplus = Counter({k: c for k, c in remaining.items() if c > 0})
    deficit = Counter({k: -c for k, c in remaining.items() if c < 0})
    left = _take(gold, gold_keys, surplus)
    right = _take(pred, pred_keys, deficit)
    if len(left) != len(right) or len(left) > _LEFTOVER_LIMIT:
        return False
    edges_i, edges_j = [], []
    for i, row in enumerate(left):
        for j, other in enumerate(right):
            if _row_equal(row, other, tol):
                edges_i.append(i)
                edges_j.append(j)
    if len(set(edges_i)) < len(left):
        return False
    graph = csr_matrix(
        (np.ones(len(edges_i), dtype=np.int8), (edges_i, edges_j)), shape=(len(left), len(right))
    )
    matching = maximum_bipartite_matching(graph, perm_type="column")
    return bool(np.all(matching >= 0))


def _tie_blocks(gold: Sequence[Sequence[Any]], key_columns: Sequence[int]) -> list[tuple[int, int]]:
    blocks: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(gold) + 1):
        if i == len(gold) or not all(values_equal(gold[i][c], gold[start][c]) for c in key_columns):
            blocks.append((start, i))
            start = i
    return blocks


def rows_equal(
    gold: Sequence[Sequence[Any]],
    pred: Sequence[Sequence[Any]],
    *,
    ordered: bool = False,
    key_columns: Sequence[int] | None = None,
    tol: Tolerance = DEFAULT_TOLERANCE,
) -> bool:
    """Compare two row lists (already aligned column by column) under the EX rules.

    Args:
        gold: gold rows.
        pred: predicted rows, same column order as ``gold``.
        ordered: compare in order (the gold's final RETURN has ORDER BY).
        key_columns: when ordered, the gold columns holding the ORDER BY keys;
            rows with equal keys form a block compared as a multiset. ``None``
            compares strictly row by row.
        tol: float tolerance.

    Returns:
        True when the row lists are equal.
    """
    if len(gold) != len(pred):
        return False
    if not ordered:
        return _multiset_equal(gold, pred, tol)
    if key_columns is None:
        return all(_row_equal(g, p, tol) for g, p in zip(gold, pred, strict=True))
    return all(
        _multiset_equal(gold[a:b], pred[a:b], tol) for a, b in _tie_blocks(gold, key_columns)
    )


def _sort_key(value: Any) -> str:
    return repr(canonical(value))


def sort_lists(value: Any) -> Any:
    """``value`` with a top-level list sorted by canonical key (other values unchanged).

    Used where a list's element order is undefined (``collect()`` over unordered
    input): two such lists are equal iff their sorted forms are, up to floats
    within the tolerance that round to different canonical keys.
    """
    if isinstance(value, list | tuple):
        return sorted(value, key=_sort_key)
    return value


def _unorder(rows: Sequence[Sequence[Any]], columns: frozenset[int]) -> Sequence[Sequence[Any]]:
    if not columns:
        return rows
    return [[sort_lists(v) if j in columns else v for j, v in enumerate(row)] for row in rows]


def columns_permutation(
    gold: Sequence[Sequence[Any]],
    pred: Sequence[Sequence[Any]],
    width: int,
    *,
    ordered: bool = False,
    key_columns: Sequence[int] | None = None,
    tol: Tolerance = DEFAULT_TOLERANCE,
    max_candidates: int = 40_320,
    pred_width: int | None = None,
    unordered_columns: frozenset[int] = frozenset(),
) -> tuple[int, ...] | None:
    """Find a column assignment under which the predicted rows equal the gold rows.

    The search is deterministic: for each gold column, the candidate predicted
    columns are those holding the same multiset of values, within each block of
    rows that tie on the ORDER BY keys when ordered (a column need not hold the
    same sequence: rows of a tie block may come in any order), and the same
    sequence when ordered without known key columns; candidates are tried
    identity first, then in index order, depth first, and each complete
    assignment is checked on whole rows. At most ``max_candidates`` complete
    assignments are checked.

    Args:
        gold: gold rows, ``width`` values each.
        pred: predicted rows, ``pred_width`` values each.
        width: number of gold columns.
        ordered: rows are compared in order (see :func:`rows_equal`).
        key_columns: gold ORDER BY key columns (see :func:`rows_equal`).
        tol: float tolerance.
        max_candidates: cap on complete assignments checked.
        pred_width: number of predicted columns (default ``width``); when larger,
            the assignment picks ``width`` of them (gold columns ⊆ predicted columns).
        unordered_columns: gold columns whose list values compare as multisets.

    Returns:
        ``perm`` with ``pred`` column ``perm[j]`` playing gold column ``j``, or ``None``.
    """
    pred_width = width if pred_width is None else pred_width
    if len(gold) != len(pred) or pred_width < width:
        return None
    gold = _unorder(gold, unordered_columns)
    gold_cols = [[row[j] for row in gold] for j in range(width)]
    pred_cols = [[row[k] for row in pred] for k in range(pred_width)]
    sorted_cols = [[sort_lists(v) for v in col] for col in pred_cols]
    blocks = (
        _tie_blocks(gold, key_columns) if ordered and key_columns is not None else [(0, len(gold))]
    )

    def column(j: int, k: int) -> list[Any]:
        return sorted_cols[k] if j in unordered_columns else pred_cols[k]

    def column_match(j: int, k: int) -> bool:
        values = column(j, k)
        if ordered and key_columns is None:
            return all(values_equal(a, b, tol) for a, b in zip(gold_cols[j], values, strict=True))
        return all(
            _multiset_equal([[v] for v in gold_cols[j][a:b]], [[v] for v in values[a:b]], tol)
            for a, b in blocks
        )

    candidates: list[list[int]] = []
    for j in range(width):
        options = [k for k in range(pred_width) if column_match(j, k)]
        if not options:
            return None
        options.sort(key=lambda k: (k != j, k))
        candidates.append(options)

    def accept(assignment: list[int]) -> bool:
        permuted = [[column(j, k)[i] for j, k in enumerate(assignment)] for i in range(len(pred))]
        return rows_equal(gold, permuted, ordered=ordered, key_columns=key_columns, tol=tol)

    return _first_assignment(candidates, pred_width, accept, max_candidates)


def _first_assignment(
    candidates: list[list[int]],
    pred_width: int,
    accept: Callable[[list[int]], bool],
    max_candidates: int,
) -> tuple[int, ...] | None:
    """The first complete assignment ``accept`` takes, searched depth first.

    Gold columns with the fewest candidates are assigned first, each trying its
    candidates in their order; no predicted column plays two gold columns.

    Args:
        candidates: per gold column, the predicted columns that may play it.
        pred_width: number of predicted columns.
        accept: checks a complete assignment (``assignment[j]`` plays gold column ``j``).
        max_candidates: cap on complete assignments checked.

    Returns:
        The accepted assignment, or ``None`` (none, or the cap was reached).
    """
    width = len(candidates)
    order = sorted(range(width), key=lambda j: len(candidates[j]))
    assignment = [-1] * width
    used = [False] * pred_width
    checked = 0

    def search(depth: int) -> bool:
        nonlocal checked
        if depth == width:
            checked += 1
            return accept(assignment)
        j = order[depth]
        for k in candidates[j]:
            if used[k]:
                continue
            used[k], assignment[j] = True, k
            if search(depth + 1):
                return True
            used[k] = False
            if checked >= max_candidates:
                return False
        return False

    return tuple(assignment) if search(0) else None


_COLLECT = re.compile(r"\bcollect\s*\(", re.IGNORECASE)


def _mentions(expression: str, names: set[str]) -> bool:
    return any(re.search(rf"(?<![.\w]){re.escape(n)}(?!\w)", expression) for n in names)


def _unordered_in(projection: Projection, unordered: set[str], ordered_input: bool) -> list[bool]:
    return [
        (not ordered_input and _COLLECT.search(item.expression) is not None)
        or _mentions(item.expression, unordered)
        for item in projection.items
    ]


def unordered_list_columns(query: str) -> frozenset[int]:
    """Output columns of ``query`` that hold lists whose element order is undefined.

    A ``collect()`` lists its input rows in the order they arrive, which Cypher
    defines only when the clause just before the aggregating projection is a WITH
    with ORDER BY. A column is flagged when its RETURN expression calls
    ``collect()`` over unordered input, or reads a variable an earlier WITH bound
    to such a list (``WITH collect(x) AS xs ... RETURN xs``, ``size(xs)`` too: a
    flag on a non-list value changes nothing). In a UNION, a column is flagged
    when any branch flags it. ``RETURN *`` columns are not flagged (their order
    is not known from the text).

    Args:
        query: Cypher text (the gold query).

    Returns:
        The 0-based indices of the flagged RETURN columns; empty when the query
        cannot be parsed.
    """
    try:
        parsed = parse_query(query)
    except (CypherTurnError, ValueError):
        return frozenset()
    flagged: set[int] = set()
    for part in parsed.parts:
        unordered: set[str] = set()
        previous_ordered = False
        for clause in part.clauses:
            if not isinstance(clause, Projection):
                previous_ordered = False
                continue
            marks = _unordered_in(clause, unordered, previous_ordered)
            if clause.kind == "RETURN":
                if not clause.star:
                    flagged.update(j for j, mark in enumerate(marks) if mark)
                continue
            kept = {n for n in unordered if clause.star}
            for item, mark in zip(clause.items, marks, strict=True):
                name = item.output_name
                if name is not None and mark:
                    kept.add(name)
                elif name is not None:
                    kept.discard(name)
            unordered = kept
            previous_ordered = bool(clause.order_by)
    return frozenset(flagged)
