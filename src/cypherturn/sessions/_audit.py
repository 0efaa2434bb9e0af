"""Automated audits that reject a turn (CypherTurn §2.5 quality control, made executable).

Text audits read the gold query through cypherturn's clause parser
(:mod:`cypherturn.cypher`), so they apply to generated and imported sessions
alike; engine audits execute probes on the real graph:

* ``agg_label``: an AGG_* or COUNT label whose final RETURN lacks the matching function;
* ``duplicate_gold``: two consecutive turns with the same gold query;
* ``contrast_type``: a CONTRAST that complements another entity type than the prior result;
* ``consecutive_aggregation``: two aggregation turns in a row;
* ``too_large`` / ``empty_result`` / ``execution_error``: the gold is unusable;
* ``tie_cut``: an ORDER BY ... LIMIT k whose k-th and (k+1)-th rows share every sort key,
  so which rows survive depends on the engine (probed, not guessed);
* ``not_chain_dependent``: the gold does not change when the prior turn's set changes
  (perturbation check, :mod:`._verify`);
* ``result_mismatch``: a stored gold result that re-execution does not reproduce;
* ``skeleton_mismatch``: a stored gold that its stored skeleton does not compose to;
* the engine-divergence classes (``parallel_edges``, ``exists_pattern``, ``union_limit``,
  ``filter_after_limit``, ``integer_sum``, ``temporal_component_filter``): golds whose
  answer FalkorDB and Neo4j give differently (:mod:`._divergence`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from cypherturn.cypher import Projection, parse_query
from cypherturn.errors import CypherParseError, QueryError
from cypherturn.graph import GraphEngine
from cypherturn.sessions._vocab import AGGREGATION_PHENOMENA, Phenomenon

__all__ = [
    "MAX_ROWS",
    "AuditCode",
    "AuditFinding",
    "TieProbe",
    "audit_agg_label",
    "audit_consecutive_aggregation",
    "audit_contrast_type",
    "audit_duplicate_gold",
    "audit_size",
    "audit_ties",
    "normalize_cypher",
    "probe_ties",
    "returned_label",
]

MAX_ROWS = 1_000
"""Largest useful gold result (rows); bigger results are rejected (docs/design/sessions.md, audits)."""


class AuditCode(StrEnum):
    """Why an audit rejected a turn."""

    EXECUTION_ERROR = "execution_error"
    EMPTY_RESULT = "empty_result"
    TOO_LARGE = "too_large"
    AGG_LABEL = "agg_label"
    DUPLICATE_GOLD = "duplicate_gold"
    CONTRAST_TYPE = "contrast_type"
    CONSECUTIVE_AGGREGATION = "consecutive_aggregation"
    TIE_CUT = "tie_cut"
    NOT_CHAIN_DEPENDENT = "not_chain_dependent"
    RESULT_MISMATCH = "result_mismatch"
    SKELETON_MISMATCH = "skeleton_mismatch"
    PARALLEL_EDGES = "parallel_edges"
    EXISTS_PATTERN = "exists_pattern"
    UNION_LIMIT = "union_limit"
    FILTER_AFTER_LIMIT = "filter_after_limit"
    INTEGER_SUM = "integer_sum"
    TEMPORAL_COMPONENT_FILTER = "temporal_component_filter"


@dataclass(frozen=True, slots=True)
class AuditFinding:
    """One audit failure: which turn (1-based), which audit, and a readable reason."""

    turn_index: int
    code: AuditCode
    message: str


_AGG_EXPECTED: dict[Phenomenon, frozenset[str]] = {
    Phenomenon.COUNT: frozenset({"count"}),
    Phenomenon.AGG_SUM: frozenset({"sum"}),
    Phenomenon.AGG_AVG: frozenset({"avg"}),
    Phenomenon.AGG_MAX: frozenset({"max", "min"}),
}
_NUMERIC_AGGS = frozenset({"sum", "avg", "max", "min"})
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def normalize_cypher(query: str) -> str:
    """Whitespace-collapsed query text, for comparing golds.

    Example:
        >>> normalize_cypher("MATCH (n)\\n  RETURN n")
        'MATCH (n) RETURN n'
    """
    return " ".join(query.split())


def _final_projection(gold: str) -> Projection | None:
    try:
        parsed = parse_query(gold)
    except CypherParseError:
        return None
    return parsed.parts[-1].final_projection if parsed.parts else None


def _functions(projection: Projection) -> set[str]:
    return {m.lower() for item in projection.items for m in _CALL.findall(item.expression)}


def audit_agg_label(
    turn_index: int, phenomena: Sequence[Phenomenon], gold: str
) -> list[AuditFinding]:
    """Reject an aggregation label that the final RETURN's functions do not match.

    COUNT needs ``count(``; AGG_SUM ``sum(``; AGG_AVG ``avg(``; AGG_MAX ``max(`` or
    ``min(``; and a numeric aggregate other than the labelled one is a mismatch too.
    """
    findings: list[AuditFinding] = []
    projection = _final_projection(gold)
    called = _functions(projection) if projection is not None else set()
    for phenomenon in phenomena:
        expected = _AGG_EXPECTED.get(phenomenon)
        if expected is None:
            continue
        wrong = (called & _NUMERIC_AGGS) - expected if phenomenon is not Phenomenon.COUNT else set()
        if not called & expected or wrong:
            findings.append(
                AuditFinding(
                    turn_index,
                    AuditCode.AGG_LABEL,
                    f"{phenomenon.value} turn, but the final RETURN calls "
                    f"{sorted(called) or 'no function'}; expected {sorted(expected)}",
                )
            )
    return findings


def audit_duplicate_gold(
    turn_index: int, gold: str, previous_gold: str | None
) -> list[AuditFinding]:
    """Reject a gold identical (up to whitespace) to the previous turn's."""
    if previous_gold is not None and normalize_cypher(gold) == normalize_cypher(previous_gold):
        return [
            AuditFinding(
                turn_index, AuditCode.DUPLICATE_GOLD, "same gold query as the previous turn"
            )
        ]
    return []


def audit_consecutive_aggregation(
    turn_index: int, phenomena: Sequence[Phenomenon], previous: Sequence[Phenomenon] | None
) -> list[AuditFinding]:
    """Reject an aggregation turn that directly follows another aggregation turn."""
    if (
        previous is not None
        and AGGREGATION_PHENOMENA & set(phenomena)
        and AGGREGATION_PHENOMENA & set(previous)
    ):
        return [
            AuditFinding(
                turn_index,
                AuditCode.CONSECUTIVE_AGGREGATION,
                f"aggregation turn {sorted(p.value for p in phenomena)} right after "
                f"{sorted(p.value for p in previous)}",
            )
        ]
    return []


def audit_size(turn_index: int, rows: int, max_rows: int = MAX_ROWS) -> list[AuditFinding]:
    """Reject empty results and results of more than ``max_rows`` rows."""
    if rows == 0:
        return [AuditFinding(turn_index, AuditCode.EMPTY_RESULT, "the gold query returns no rows")]
    if rows > max_rows:
        return [AuditFinding(turn_index, AuditCode.TOO_LARGE, f"{rows} rows, more than {max_rows}")]
    return []


def returned_label(gold: str) -> str | None:
    """Label of the node variable the final RETURN reads (projected or aggregated).

    Reads the first variable named in the final RETURN's first item and the last
    pattern in the query that binds it with a label, ``(var:Label``.

    Example:
        >>> returned_label("MATCH (n:Spell)<-[:REQUIRES]-(m1:Course)\\nRETURN DISTINCT m1.name AS name")
        'Course'
    """
    projection = _final_projection(gold)
    if projection is None or not projection.items:
        return None
    expression = projection.items[0].expression
    names = [
        n
        for n in re.findall(r"(?<![.\w])([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()", expression)
        if n.upper() != "DISTINCT"
    ]
    if not names:
        return None
    bindings = re.findall(
        rf"\(\s*{re.escape(names[0])}\s*:\s*`?([A-Za-z0-9_ ]+?)`?\s*[)\{{:]", gold
    )
    return bindings[-1] if bindings else None


def audit_contrast_type(turn_index: int, gold: str, prior_gold: str) -> list[AuditFinding]:
    """Reject a CONTRAST whose complement is over another label than the prior result's."""
    mine, prior = returned_label(gold), returned_label(prior_gold)
    if mine is None or prior is None:
        return [
            AuditFinding(
                turn_index,
                AuditCode.CONTRAST_TYPE,
                "cannot tell which entity type the CONTRAST or its prior result returns",
            )
        ]
    if mine != prior:
        return [
            AuditFinding(
                turn_index,
                AuditCode.CONTRAST_TYPE,
                f"complement over {mine} but the prior result holds {prior}",
            )
        ]
    return []


@dataclass(frozen=True, slots=True)
class TieProbe:
    """The outcome of probing one ORDER BY ... LIMIT k.

    Attributes:
        clause: the probed WITH/RETURN clause text.
        limit: k.
        boundary: sort-key values of the k-th and (k+1)-th rows (fewer when the
            input has at most k rows, then nothing is cut).
        tied: the two rows share every sort key: the cut is engine-dependent.
        checked: false when the clause could not be probed (a parameter as limit,
            keys that cannot be carried through the projection).
    """

    clause: str
    limit: int
    boundary: tuple[tuple[object, ...], ...]
    tied: bool
    checked: bool = True


_LIMIT = re.compile(r"\bLIMIT\s+(\d+)\s*$", re.IGNORECASE)
_SKIP = re.compile(r"\bSKIP\s+(\d+)\b", re.IGNORECASE)


def _probe_query(gold: str, proj: Projection) -> tuple[str, int] | None:
    clause = gold[proj.start : proj.end]
    limit = _LIMIT.search(clause)
    if limit is None or not proj.items:
        return None
    skip = _SKIP.search(clause)
    k = int(limit.group(1))
    offset = (int(skip.group(1)) if skip else 0) + k - 1
    items = gold[proj.items[0].start : proj.items_end]
    outputs = proj.output_names
    extra: list[str] = []
    keys: list[str] = []
    order: list[str] = []
    for i, key in enumerate(proj.order_by):
        direction = "DESC" if key.descending else "ASC"
        if set(key.references) <= outputs:
            keys.append(f"{key.expression} AS __k{i}")
            order.append(f"{key.expression} {direction}")
        elif not proj.distinct and not proj.aggregating:
            extra.append(f"{key.expression} AS __tie{i}")
            keys.append(f"__tie{i} AS __k{i}")
            order.append(f"__tie{i} {direction}")
        else:
            return None
    head = "WITH DISTINCT " if proj.distinct else "WITH "
    probe = (
        f"{gold[: proj.start]}{head}{', '.join([items, *extra])} ORDER BY {', '.join(order)} "
        f"SKIP {offset} LIMIT 2\nRETURN {', '.join(keys)}"
    )
    return probe, k


def probe_ties(
    gold: str,
    engine: GraphEngine,
    *,
    timeout_s: float | None = None,
    cache: dict[str, TieProbe] | None = None,
) -> list[TieProbe]:
    """Execute the k-th/(k+1)-th boundary probe of every ORDER BY ... LIMIT k in ``gold``.

    For each such WITH or RETURN, the query up to that clause is kept, the clause
    is re-issued with ``SKIP k-1 LIMIT 2`` and the sort keys are returned: two
    rows with equal keys mean the cut goes through a tie.

    Args:
        gold: the query.
        engine: engine on the graph the gold runs on.
        timeout_s: per-probe limit.
        cache: probe text -> outcome, shared across the turns of a session, since a
            chain-dependent gold repeats its predecessors' clauses.

    Returns:
        One :class:`TieProbe` per ORDER BY ... LIMIT, in query order.

    Raises:
        QueryError: a probe failed on the engine.
    """
    try:
        parsed = parse_query(gold)
    except CypherParseError:
        return []
    probes: list[TieProbe] = []
    for part in parsed.parts:
        for clause in part.clauses:
            if not isinstance(clause, Projection) or not clause.order_by or not clause.limit:
                continue
            text = gold[clause.start : clause.end]
            built = _probe_query(gold, clause)
            if built is None:
                probes.append(TieProbe(text, 0, (), tied=False, checked=False))
                continue
            query, k = built
            if cache is not None and query in cache:
                probes.append(cache[query])
                continue
            rows = engine.execute(query, timeout_s=timeout_s).rows
            boundary = tuple(tuple(r) for r in rows)
            probe = TieProbe(text, k, boundary, tied=len(rows) == 2 and boundary[0] == boundary[1])
            if cache is not None:
                cache[query] = probe
            probes.append(probe)
    return probes


def audit_ties(
    turn_index: int,
    gold: str,
    engine: GraphEngine,
    *,
    timeout_s: float | None = None,
    cache: dict[str, TieProbe] | None = None,
) -> list[AuditFinding]:
    """Reject a gold with an ORDER BY ... LIMIT k that cuts through tied rows (see :func:`probe_ties`)."""
    findings: list[AuditFinding] = []
    try:
        probes = probe_ties(gold, engine, timeout_s=timeout_s, cache=cache)
    except QueryError as e:
        return [
            AuditFinding(
                turn_index, AuditCode.EXECUTION_ERROR, f"tie probe failed: {e.engine_message}"
            )
        ]
    for probe in probes:
        if not probe.checked:
            findings.append(
                AuditFinding(
                    turn_index, AuditCode.TIE_CUT, f"cannot probe the cut of {probe.clause!r}"
                )
            )
        elif probe.tied:
            findings.append(
                AuditFinding(
                    turn_index,
                    AuditCode.TIE_CUT,
                    f"rows {probe.limit} and {probe.limit + 1} share sort keys {list(probe.boundary[0])} "
                    f"at {probe.clause!r}; add a deterministic tie-breaker",
                )
            )
    return findings
