"""Engine pitfalls: queries FalkorDB runs without an error but answers wrongly, with a rewrite it answers right.

The quirks come from the dialect description
(:data:`cypherturn.graph.FALKORDB_DIALECT`); this module holds the one that a
deterministic rewrite fixes. The gold audits (:mod:`cypherturn.sessions`) read
it too, to drop golds that meet it.
"""

from __future__ import annotations

from collections.abc import Sequence

from cypherturn.cypher import Token, TokenKind, bracket_depths, clause_before
from cypherturn.graph import TEMPORAL_COMPONENTS
from cypherturn.grounding._findings import CheckContext, Edit, Finding

__all__ = ["engine_pitfall_findings", "engine_pitfalls"]


def engine_pitfalls(tokens: Sequence[Token], depths: Sequence[int] | None = None) -> list[Finding]:
    """``engine_pitfall`` findings: filters FalkorDB answers wrongly, each with its rewrite.

    One class today, the dialect's ``indexed_temporal_components``: a
    comparison in WHERE on a component of a temporal property,
    ``c.reportDate.month = 9``. When the property is indexed, FalkorDB (the
    shipped 4.x build) uses the index for the filter and matches nothing;
    ``toInteger(c.reportDate.month) = 9``, or the expression in RETURN, gives
    the right answer. The components are integers, so the rewrite changes no
    value, and the finding does not fail a query by itself (like a SQL-habit
    hint): it is there for the repair.

    Args:
        tokens: the query's tokens.
        depths: their bracket depths, when the caller has them.

    Returns:
        One finding per component read in a WHERE clause.

    Example:
        >>> from cypherturn.cypher import tokenize
        >>> [f.edit.replacement for f in engine_pitfalls(tokenize("MATCH (c) WHERE c.d.month = 9 RETURN c"))]
        ['toInteger(c.d.month)']
    """
    if depths is None:
        depths = bracket_depths(tokens, lenient=True)
    findings: list[Finding] = []
    for i, tok in enumerate(tokens):
        if i < 4 or tok.kind is not TokenKind.NAME or tok.text.lower() not in TEMPORAL_COMPONENTS:
            continue
        base, dot1, key, dot2 = tokens[i - 4 : i]
        if not (
            base.kind is TokenKind.NAME
            and dot1.is_punct(".")
            and key.kind is TokenKind.NAME
            and dot2.is_punct(".")
            and not (i >= 5 and tokens[i - 5].is_punct("."))
            and not (i + 1 < len(tokens) and tokens[i + 1].is_punct("("))
            and not (i >= 6 and tokens[i - 5].is_punct("(") and tokens[i - 6].is_name("TOINTEGER"))
        ):
            continue
        clause = clause_before(tokens, depths, i)
        if clause is None or tokens[clause].upper != "WHERE":
            continue
        text = f"{base.text}.{key.text}.{tok.text}"
        findings.append(
            Finding(
                code="engine_pitfall",
                message=(
                    f"FalkorDB can match nothing on a filter on {text} (when {key.text} is "
                    f"indexed): write toInteger({text})"
                ),
                span=(base.start, tok.end),
                suggestions=[f"toInteger({text})"],
                edit=Edit(
                    start=base.start,
                    end=tok.end,
                    replacement=f"toInteger({text})",
                    reason="a temporal component is an integer, so toInteger changes no value",
                ),
            )
        )
    return findings


def engine_pitfall_findings(context: CheckContext) -> list[Finding]:
    """:func:`engine_pitfalls` as a check of the table."""
    return engine_pitfalls(context.tokens, context.depths)
