"""Provenance rewrite for PSJS and the output-order rule for EX.

PSJS (provenance subgraph Jaccard similarity, CypherBench §4) compares the sets of
nodes and relationships that two queries' MATCH patterns bind. The rewrite here
makes one query return both its own result and that set, so a single execution
serves EX and PSJS (docs/design/psjs-rewrite.md):

* every node and relationship pattern of every MATCH that has no variable gets a
  fresh one (``(:City)`` -> ``(__psjs_n0:City)``, ``-->`` -> ``-[__psjs_r1]->``);
  paths are *not* named;
* every WITH and the final RETURN of each UNION branch gets one extra item that
  carries the ids bound so far: a nested list of the previous carrier and the
  ids of the elements bound since the previous projection — ``id(n)`` for a
  node, ``-1 - id(r)`` for a relationship. A variable-length relationship
  contributes nothing (its end nodes are node patterns and do count): reading
  its path makes FalkorDB traverse it differently and return other rows than
  the unrewritten query (docs/design/psjs-rewrite.md, "Variable-length"). In a
  projection that aggregates or is DISTINCT the extra item is wrapped in
  ``collect(...)`` so that the grouping keys, and hence the rows, stay exactly
  those of the original query;
* nothing else is touched: the original items, aliases, ORDER BY, SKIP and LIMIT
  keep their text, so the result columns keep their names.

Relationship ids are encoded as ``-1 - id`` so that nodes and relationships share
one integer set without colliding. The full rules and the constructs the rewrite
refuses are in docs/design/psjs-rewrite.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cypherturn.cypher._parse import (
    MatchClause,
    OtherClause,
    ParsedQuery,
    PatternElement,
    Projection,
    SingleQuery,
    parse_query,
)
from cypherturn.errors import CypherParseError

__all__ = [
    "PROVENANCE_COLUMN",
    "PROVENANCE_PREFIX",
    "OutputOrder",
    "ProvenanceRewrite",
    "decode_provenance",
    "output_order",
    "rewrite_for_provenance",
]

PROVENANCE_PREFIX = "__psjs_"
"""Reserved prefix of every name the rewrite introduces; a query using it is refused."""

PROVENANCE_COLUMN = f"{PROVENANCE_PREFIX}prov"
"""Name of the result column that carries the provenance ids."""


@dataclass(frozen=True, slots=True)
class ProvenanceRewrite:
    """A query rewritten to also return its provenance.

    Attributes:
        original: the query as given.
        query: the rewritten query; its result has the original columns plus
            helper columns whose names start with :data:`PROVENANCE_PREFIX`.
        column: the column holding the provenance (:data:`PROVENANCE_COLUMN`).
    """

    original: str
    query: str
    column: str = PROVENANCE_COLUMN


@dataclass(frozen=True, slots=True)
class OutputOrder:
    """Whether a query's output rows are ordered, and by which output columns.

    Attributes:
        ordered: the query is not a UNION and its final RETURN has ORDER BY.
        key_columns: indices of the RETURN columns that hold the ORDER BY keys,
            in key order, when every key is a projected column; ``None`` when a
            key is not projected (rows are then compared strictly in order).
    """

    ordered: bool
    key_columns: tuple[int, ...] | None = None


def output_order(query: str | ParsedQuery) -> OutputOrder:
    """Decide from the parsed query whether its result rows are ordered.

    The rule (docs/design/ex-equivalence.md): rows are ordered iff the query is a
    single branch whose final clause is a RETURN with ORDER BY. An ORDER BY in an
    earlier WITH, or inside one UNION branch, does not order the output.

    Args:
        query: Cypher text or an already parsed query.

    Returns:
        The :class:`OutputOrder`.

    Raises:
        CypherParseError: the text does not parse.
    """
    parsed = parse_query(query) if isinstance(query, str) else query
    if parsed.is_union:
        return OutputOrder(False)
    final = parsed.parts[0].final_projection
    if final is None or not final.order_by:
        return OutputOrder(False)
    if final.star:
        return OutputOrder(True, None)
    columns: list[int] = []
    for key in final.order_by:
        index = next(
            (
                k
                for k, item in enumerate(final.items)
                if key.normalized in (item.normalized, item.alias)
            ),
            None,
        )
        if index is None:
            return OutputOrder(True, None)
        columns.append(index)
    return OutputOrder(True, tuple(columns))


def _element_ids(variable: str, element: PatternElement) -> list[str]:
    if element.kind == "node":
        return [f"id({variable})"]
    return [] if element.var_length else [f"-1 - id({variable})"]


def _carrier_expression(carrier: str | None, bound: list[str]) -> str:
    return "[" + ", ".join(([carrier] if carrier else []) + bound) + "]"


def _name_element(element: PatternElement, name: str, edits: list[tuple[int, int, str]]) -> None:
    if element.insert_at is not None:
        edits.append((element.insert_at, element.insert_at, name))
        return
    text = ("<-" if element.left else "-") + f"[{name}]" + ("->" if element.right else "-")
    edits.append((element.start, element.end, text))


def _check_distinct_order(projection: Projection) -> None:
    """Refuse a DISTINCT projection whose ORDER BY reads a variable it does not project.

    FalkorDB accepts ``RETURN DISTINCT a.x ORDER BY a.y`` but not once an
    aggregate is added, so the rewrite would fail where the original runs.
    """
    visible = projection.output_names
    for key in projection.order_by:
        if any(item.normalized == key.normalized for item in projection.items):
            continue
        if not all(ref in visible for ref in key.references):
            raise CypherParseError(
                f"ORDER BY {key.expression!r} of a DISTINCT {projection.kind} reads a variable "
                "it does not project; the provenance rewrite would change its scope"
            )


def _rewrite_branch(
    branch: SingleQuery, edits: list[tuple[int, int, str]], counter: list[int]
) -> None:
    carrier: str | None = None
    pending: list[str] = []
    final = branch.final_projection
    if final is None:
        raise CypherParseError("the query (or a UNION branch) does not end with RETURN")
    for clause in branch.clauses:
        if isinstance(clause, MatchClause):
            for part in clause.parts:
                for element in part.elements:
                    if element.kind == "relationship" and element.var_length:
                        continue
                    name = element.variable
                    if name is None:
                        name = f"{PROVENANCE_PREFIX}{element.kind[0]}{counter[0]}"
                        counter[0] += 1
                        _name_element(element, name, edits)
                    else:
                        name = _quote_name(name)
                    pending += _element_ids(name, element)
        elif isinstance(clause, Projection):
            if clause.distinct and clause.star:
                raise CypherParseError(f"{clause.kind} DISTINCT * is not supported by the rewrite")
            if clause.distinct:
                _check_distinct_order(clause)
            expression = _carrier_expression(carrier, pending)
            if clause.distinct or clause.aggregating:
                expression = f"collect({expression})"
            if clause is final:
                alias = PROVENANCE_COLUMN
            else:
                alias = f"{PROVENANCE_PREFIX}p{counter[0]}"
                counter[0] += 1
            edits.append((clause.items_end, clause.items_end, f", {expression} AS {alias}"))
            carrier, pending = alias, []
        elif isinstance(clause, OtherClause):
            if clause.subquery:
                raise CypherParseError("CALL { ... } subqueries are not supported by the rewrite")
            if clause.writes:
                raise CypherParseError(
                    f"write clause {clause.keyword} is not supported by the rewrite"
                )
            if clause.keyword in ("LOAD", "USE"):
                raise CypherParseError(f"{clause.keyword} is not supported by the rewrite")


def _quote_name(name: str) -> str:
    return name if name.isidentifier() else "`" + name.replace("`", "``") + "`"


def rewrite_for_provenance(query: str | ParsedQuery) -> ProvenanceRewrite:
    """Rewrite a read query so that it also returns the ids its MATCH patterns bind.

    Args:
        query: Cypher text or an already parsed query.

    Returns:
        The :class:`ProvenanceRewrite`; run ``rewrite.query`` and read the ids
        from column ``rewrite.column`` with :func:`decode_provenance`.

    Raises:
        CypherParseError: the query does not parse, already uses the reserved
            prefix, writes, uses ``CALL { }``, ``LOAD CSV`` or ``USE``, does not end
            with RETURN, or orders a DISTINCT projection by an unprojected variable.
    """
    parsed = parse_query(query) if isinstance(query, str) else query
    if PROVENANCE_PREFIX in parsed.text:
        raise CypherParseError(f"the query already uses the reserved prefix {PROVENANCE_PREFIX!r}")
    edits: list[tuple[int, int, str]] = []
    counter = [0]
    for branch in parsed.parts:
        _rewrite_branch(branch, edits, counter)
    text = parsed.text
    for start, end, insert in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + insert + text[end:]
    return ProvenanceRewrite(parsed.text, text)


def decode_provenance(value: Any) -> set[int]:
    """Flatten a provenance cell (nested lists of ids, ``None`` for unmatched OPTIONAL MATCH).

    Args:
        value: one cell of the provenance column.

    Returns:
        The encoded ids: node ids as they are (``>= 0``), relationship ids as
        ``-1 - id`` (``< 0``).

    Raises:
        CypherParseError: the cell holds something other than ints, lists and ``None``.
    """
    out: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None:
            continue
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            out.add(item)
        elif isinstance(item, float) and item.is_integer():
            out.add(int(item))
        else:
            raise CypherParseError(f"unexpected value {item!r} in a provenance column")
    return out
