"""Execute a query once for both its result (EX) and its provenance (PSJS).

The query is rewritten by :func:`cypherturn.cypher.rewrite_for_provenance` and
the rewrite is what runs; the helper columns are split off the result, which is
then the original query's result. A query the rewrite refuses runs unchanged
(its PSJS is then missing, never 0). When the rewritten query fails, the error is
the original's unless the message shows the rewrite may have caused it; only
then is the original run as well (a *fallback*, counted apart).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from dataclasses import dataclass

from cypherturn.cypher import (
    PROVENANCE_COLUMN,
    PROVENANCE_PREFIX,
    OutputOrder,
    decode_provenance,
    output_order,
    parse_query,
    rewrite_for_provenance,
)
from cypherturn.errors import CypherParseError, QueryError
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.metrics._equivalence import canonical

__all__ = ["ExecutedQuery", "execute_with_provenance", "split_provenance"]

logger = logging.getLogger(__name__)

# FalkorDB messages a correct query can get only because of what the rewrite added:
# an aggregate added to a DISTINCT projection narrows what ORDER BY may read.
_REWRITE_SUSPECT_MESSAGES = (
    PROVENANCE_PREFIX,
    "cannot reference variables not projected",
    "aggregat",
)


@dataclass(slots=True)
class ExecutedQuery:
    """The outcome of running one query through :func:`execute_with_provenance`.

    Attributes:
        query: the query as given.
        result: its result with helper columns removed, or ``None`` when it failed.
        provenance: encoded ids bound by its MATCH patterns (nodes ``>= 0``,
            relationships ``-1 - id``), or ``None`` when not available.
        provenance_note: why the provenance is missing, when it is.
        error: the engine's error when the query failed.
        order: the query's output order, when it parsed.
        executions: engine calls spent (1, or 2 after a fallback).
        fallback: the original query was run after its rewrite failed.
    """

    query: str
    result: QueryResult | None = None
    provenance: frozenset[int] | None = None
    provenance_note: str | None = None
    error: QueryError | None = None
    order: OutputOrder | None = None
    executions: int = 0
    fallback: bool = False


def split_provenance(
    result: QueryResult, *, distinct: bool = False
) -> tuple[QueryResult, frozenset[int]]:
    """Separate the helper columns of a rewritten query's result from the original columns.

    Args:
        result: the result of a rewritten query.
        distinct: the query combines branches with UNION (not UNION ALL). Rows
            that differed only in their provenance are then merged again, first
            occurrence kept, as the engine would have merged the original rows.

    Returns:
        ``(original_result, provenance_ids)``.

    Raises:
        CypherParseError: the provenance column is missing or holds something
            other than nested lists of ids.
    """
    if PROVENANCE_COLUMN not in result.columns:
        raise CypherParseError(f"the result has no {PROVENANCE_COLUMN} column")
    keep = [i for i, name in enumerate(result.columns) if not name.startswith(PROVENANCE_PREFIX)]
    prov_index = result.columns.index(PROVENANCE_COLUMN)
    ids: set[int] = set()
    for row in result.rows:
        ids |= decode_provenance(row[prov_index])
    rows = [[row[i] for i in keep] for row in result.rows]
    if distinct:
        seen: set[Hashable] = set()
        unique = []
        for row in rows:
            key = tuple(canonical(v) for v in row)
            if key not in seen:
                seen.add(key)
                unique.append(row)
        rows = unique
    stripped = QueryResult(
        columns=[result.columns[i] for i in keep],
        rows=rows,
        truncated=result.truncated,
        elapsed_ms=result.elapsed_ms,
    )
    return stripped, frozenset(ids)


def _suspect(error: QueryError) -> bool:
    message = error.engine_message.lower()
    return any(marker.lower() in message for marker in _REWRITE_SUSPECT_MESSAGES)


def execute_with_provenance(
    engine: GraphEngine,
    query: str,
    *,
    timeout_s: float | None = None,
    row_cap: int | None = None,
    verify_failed_rewrites: bool = False,
) -> ExecutedQuery:
    """Run ``query`` read-only, once, obtaining its result and its provenance ids.

    Args:
        engine: the graph engine (its ``execute`` is read-only, capped and timed).
        query: the Cypher text.
        timeout_s: per-query timeout, seconds (``None``: the engine's default).
        row_cap: rows kept (``None``: the engine's default).
        verify_failed_rewrites: re-run the original after *any* rewrite failure,
            not only after one the rewrite may have caused (audits; costs executions).

    Returns:
        The :class:`ExecutedQuery`. Engine refusals are captured in ``error``.

    Raises:
        EngineConnectionError: the engine is unreachable (not a query failure).
    """
    out = ExecutedQuery(query)
    try:
        parsed = parse_query(query)
        out.order = output_order(parsed)
        rewrite = rewrite_for_provenance(parsed)
    except CypherParseError as exc:
        out.provenance_note = f"not rewritten: {exc}"
        return _run_original(engine, out, timeout_s, row_cap)
    out.executions += 1
    try:
        raw = engine.execute(rewrite.query, timeout_s=timeout_s, row_cap=row_cap)
    except QueryError as exc:
        if verify_failed_rewrites or _suspect(exc):
            logger.info("provenance rewrite failed (%s); running the original", exc.engine_message)
            out.fallback = True
            out.provenance_note = f"rewrite failed: {exc.engine_message}"
            return _run_original(engine, out, timeout_s, row_cap)
        out.error = exc
        return out
    try:
        distinct = parsed.is_union and not all(parsed.union_all)
        out.result, out.provenance = split_provenance(raw, distinct=distinct)
    except CypherParseError as exc:
        logger.warning("unreadable provenance for %r: %s", query, exc)
        out.fallback = True
        out.provenance_note = f"unreadable provenance: {exc}"
        return _run_original(engine, out, timeout_s, row_cap)
    return out


def _run_original(
    engine: GraphEngine, out: ExecutedQuery, timeout_s: float | None, row_cap: int | None
) -> ExecutedQuery:
    out.executions += 1
    try:
        out.result = engine.execute(out.query, timeout_s=timeout_s, row_cap=row_cap)
    except QueryError as exc:
        out.error = exc
    return out
