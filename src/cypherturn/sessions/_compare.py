"""Comparison of a stored gold result with an executed one (import, verification)."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from cypherturn.graph import QueryResult
from cypherturn.sessions._format import GoldResult

__all__ = ["compare_results"]


def _normalize(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(f"{float(value):.9g}") if math.isfinite(float(value)) else str(value)
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in sorted(value.items())}
    return repr(value)


def _row_key(row: list[Any]) -> str:
    return json.dumps([_normalize(v) for v in row], sort_keys=True)


def compare_results(stored: GoldResult, result: QueryResult) -> str | None:
    """Why ``result`` does not reproduce ``stored``, or ``None`` when it does.

    Numbers compare by value to nine significant digits (so an integer sum read
    back as ``24.0`` reproduces ``24``); rows compare as multisets unless the
    stored result is ordered.
    """
    if not stored.rows and not result.rows:
        return None
    if stored.columns != list(result.columns) and stored.rows:
        if sorted(stored.columns) == sorted(result.columns):
            return f"column order differs: {stored.columns} vs {list(result.columns)}"
        return f"columns differ: {stored.columns} vs {list(result.columns)}"
    if len(stored.rows) != len(result.rows):
        return f"row count differs: official {len(stored.rows)}, engine {len(result.rows)}"
    mine = [_row_key(r) for r in stored.rows]
    theirs = [_row_key(r) for r in result.rows]
    if Counter(mine) != Counter(theirs):
        return "values differ"
    if stored.ordered and mine != theirs:
        return "order differs"
    return None
