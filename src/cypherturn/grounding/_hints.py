"""Short corrective hints for the engine messages small models cannot act on by themselves.

The engine's own message stays the feedback m_t (RAS paper §3.2); a hint is
added after it, naming what Cypher expects instead. Matched on FalkorDB's and
Neo4j's message texts (docs/design/engine-errors.md lists the classes).
"""

from __future__ import annotations

import re

__all__ = ["error_hint"]

_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"aggregation expression within ORDER BY|Aggregation.*ORDER BY", re.I),
     "aggregate in RETURN with an alias and order by the alias, e.g. "
     "RETURN o.name, count(*) AS n ORDER BY n DESC"),
    (re.compile(r"Unable to resolve filtered alias|exists\(\)", re.I),
     "write a pattern condition directly, e.g. WHERE (n)-[:TYPE]->(), not exists((n)-[:TYPE]->())"),
    (re.compile(r"Unexpected clause following RETURN", re.I),
     "a query has one RETURN, at its end; pass values on with WITH"),
    (re.compile(r"cannot reference variables not projected", re.I),
     "ORDER BY after an aggregation can only use the returned items or their aliases"),
    (re.compile(r"^'(.+)' not defined$|Variable `(.+)` not defined", re.I),
     "every variable must be bound by a MATCH pattern, an UNWIND or a WITH before it is used"),
    (re.compile(r"Invalid input '!'", re.I), "Cypher writes 'not equal' as <>"),
    (re.compile(r"Invalid input 'G'|GROUP BY", re.I),
     "Cypher has no GROUP BY: the returned items that are not aggregates are the grouping keys"),
    (re.compile(r"Invalid input 'H'", re.I),
     "Cypher has no HAVING: aggregate in WITH, then filter with WHERE"),
    (re.compile(r"aggregate functions inside of aggregate functions", re.I),
     "aggregate once per step: compute the inner aggregate in WITH with an alias, "
     "then aggregate the alias"),
    (re.compile(r"Invalid use of aggregating function", re.I),
     "WHERE cannot hold an aggregate: compute it in WITH with an alias, then filter, "
     "e.g. WITH n, count(*) AS c WHERE c > 1"),
    (re.compile(r"WITH clause projections must be aliased", re.I),
     "every expression in WITH needs an alias, e.g. WITH n.name AS name"),
    (re.compile(r"^Query cannot conclude with", re.I), "end the query with a RETURN clause"),
    (re.compile(r"does not currently support =~", re.I),
     "use CONTAINS, STARTS WITH or ENDS WITH (with toLower() for case) instead of =~"),
    (re.compile(r"(LIMIT|SKIP) specified value of invalid type", re.I),
     "LIMIT and SKIP take a non-negative integer, e.g. LIMIT 10"),
    (re.compile(r"is the only function which can accept \*", re.I),
     "only count(*) takes *; pass a variable or property to other functions"),
    (re.compile(r"^Type mismatch", re.I),
     "compare values of the same type: use the stored values shown in the schema, "
     "toInteger()/toString() to convert"),
    (re.compile(r"Unknown function '(strftime|date_format|to_char|extract|year|month|day|datepart|date_part|format)'", re.I),
     "dates are DATE values: compare with date('YYYY-MM-DD'), or read parts as d.year, d.month, d.day"),
    (re.compile(r"Unknown function '(.+)'", re.I),
     "use only openCypher functions such as count, sum, avg, min, max, collect, toLower, size"),
)  # fmt: skip


def error_hint(message: str) -> str | None:
    """The corrective hint for an engine message, or ``None`` when none applies.

    Args:
        message: the engine's error text.

    Returns:
        One sentence saying what Cypher expects instead.
    """
    for pattern, hint in _HINTS:
        if pattern.search(message):
            return hint
    return None
