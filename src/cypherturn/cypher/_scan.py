"""The Cypher scanner: keyword tables and positions over the tokens of :mod:`._tokens`.

Every reader of Cypher text that asks "is this word a clause?", "how deep in
brackets is this token?", "is this comparison a filter of the WHERE clause?"
asks it here: the clause parser (:mod:`._parse`), the runaway cut
(:mod:`._runaway`), the read-only guard (:mod:`cypherturn.graph`), the grounding
checks and the gold audits. There is one table of clause keywords
(:data:`CLAUSE_KEYWORDS`, each word with its :class:`ClauseRole`), one table of
aggregating functions (:data:`AGGREGATE_FUNCTIONS`) and one bracket-depth scan
(:func:`bracket_depths`); the narrower sets below are derived from them.

The functions take a token list that the caller tokenized once and pass down,
so a check over one query never tokenizes it again.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from cypherturn.cypher._tokens import OPENERS, Token, TokenKind
from cypherturn.errors import CypherParseError

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "BOOLEAN_WORDS",
    "CLAUSE_KEYWORDS",
    "CLAUSE_STARTS",
    "EXPRESSION_CLAUSES",
    "EXPRESSION_KEYWORDS",
    "READING_KEYWORDS",
    "READ_CLAUSES",
    "RESERVED_WORDS",
    "WRITE_CLAUSES",
    "ClauseKeyword",
    "ClauseRole",
    "bracket_depths",
    "clause_before",
    "enclosing_brackets",
    "in_top_level_where",
    "keyword_at",
    "predicate_bounds",
    "token_at",
    "where_of",
]


class ClauseRole(StrEnum):
    """What a clause keyword does in a query."""

    READ = "read"
    """Starts a clause that reads or projects (``MATCH``, ``WITH``, ``RETURN``, ...)."""
    WRITE = "write"
    """Starts a clause that writes; a read-only engine refuses it."""
    OTHER = "other"
    """Starts a clause that neither reads the graph nor writes it (``LOAD CSV``, ``USE``)."""
    PART = "part"
    """Continues a clause: ``WHERE``, ``ORDER BY``, ``SKIP``, ``LIMIT``."""
    UNION = "union"
    """Joins two whole queries."""


@dataclass(frozen=True, slots=True)
class ClauseKeyword:
    """One row of :data:`CLAUSE_KEYWORDS`.

    Attributes:
        role: what the keyword does.
        expression_follows: an expression or a name follows it (``RETURN x``,
            ``SET n.k = 1``), not a pattern, a procedure, a body or another keyword.
    """

    role: ClauseRole
    expression_follows: bool = False


_READ, _WRITE, _PART = ClauseRole.READ, ClauseRole.WRITE, ClauseRole.PART

CLAUSE_KEYWORDS: Mapping[str, ClauseKeyword] = MappingProxyType(
    {
        "MATCH": ClauseKeyword(_READ),
        "OPTIONAL": ClauseKeyword(_READ),
        "WITH": ClauseKeyword(_READ, expression_follows=True),
        "RETURN": ClauseKeyword(_READ, expression_follows=True),
        "UNWIND": ClauseKeyword(_READ, expression_follows=True),
        "CALL": ClauseKeyword(_READ),
        "CREATE": ClauseKeyword(_WRITE),
        "MERGE": ClauseKeyword(_WRITE),
        "SET": ClauseKeyword(_WRITE, expression_follows=True),
        "DELETE": ClauseKeyword(_WRITE, expression_follows=True),
        "DETACH": ClauseKeyword(_WRITE),
        "REMOVE": ClauseKeyword(_WRITE, expression_follows=True),
        "FOREACH": ClauseKeyword(_WRITE),
        "LOAD": ClauseKeyword(ClauseRole.OTHER),
        "USE": ClauseKeyword(ClauseRole.OTHER),
        "WHERE": ClauseKeyword(_PART, expression_follows=True),
        "ORDER": ClauseKeyword(_PART),
        "SKIP": ClauseKeyword(_PART, expression_follows=True),
        "LIMIT": ClauseKeyword(_PART, expression_follows=True),
        "UNION": ClauseKeyword(ClauseRole.UNION),
    }
)
"""The one table of clause keywords (upper case), each with its role."""


def _words(*roles: ClauseRole) -> frozenset[str]:
    return frozenset(word for word, row in CLAUSE_KEYWORDS.items() if row.role in roles)


CLAUSE_STARTS = _words(ClauseRole.READ, ClauseRole.WRITE, ClauseRole.OTHER)
"""Keywords that start a clause (``OPTIONAL`` of ``OPTIONAL MATCH``, ``DETACH`` of ``DETACH DELETE``)."""

READ_CLAUSES = _words(ClauseRole.READ)
"""Keywords that start a reading clause."""

WRITE_CLAUSES = _words(ClauseRole.WRITE)
"""Clause keywords that write; a read-only engine refuses them."""

READING_KEYWORDS = _words(ClauseRole.READ, ClauseRole.PART, ClauseRole.UNION)
"""The clause keywords of a read-only query: reading clauses, their parts and ``UNION``."""

EXPRESSION_CLAUSES = frozenset(w for w, row in CLAUSE_KEYWORDS.items() if row.expression_follows)
"""Clause keywords an expression or a name follows (``RETURN drop`` names a variable ``drop``)."""

BOOLEAN_WORDS = frozenset({"AND", "OR", "XOR", "NOT"})
"""The boolean operators, which join the predicates of a WHERE."""

EXPRESSION_KEYWORDS = BOOLEAN_WORDS | frozenset(
    {"AS", "IN", "IS", "NULL", "TRUE", "FALSE", "BY", "ASC", "DESC", "ASCENDING", "DESCENDING",
     "DISTINCT", "CASE", "WHEN", "THEN", "ELSE", "END", "STARTS", "ENDS", "CONTAINS", "ALL",
     "EXISTS", "YIELD", "ON", "OFFSET"}
)  # fmt: skip
"""Words of expressions and clause bodies that are no clause keyword."""

RESERVED_WORDS = frozenset(CLAUSE_KEYWORDS) | EXPRESSION_KEYWORDS
"""Keywords (any letter case in a query) that never name a variable in generated Cypher."""

AGGREGATE_FUNCTIONS = frozenset(
    {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont",
     "percentiledisc"}
)  # fmt: skip
"""Lower-cased names of the openCypher aggregating functions (the one aggregate table)."""

_CLOSERS = frozenset(OPENERS.values())


def bracket_depths(
    tokens: Sequence[Token], *, open_at_end: bool = False, lenient: bool = False
) -> list[int]:
    """Bracket depth (over ``()``, ``[]`` and ``{}``) before each token.

    Args:
        tokens: the query's tokens.
        open_at_end: allow brackets still open at the end (a query cut off).
        lenient: never raise: every closer lowers the depth by one, whatever it
            closes (the depth can go below 0 after an unmatched closer), for text
            that may not be Cypher.

    Returns:
        One depth per token: 0 for a token outside every bracket (an opener
        counts the depth outside it, its closer the depth inside).

    Raises:
        CypherParseError: (unless ``lenient``) a closer that matches no opener,
            or (unless ``open_at_end``) an opener never closed.

    Example:
        >>> from cypherturn.cypher import tokenize
        >>> bracket_depths(tokenize("MATCH (n {k: [1]}) RETURN n"))
        [0, 0, 1, 1, 2, 2, 2, 3, 3, 2, 1, 0, 0]
    """
    depths: list[int] = []
    stack: list[str] = []
    depth = 0
    for tok in tokens:
        depths.append(depth)
        if tok.kind is not TokenKind.PUNCT:
            continue
        if tok.text in OPENERS:
            stack.append(OPENERS[tok.text])
            depth += 1
        elif tok.text in _CLOSERS:
            depth -= 1
            if lenient:
                continue
            if not stack or stack[-1] != tok.text:
                raise CypherParseError(f"unbalanced {tok.text!r} at offset {tok.start}")
            stack.pop()
    if stack and not (open_at_end or lenient):
        raise CypherParseError(f"missing {stack[-1]!r} at the end of the query")
    return depths


def keyword_at(tokens: Sequence[Token], i: int) -> bool:
    """True where the name at ``i`` stands as a keyword, not a property key, label or alias spelt like one."""
    tok = tokens[i]
    if tok.kind is not TokenKind.NAME:
        return False
    before = tokens[i - 1] if i > 0 else None
    return before is None or not (before.is_punct(".", ":") or before.is_name("AS"))


def token_at(tokens: Sequence[Token], offset: int) -> int:
    """Index of the first token that starts at or after ``offset`` (``len(tokens)`` when none)."""
    return bisect_left([t.start for t in tokens], offset)


def enclosing_brackets(depths: Sequence[int], i: int) -> list[int]:
    """Indices of the brackets open at token ``i``, outermost first (balanced tokens)."""
    found: list[int] = []
    level = depths[i]
    for k in range(i - 1, -1, -1):
        if level <= 0:
            break
        if depths[k] < level:
            found.append(k)
            level = depths[k]
    return found[::-1]


def clause_before(tokens: Sequence[Token], depths: Sequence[int], i: int) -> int | None:
    """Index of the last top-level clause keyword before token ``i``, or ``None``."""
    for k in range(i - 1, -1, -1):
        if depths[k] == 0 and tokens[k].upper in CLAUSE_KEYWORDS and keyword_at(tokens, k):
            return k
    return None


def _grouping(tokens: Sequence[Token], k: int) -> bool:
    """True when the bracket at ``k`` is a parenthesis that only groups predicates."""
    before = tokens[k - 1] if k else None
    return (
        tokens[k].is_punct("(")
        and before is not None
        and (before.is_name("WHERE", *BOOLEAN_WORDS) or before.is_punct("("))
    )


def where_of(tokens: Sequence[Token], depths: Sequence[int], i: int) -> tuple[int, int] | None:
    """The top-level WHERE that token ``i`` filters in: ``(index of WHERE, index after its last token)``.

    Token ``i`` must lie in the WHERE clause itself or inside grouping
    parentheses only (after ``WHERE``, a boolean operator or another ``(``).
    A comparison inside ``any(x IN list WHERE ...)``, a list, a map or a
    projection (``RETURN (n.name = 'x') AS f``) is an expression whose value is
    used, not a filter: ``None``.
    """
    where = clause_before(tokens, depths, i)
    if where is None or tokens[where].upper != "WHERE":
        return None
    if not all(_grouping(tokens, k) for k in enclosing_brackets(depths, i)):
        return None
    end = next(
        (
            k
            for k in range(where + 1, len(tokens))
            if depths[k] == 0 and tokens[k].upper in CLAUSE_KEYWORDS and keyword_at(tokens, k)
        ),
        len(tokens),
    )
    return where, end


def in_top_level_where(tokens: Sequence[Token], depths: Sequence[int], offset: int) -> bool:
    """True when the token at ``offset`` lies in a WHERE clause, inside nothing but grouping parentheses."""
    i = token_at(tokens, offset)
    return i < len(tokens) and where_of(tokens, depths, i) is not None


_BEFORE_PREDICATE = BOOLEAN_WORDS | {"WHERE"}
_AFTER_PREDICATE = (BOOLEAN_WORDS - {"NOT"}) | frozenset(CLAUSE_KEYWORDS)


def predicate_bounds(query: str, start: int, end: int) -> bool:
    """True when ``query[start:end]`` stands as a whole WHERE predicate (not inside an expression)."""
    before = query[:start].rstrip()
    after = query[end:].lstrip()
    word_before = before.rsplit(None, 1)[-1].upper() if before else ""
    word_after = after.split(None, 1)[0].upper() if after else ""
    return (word_before in _BEFORE_PREDICATE or before.endswith("(")) and (
        not after or word_after in _AFTER_PREDICATE or after.startswith((")", ";"))
    )
