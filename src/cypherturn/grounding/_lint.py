"""Lint: SQL habits and shapes copied from prompts, found from the tokens alone.

These checks need no schema and no parse: they run on every query that
tokenizes, and a query the parser cannot read keeps them (its only findings).
Each finding names the Cypher to write instead; where the rewrite is
unambiguous it carries the edit (``!=`` as ``<>``, ``x NOT IN list`` as
``NOT x IN list``, ``WITH *`` before an ``ORDER BY`` that follows a MATCH, a
``{key: TYPE}`` map dropped).
"""

from __future__ import annotations

from collections.abc import Sequence

from cypherturn.cypher import AGGREGATE_FUNCTIONS, READ_CLAUSES, Token, TokenKind, keyword_at
from cypherturn.grounding._facts import KEYWORDS
from cypherturn.grounding._findings import CheckContext, Edit, Finding

__all__ = ["copied_shapes", "sql_habits"]

_SQL_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("GROUP", "BY"), "Cypher has no GROUP BY: the RETURN or WITH items that are not aggregates are the grouping keys"),
    (("HAVING",), "Cypher has no HAVING: aggregate in WITH, then filter with WHERE, e.g. WITH x, count(*) AS n WHERE n > 5 RETURN x, n"),
    (("SELECT",), "Cypher has no SELECT: MATCH a pattern and RETURN the values"),
    (("JOIN",), "Cypher has no JOIN: connect the nodes in one MATCH pattern, e.g. MATCH (a:A)-[:R]->(b:B)"),
    (("LIKE",), "Cypher has no LIKE: use CONTAINS, STARTS WITH, ENDS WITH or a regular expression with =~"),
)  # fmt: skip


def _sql_position(tokens: Sequence[Token], i: int, words: tuple[str, ...]) -> bool:
    """True where the SQL word stands as a keyword, not as a variable that happens to share its name."""
    after = tokens[i + len(words)] if i + len(words) < len(tokens) else None
    if words == ("SELECT",):
        return i == 0 or tokens[i - 1].is_punct("(")
    if words == ("LIKE",):
        return after is not None and after.kind is TokenKind.STRING
    if words in (("HAVING",), ("JOIN",)):
        return (
            i > 0
            and after is not None
            and not tokens[i - 1].is_name("AS")
            and not after.is_punct(".", ")", ",")
        )
    return True


def sql_habits(context: CheckContext) -> list[Finding]:
    """SQL written as Cypher: ``!=``, ``x NOT IN list``, GROUP BY, HAVING, SELECT, JOIN, LIKE, two RETURNs."""
    query, tokens = context.query, context.tokens
    returns = context.facts.returns_per_branch if context.facts is not None else ()
    findings: list[Finding] = []
    for i, tok in enumerate(tokens):
        if (
            tok.kind is TokenKind.PUNCT
            and tok.text == "!"
            and i + 1 < len(tokens)
            and tokens[i + 1].is_punct("=")
            and tokens[i + 1].start == tok.end
        ):
            findings.append(
                Finding(
                    code="sql_habit",
                    message="Cypher writes 'not equal' as <>, not !=",
                    span=(tok.start, tokens[i + 1].end),
                    suggestions=["<>"],
                    edit=Edit(
                        start=tok.start,
                        end=tokens[i + 1].end,
                        replacement="<>",
                        reason="!= and <> mean the same; Cypher accepts only <>",
                    ),
                )
            )
        if tok.is_name("NOT") and i + 1 < len(tokens) and tokens[i + 1].is_name("IN"):
            finding = _not_in_finding(query, tokens, i)
            if finding is not None:
                findings.append(finding)
        for words, hint in _SQL_HINTS:
            run = tokens[i : i + len(words)]
            if len(run) < len(words) or any(t.kind is not TokenKind.NAME for t in run):
                continue
            if tuple(t.upper for t in run) != words or not _sql_position(tokens, i, words):
                continue
            findings.append(Finding(code="sql_habit", message=hint, span=(tok.start, run[-1].end)))
    if any(n > 1 for n in returns):
        findings.append(
            Finding(
                code="sql_habit",
                message="a query has one RETURN, at its end: return several values as one list of items, "
                "or pass values on with WITH",
            )
        )
    return findings


def _operand_start(tokens: Sequence[Token], last: int) -> int | None:
    """Index of the first token of the operand ``v`` or ``v.key`` that ends at token ``last``."""
    if not _is_operand_name(tokens[last]):
        return None
    if last >= 2 and tokens[last - 1].is_punct(".") and _is_operand_name(tokens[last - 2]):
        return last - 2
    return last


def _is_operand_name(tok: Token) -> bool:
    return tok.kind is TokenKind.QUOTED_NAME or (
        tok.kind is TokenKind.NAME and tok.upper not in KEYWORDS
    )


def _not_in_finding(query: str, tokens: Sequence[Token], i: int) -> Finding | None:
    """``v.key NOT IN [...]`` (SQL's order), rewritten ``NOT v.key IN [...]``.

    Only for an operand that is a variable or a property and stands at the
    start of a predicate, so that moving ``NOT`` before it negates exactly the
    membership test.
    """
    if i == 0:
        return None
    start = _operand_start(tokens, i - 1)
    if start is None:
        return None
    before = tokens[start - 1] if start > 0 else None
    if before is None or not (
        before.is_name("WHERE", "AND", "OR", "XOR", "NOT") or before.is_punct("(")
    ):
        return None
    operand = query[tokens[start].start : tokens[i - 1].end]
    return Finding(
        code="sql_habit",
        message=f"Cypher writes NOT before the test: NOT {operand} IN [...], not {operand} NOT IN [...]",
        span=(tokens[start].start, tokens[i + 1].end),
        suggestions=[f"NOT {operand} IN"],
        edit=Edit(
            start=tokens[start].start,
            end=tokens[i + 1].end,
            replacement=f"NOT {operand} IN",
            reason="x NOT IN list is SQL's order; NOT x IN list is the same test in Cypher",
        ),
    )


