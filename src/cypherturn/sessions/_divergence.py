"""Engine-divergence audits: golds whose answer FalkorDB and Neo4j give differently.

Each class below is a quirk of FalkorDB's dialect
(:data:`cypherturn.graph.FALKORDB_DIALECT`, which names them), demonstrated on
the build cypherturn ships (``tests/sessions/test_divergence.py`` runs every
demonstration on the real engine). A gold that falls into one is engine-dependent: the generator drops
it, the build report counts the golds of each class that were written (0),
and the importer labels an official gold that hits one.

=============================  ============================================================
class                          rule (what is flagged)
=============================  ============================================================
``parallel_edges``             a relationship pattern whose variable is anonymous or not used
                               elsewhere, where the graph joins some node pair by several
                               relationships the pattern matches (probed), and the rows reach
                               a multiplicity-sensitive clause (a non-DISTINCT RETURN, a
                               count/sum/avg/collect without DISTINCT, a SKIP/LIMIT) before any
                               DISTINCT: FalkorDB binds such a pattern once per node pair,
                               Neo4j once per relationship.
``exists_pattern``             ``exists((n)-[...]->(...))``: FalkorDB answers true for every
                               row, even on a graph without such relationships (and refuses it
                               inside WHERE).
``union_limit``                ORDER BY / SKIP / LIMIT in the last branch of a UNION: it binds
                               to that branch only, which readers (and models) take for a cut
                               of the whole union.
``filter_after_limit``         a WHERE that reads a variable carried out of a ``WITH ... LIMIT``
                               (in that WITH, a later WITH or a MATCH): FalkorDB applies the
                               filter before the cut and lets rows past it.
``integer_sum``                ``sum()`` over integer values stored as a float: FalkorDB
                               returns ``6.0`` where Neo4j returns ``6``; stored golds keep the
                               integer (:meth:`DivergenceAuditor.integer_sum_columns`).
``temporal_component_filter``  a WHERE comparison on a component of an indexed temporal
                               property (``c.reportDate.month = 9``): FalkorDB answers it from
                               the index and matches nothing (the grounding check's
                               ``engine_pitfall``, :func:`cypherturn.grounding.engine_pitfalls`).
=============================  ============================================================
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cypherturn.cypher import (
    AGGREGATE_FUNCTIONS,
    MatchClause,
    ParsedQuery,
    PatternElement,
    Projection,
    SingleQuery,
    Token,
    TokenKind,
    bracket_depths,
    parse_query,
    token_at,
    tokenize,
)
from cypherturn.errors import CypherParseError, QueryError
from cypherturn.graph import GraphEngine
from cypherturn.grounding import engine_pitfalls
from cypherturn.sessions._audit import AuditCode, AuditFinding
from cypherturn.sessions._format import GoldResult

__all__ = [
    "ANSWER_CHANGING",
    "DIVERGENCE_CODES",
    "DivergenceAuditor",
    "text_divergences",
]

DIVERGENCE_CODES: tuple[AuditCode, ...] = (
    AuditCode.PARALLEL_EDGES,
    AuditCode.EXISTS_PATTERN,
    AuditCode.UNION_LIMIT,
    AuditCode.FILTER_AFTER_LIMIT,
    AuditCode.INTEGER_SUM,
    AuditCode.TEMPORAL_COMPONENT_FILTER,
)
"""The engine-divergence classes, in the order the build report lists them."""

ANSWER_CHANGING: frozenset[AuditCode] = frozenset(DIVERGENCE_CODES) - {AuditCode.INTEGER_SUM}
"""Classes that change which rows or values a gold returns; ``integer_sum`` changes only the
number's type (results compare by value), so an imported gold hitting only it still counts as
reproduced when its values match."""

_INSENSITIVE_AGGREGATES = frozenset({"max", "min"})
_CALL = re.compile(r"\b([a-z_][a-z0-9_]*) \( (DISTINCT )?", re.IGNORECASE)
_NODE_LABELS = re.compile(
    r"^\(\s*(?:`[^`]*`|[A-Za-z_][A-Za-z0-9_]*)?\s*((?::\s*(?:`[^`]*`|\w+)\s*)*)"
)
_REL_VARIABLE = re.compile(r"^(<?-\[\s*)(`[^`]*`|[A-Za-z_][A-Za-z0-9_]*)?")
_SUM_CALL = re.compile(r"^\s*sum\s*\(\s*(DISTINCT\s+)?(.*)\)\s*$", re.IGNORECASE | re.DOTALL)


def _balanced(text: str) -> bool:
    """True when ``text`` never closes a bracket it did not open (one call's argument)."""
    try:
        bracket_depths(tokenize(text, lenient=True))
    except CypherParseError:
        return False
    return True


def _finding(turn_index: int, code: AuditCode, message: str) -> AuditFinding:
    return AuditFinding(turn_index, code, message)


def _clause_where(
    tokens: Sequence[Token], depths: Sequence[int], start: int, end: int
) -> int | None:
    """Index (into ``tokens``) of the clause's own WHERE keyword, outside any bracket."""
    first = token_at(tokens, start)
    return next(
        (
            i
            for i in range(first, token_at(tokens, end))
            if depths[i] == depths[first] and tokens[i].is_name("WHERE")
        ),
        None,
    )


def _read_names(tokens: Sequence[Token], first: int, end: int) -> set[str]:
    """Variable names read from token ``first`` up to offset ``end``."""
    names: set[str] = set()
    for i in range(first, len(tokens)):
        tok = tokens[i]
        if tok.start >= end:
            break
        if tok.kind is not TokenKind.NAME:
            continue
        after_dot = i > 0 and tokens[i - 1].is_punct(".")
        call = i + 1 < len(tokens) and tokens[i + 1].is_punct("(")
        if not after_dot and not call:
            names.add(tok.text)
    return names


def _exists_findings(turn_index: int, tokens: Sequence[Token]) -> list[AuditFinding]:
    for i, tok in enumerate(tokens[:-2]):
        if tok.is_name("EXISTS") and tokens[i + 1].is_punct("(") and tokens[i + 2].is_punct("("):
            return [
                _finding(
                    turn_index,
                    AuditCode.EXISTS_PATTERN,
                    "exists() over a pattern: FalkorDB answers true for every row",
                )
            ]
    return []


def _union_findings(turn_index: int, parsed: ParsedQuery) -> list[AuditFinding]:
    if not parsed.is_union:
        return []
    final = parsed.parts[-1].final_projection
    if final is not None and (final.order_by or final.skip or final.limit):
        return [
            _finding(
                turn_index,
                AuditCode.UNION_LIMIT,
                "ORDER BY/SKIP/LIMIT after UNION binds to the last branch only",
            )
        ]
    return []


def _filter_after_limit(
    turn_index: int, query: str, part: SingleQuery, tokens: Sequence[Token]
) -> list[AuditFinding]:
    limited: set[str] = set()
    depths = bracket_depths(tokens, lenient=True)
    for clause in part.clauses:
        if not isinstance(clause, MatchClause | Projection):
            continue
        where = _clause_where(tokens, depths, clause.start, clause.end)
        own_cut = isinstance(clause, Projection) and clause.limit
        if where is not None:
            read = _read_names(tokens, where + 1, clause.end)
            hit = read & limited
            if own_cut:
                hit = read or {"*"}
            if hit:
                text = " ".join(query[clause.start : clause.end].split())
                return [
                    _finding(
                        turn_index,
                        AuditCode.FILTER_AFTER_LIMIT,
                        f"{text!r} filters {sorted(hit)} after an ORDER BY ... LIMIT cut: "
                        "FalkorDB filters before the cut",
                    )
                ]
        if isinstance(clause, Projection):
            outputs = set(clause.output_names)
            if clause.limit:
                limited = outputs | (limited if clause.star else set())
            elif not clause.star:
                grouping = {i.output_name for i in clause.items if not i.aggregating}
                limited &= outputs & grouping if clause.aggregating else outputs
    return []


def _multiplicity_sensitive(projection: Projection) -> bool:
    """True when duplicate input rows change what ``projection`` passes on."""
    if projection.distinct:
        return False
    if projection.aggregating:
        for item in projection.items:
            for name, distinct in _CALL.findall(item.normalized):
                lowered = name.lower()
                counted = lowered in AGGREGATE_FUNCTIONS and lowered not in _INSENSITIVE_AGGREGATES
                if counted and not distinct:
                    return True
        return False
    return projection.kind == "RETURN" or projection.skip or projection.limit


def _sensitive_after(part: SingleQuery, position: int) -> bool:
    for clause in part.clauses[position + 1 :]:
        if isinstance(clause, Projection):
            if _multiplicity_sensitive(clause):
                return True
            if clause.distinct or clause.aggregating:
                return False
    return False


def _uses(tokens: Sequence[Token], variable: str) -> int:
    return sum(
        1
        for i, t in enumerate(tokens)
        if t.kind is TokenKind.NAME
        and t.text == variable
        and not (i > 0 and tokens[i - 1].is_punct("."))
    )


def _node_labels(query: str, element: PatternElement) -> str:
    found = _NODE_LABELS.match(query[element.start : element.end])
    return "".join(found.group(1).split()) if found else ""


def _relationship_probe(query: str, left: str, rel: PatternElement, right: str) -> str:
    text = query[rel.start : rel.end]
    if rel.insert_at is None:  # --, -->, <--
        bracketed = f"{'<' if rel.left else ''}-[__r]-{'>' if rel.right else ''}"
    else:
        found = _REL_VARIABLE.match(text)
        assert found is not None
        bracketed = f"{found.group(1)}__r{text[found.end() :]}"
    return (
        f"MATCH (__a{left}){bracketed}(__b{right}) "
        "WITH __a, __b, count(__r) AS __n WHERE __n > 1 RETURN count(*) AS pairs"
    )


def text_divergences(turn_index: int, gold: str) -> list[AuditFinding]:
    """The classes read from the query text alone: ``exists_pattern``, ``union_limit``,
    ``filter_after_limit``.

    Args:
        turn_index: the turn the findings name.
        gold: the query.

    Returns:
        One finding per class hit; none for a query that does not parse.

    Example:
        >>> [f.code.value for f in text_divergences(1, "MATCH (n:A) RETURN n.x AS x "
        ...     "UNION ALL MATCH (m:B) RETURN m.x AS x LIMIT 1")]
        ['union_limit']
    """
    try:
        tokens = tokenize(gold)
        parsed = parse_query(gold, tokens=tokens)
    except CypherParseError:
        return []
    return _text_findings(turn_index, gold, parsed, tokens)


def _text_findings(
    turn_index: int, gold: str, parsed: ParsedQuery, tokens: Sequence[Token]
) -> list[AuditFinding]:
    findings = _exists_findings(turn_index, tokens) + _union_findings(turn_index, parsed)
    for part in parsed.parts:
        hit = _filter_after_limit(turn_index, gold, part, tokens)
        if hit:
            findings += hit
            break
    return findings


@dataclass
class DivergenceAuditor:
    """Runs every divergence audit of one graph, caching what it probes.

    Args:
        engine: an engine on the graph the golds run on.
        timeout_s: limit per probe, seconds.

    Attributes:
        queries: probes executed so far.
    """

    engine: GraphEngine
    timeout_s: float | None = None
    queries: int = 0
    _parallel: dict[str, bool] = field(default_factory=dict)
    _indexed: set[str] | None = None

    def _run(self, query: str) -> list[list[Any]]:
        self.queries += 1
        return self.engine.execute(query, timeout_s=self.timeout_s).rows

    def _has_parallel(self, probe: str) -> bool:
        if probe not in self._parallel:
            rows = self._run(probe)
            self._parallel[probe] = bool(rows and rows[0][0])
        return self._parallel[probe]

    def _parallel_findings(
        self, turn_index: int, gold: str, parsed: ParsedQuery, tokens: Sequence[Token]
    ) -> list[AuditFinding]:
        for part in parsed.parts:
            for position, clause in enumerate(part.clauses):
                if not isinstance(clause, MatchClause):
                    continue
                for pattern in clause.parts:
                    elements = pattern.elements
                    for i, rel in enumerate(elements):
                        if rel.kind != "relationship" or rel.var_length or pattern.path_variable:
                            continue
                        if rel.variable is not None and _uses(tokens, rel.variable) > 1:
                            continue
                        if not _sensitive_after(part, position):
                            continue
                        left = _node_labels(gold, elements[i - 1]) if i > 0 else ""
                        right = _node_labels(gold, elements[i + 1]) if i + 1 < len(elements) else ""
                        if self._has_parallel(_relationship_probe(gold, left, rel, right)):
                            text = gold[rel.start : rel.end]
                            return [
                                _finding(
                                    turn_index,
                                    AuditCode.PARALLEL_EDGES,
                                    f"{text} matches node pairs joined by several relationships "
                                    "and the rows are counted: FalkorDB binds it once per pair, "
                                    "Neo4j once per relationship",
                                )
                            ]
        return []

    def _indexed_keys(self) -> set[str] | None:
        if self._indexed is None:
            try:
                rows = self._run("CALL db.indexes()")
            except QueryError:
                return None
            self._indexed = {str(key) for row in rows for key in (row[1] or [])}
        return self._indexed

    def _temporal_findings(
        self, turn_index: int, gold: str, tokens: Sequence[Token]
    ) -> list[AuditFinding]:
        # the pitfall needs a component read, ``v.key.part``; the full check costs ~5 ms a query
        chained = any(
            tokens[i].is_punct(".") and tokens[i + 2].is_punct(".")
            for i in range(len(tokens) - 3)
            if tokens[i + 1].kind is TokenKind.NAME and tokens[i + 3].kind is TokenKind.NAME
        )
        if not chained:
            return []
        pitfalls = [f for f in engine_pitfalls(tokens) if f.span is not None]
        if not pitfalls:
            return []
        indexed = self._indexed_keys()
        for finding in pitfalls:
            assert finding.span is not None
            parts = gold[finding.span[0] : finding.span[1]].split(".")
            if indexed is None or (len(parts) == 3 and parts[1].strip("`") in indexed):
                return [
                    _finding(
                        turn_index,
                        AuditCode.TEMPORAL_COMPONENT_FILTER,
                        f"{finding.message} (the property is indexed)",
                    )
                ]
        return []

    def integer_sum_columns(self, gold: str, parsed: ParsedQuery | None = None) -> list[int]:
        """Columns of the final RETURN that are ``sum()`` over integer values only.

        Probes ``<gold up to its final RETURN> RETURN collect(<argument>)`` for each
        column that is exactly one ``sum(...)`` call.

        Args:
            gold: the query.
            parsed: ``gold`` already parsed, when the caller has it.

        Returns:
            Column positions (0-based); empty for UNION queries and ``RETURN *``.

        Raises:
            QueryError: a probe failed.
        """
        if parsed is None:
            try:
                parsed = parse_query(gold)
            except CypherParseError:
                return []
        final = parsed.parts[-1].final_projection if parsed.parts else None
        if parsed.is_union or final is None or final.star:
            return []
        columns: list[int] = []
        for position, item in enumerate(final.items):
            call = _SUM_CALL.match(item.expression)
            if call is None or not _balanced(call.group(2)):
                continue
            argument = call.group(2)
            values = self._run(f"{gold[: final.start]}RETURN collect({argument}) AS values")
            collected = values[0][0] if values and values[0] else []
            if collected and all(
                isinstance(v, int) and not isinstance(v, bool) for v in collected if v is not None
            ):
                columns.append(position)
        return columns

    def findings(
        self, turn_index: int, gold: str, stored: GoldResult | None = None
    ) -> list[AuditFinding]:
        """Every divergence class ``gold`` hits on this graph.

        Args:
            turn_index: the turn the findings name.
            gold: the query.
            stored: the stored gold result; ``integer_sum`` is checked only with it
                (a float where the summed values are all integers).

        Returns:
            At most one finding per class.

        Raises:
            QueryError: a probe failed on the engine.
        """
        try:
            tokens = tokenize(gold)
            parsed = parse_query(gold, tokens=tokens)
        except CypherParseError:
            return []
        findings = _text_findings(turn_index, gold, parsed, tokens)
        findings += self._parallel_findings(turn_index, gold, parsed, tokens)
        findings += self._temporal_findings(turn_index, gold, tokens)
        if stored is not None and stored.rows:
            for column in self.integer_sum_columns(gold, parsed):
                if column < len(stored.columns) and any(
                    isinstance(row[column], float) for row in stored.rows
                ):
                    findings.append(
                        _finding(
                            turn_index,
                            AuditCode.INTEGER_SUM,
                            f"column {stored.columns[column]!r} sums integers but stores a "
                            "float (FalkorDB's type; Neo4j returns an integer)",
                        )
                    )
                    break
        return findings
