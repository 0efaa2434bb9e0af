"""CypherBench's PSJS: the nodes bound by a query's leading MATCH block.

Reference: Feng et al., *CypherBench* (ACL 2025), §4 "provenance subgraph Jaccard
similarity", implemented in megagonlabs/cypherbench,
``cypherbench/metrics/provenance_subgraph_jaccard_similarity.py``
(``get_ps_cypher(..., node_element_id_only=True)`` and
``provenance_subgraph_jaccard_similarity``). Its rule, followed here:

1. Each UNION branch that starts with ``MATCH`` contributes its *leading MATCH
   block*: the clauses from the start while they are ``MATCH``, ``OPTIONAL MATCH``,
   ``WHERE``, or a ``WITH`` without any ``AS`` alias (kept as ``WITH *`` with its
   WHERE); the block ends at the first other clause (an aliased WITH, ORDER BY,
   SKIP, LIMIT, UNWIND, RETURN, ...), and a trailing WITH is dropped. A branch
   that does not start with MATCH contributes nothing.
2. The provenance is the set of **nodes** bound by every node pattern of that
   block's MATCH clauses, over all rows the block produces (before any
   aggregation, LIMIT or RETURN); relationships are not counted.
3. PSJS = size of the intersection / size of the union, **0.0 when both sets are empty**; identical query
   texts score 1.0 without running anything; a prediction whose query fails
   scores 0.0.

Deviations, each because the reference's regular expressions are not a parser:

* anonymous node patterns get a variable whether or not they have a label (the
  reference names only ``(:Label {...})``, so an unlabelled ``()`` is not counted);
* pattern predicates in WHERE are not MATCH patterns and bind nothing (the
  reference's regex would read a variable from ``WHERE (a)-->(b)``);
* node ids are FalkorDB ``id(n)`` rather than Neo4j ``elementId(n)``;
* a gold query whose block cannot be run is reported apart (``None``), never
  scored 0.0 (the reference returns 0.0 for any exception).
"""

from __future__ import annotations

from dataclasses import dataclass

from cypherturn.cypher import MatchClause, Projection, SingleQuery, parse_query
from cypherturn.errors import CypherParseError, QueryError
from cypherturn.graph import GraphEngine

__all__ = [
    "CypherBenchProvenance",
    "cypherbench_jaccard",
    "cypherbench_node_ids",
    "cypherbench_provenance_queries",
]

_IDS = "__psjs_cb_ids"
_VAR = "__psjs_cb_n"


def cypherbench_jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """CypherBench's Jaccard similarity: ``len(a & b) / len(a | b)``, 0.0 when both are empty."""
    union = len(a | b)
    return 0.0 if union == 0 else len(a & b) / union


def _branch_query(text: str, branch: SingleQuery) -> str | None:
    clauses = branch.clauses
    if not clauses or not isinstance(clauses[0], MatchClause) or clauses[0].optional:
        return None
    pieces: list[str] = []
    nodes: list[str] = []
    fresh = 0
    for clause in clauses:
        if isinstance(clause, MatchClause):
            edits: list[tuple[int, str]] = []
            for part in clause.parts:
                for element in part.elements:
                    if element.kind != "node":
                        continue
                    if element.variable is not None:
                        nodes.append(element.variable)
                    elif element.insert_at is not None:
                        name = f"{_VAR}{fresh}"
                        fresh += 1
                        edits.append((element.insert_at, name))
                        nodes.append(name)
            piece, cursor = [], clause.start
            for at, name in sorted(edits):
                piece += [text[cursor:at], name]
                cursor = at
            piece.append(text[cursor : clause.end])
            pieces.append("".join(piece))
        elif (
            isinstance(clause, Projection)
            and clause.kind == "WITH"
            and not any(item.alias is not None for item in clause.items)
            and not (clause.order_by or clause.skip or clause.limit)
        ):
            where = text[clause.items_end : clause.end].strip()
            pieces.append(f"WITH * {where}".rstrip())
        else:
            break
    while pieces and pieces[-1] == "WITH *":
        pieces.pop()
    unique = sorted(set(nodes))
    collected = " + ".join(f"collect(DISTINCT id({n}))" for n in unique) or "[]"
    return f"{' '.join(pieces)} WITH {collected} AS {_IDS} RETURN {_IDS}"


def cypherbench_provenance_queries(query: str) -> list[str]:
    """The queries whose results give CypherBench's provenance of ``query``, one per UNION branch.

    Each returns one row with one list column of node ids. Branches that do not
    start with MATCH give no query (they contribute nothing).

    Raises:
        CypherParseError: ``query`` cannot be parsed.
    """
    parsed = parse_query(query)
    found = (_branch_query(query, branch) for branch in parsed.parts)
    return [q for q in found if q is not None]


@dataclass(frozen=True, slots=True)
class CypherBenchProvenance:
    """A query's CypherBench provenance, or why it is missing.

    Attributes:
        nodes: node ids, or ``None`` when the provenance queries could not be built or run.
        note: the parse or engine error when ``nodes`` is ``None``.
        executions: engine calls spent.
    """

    nodes: frozenset[int] | None
    note: str | None = None
    executions: int = 0


def cypherbench_node_ids(
    engine: GraphEngine,
    query: str,
    *,
    timeout_s: float | None = None,
) -> CypherBenchProvenance:
    """Run the provenance queries of ``query`` and return the node-id set.

    Args:
        engine: the graph's engine.
        query: the gold or predicted Cypher.
        timeout_s: per-query timeout, seconds.

    Returns:
        The :class:`CypherBenchProvenance`; parse and query errors are captured in ``note``.

    Raises:
        EngineConnectionError: the engine is unreachable.
    """
    try:
        queries = cypherbench_provenance_queries(query)
    except CypherParseError as exc:
        return CypherBenchProvenance(None, f"cannot parse: {exc}")
    ids: set[int] = set()
    for executions, branch in enumerate(queries, start=1):
        try:
            result = engine.execute(branch, timeout_s=timeout_s)
        except QueryError as exc:
            return CypherBenchProvenance(None, str(exc), executions)
        for row in result.rows:
            ids.update(int(v) for v in row[0] or [])
    return CypherBenchProvenance(frozenset(ids), None, len(queries))