_TYPE_NAMES = frozenset(
    {"STRING", "INTEGER", "FLOAT", "BOOLEAN", "DATE", "DATETIME", "LOCALDATETIME", "TIME",
     "LOCALTIME", "DURATION", "POINT", "LIST", "MAP"}
)  # fmt: skip


def copied_shapes(context: CheckContext) -> list[Finding]:
    """Two shapes small models copy into a query, each with an unambiguous rewrite.

    * ``ORDER BY`` / ``SKIP`` / ``LIMIT`` straight after a ``MATCH`` (or
      ``UNWIND``), with a ``RETURN`` later: Cypher orders and limits a
      projection, so ``WITH *`` is put before it, which passes every variable on
      unchanged (``MATCH (n:Tome) ORDER BY n.pages DESC LIMIT 3 RETURN n.name``).
    * a property map whose every value is a type name of the schema text,
      ``(:Faction)-[:ALLIED_WITH {since_year: INTEGER}]->(...)``: the schema's
      ``{key: TYPE}`` copied into a pattern, where ``INTEGER`` is an undefined
      variable; the map is dropped, which is the pattern without a condition.
    """
    tokens, depths = context.tokens, context.depths
    findings: list[Finding] = []
    last_clause = ""
    for i, tok in enumerate(tokens):
        if tok.is_punct("{") and i > 0:
            finding = _type_map_finding(tokens, i)
            if finding is not None:
                findings.append(finding)
        if depths[i] != 0 or not keyword_at(tokens, i):
            continue
        word = tok.upper
        if word in READ_CLAUSES:
            last_clause = word
        elif (
            word in ("ORDER", "SKIP", "LIMIT")
            and last_clause in ("MATCH", "UNWIND")
            and _modifier_follows(tokens, i)
            and _plain_projection_after(tokens, depths, i)
        ):
            findings.append(
                Finding(
                    code="sql_habit",
                    message=f"{word} follows a WITH or RETURN in Cypher, not a MATCH: "
                    f"WITH * {word} ...",
                    span=(tok.start, tok.end),
                    suggestions=[f"WITH * {word}"],
                    edit=Edit(
                        start=tok.start,
                        end=tok.start,
                        replacement="WITH * ",
                        reason="WITH * passes every variable on unchanged",
                    ),
                )
            )
            last_clause = "WITH"
    return findings


def _modifier_follows(tokens: Sequence[Token], i: int) -> bool:
    """``ORDER BY``, or ``SKIP`` / ``LIMIT`` followed by a number or parameter."""
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if after is None:
        return False
    if tokens[i].upper == "ORDER":
        return after.is_name("BY")
    return after.kind in (TokenKind.NUMBER, TokenKind.PARAMETER)


def _plain_projection_after(tokens: Sequence[Token], depths: Sequence[int], i: int) -> bool:
    """True when the next WITH or RETURN after token ``i`` exists and aggregates nothing.

    Before an aggregating projection, ``WITH *`` would make the ``LIMIT`` cut
    input rows instead of groups: a different answer, not a repair.
    """
    projection: int | None = None
    for j in range(i + 1, len(tokens)):
        tok = tokens[j]
        if tok.kind is TokenKind.PUNCT:
            continue
        if projection is None:
            if depths[j] == 0 and tok.is_name("WITH", "RETURN") and keyword_at(tokens, j):
                projection = j
        elif depths[j] == 0 and tok.is_name(*READ_CLAUSES, "ORDER", "SKIP", "LIMIT", "UNION"):
            break
        elif (
            tok.kind is TokenKind.NAME
            and tok.text.lower() in AGGREGATE_FUNCTIONS
            and j + 1 < len(tokens)
            and tokens[j + 1].is_punct("(")
        ):
            return False
    return projection is not None


def _type_map_finding(tokens: Sequence[Token], i: int) -> Finding | None:
    """The ``{key: TYPE, ...}`` map opening at token ``i`` when it follows a label or type name."""
    before = tokens[i - 1]
    if not (before.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME) and i >= 2):
        return None
    if not tokens[i - 2].is_punct(":", "(", "["):
        return None
    j = i + 1
    while j + 2 < len(tokens):
        key, colon, value = tokens[j], tokens[j + 1], tokens[j + 2]
        if not (
            key.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
            and colon.is_punct(":")
            and value.kind is TokenKind.NAME
            and value.text in _TYPE_NAMES
        ):
            return None
        j += 3
        if j < len(tokens) and tokens[j].is_punct(","):
            j += 1
            continue
        if j < len(tokens) and tokens[j].is_punct("}"):
            close = tokens[j]
            values = {tokens[k].text for k in range(i + 3, j, 4)}
            if any(
                t.text in values and k > 0 and tokens[k - 1].is_name("AS")
                for k, t in enumerate(tokens)
            ):
                return None  # a variable named like a type (WITH 'x' AS STRING)
            return Finding(
                code="undefined_variable",
                message=f"{value.text} is a type name of the schema, not a value: "
                "a pattern has no property map of types",
                span=(tokens[i].start, close.end),
                suggestions=[""],
                edit=Edit(
                    start=before.end,
                    end=close.end,
                    replacement="",
                    reason="a map of type names matches nothing; without it the pattern is as written",
                ),
            )
        return None
    return None
