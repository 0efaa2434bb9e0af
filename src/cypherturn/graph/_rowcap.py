"""Push the row cap into the query, so the engine stops after cap + 1 rows.

FalkorDB builds the whole result before it replies, and the client parses
every row of the reply, so a cap applied afterwards still pays for all of
them: a query returning 1,000,000 rows under a cap of 10 took about 3 s
(docs/design/engine-reliability.md, "The row cap is pushed into the query"). When a query ends in a top-level ``RETURN`` (no ``UNION``), its
result is the same as that of the query with ``LIMIT cap + 1`` appended, up
to the first cap + 1 rows, in the same order (``LIMIT`` applies after
``ORDER BY`` and ``SKIP``), which is all a capped result keeps; the extra row
tells that the cap cut the result.

The rewrite is made only where it is sound and leaves the engine's answer
unchanged:

* the query tokenizes, and its last top-level clause is ``RETURN``, with
  only ``ORDER BY``, ``SKIP`` and ``LIMIT`` after it; no ``UNION``;
* a final ``LIMIT`` of an integer literal larger than cap + 1 is lowered to
  cap + 1; a smaller one, or a ``LIMIT`` by parameter or expression, is kept
  as written (the query is then sent unchanged).

Procedure calls without ``RETURN`` (``CALL db.labels()``), queries with
``UNION``, and anything the tokenizer cannot read are sent unchanged.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from cypherturn.cypher import Token, TokenKind, bracket_depths, tokenize
from cypherturn.errors import CypherParseError

__all__ = ["CappedQuery", "push_row_cap"]

_CLAUSES = {
    "MATCH",
    "OPTIONAL",
    "WITH",
    "UNWIND",
    "CALL",
    "CREATE",
    "MERGE",
    "DELETE",
    "DETACH",
    "SET",
    "REMOVE",
    "FOREACH",
    "RETURN",
    "UNION",
    "LOAD",
    "YIELD",
    "WHERE",
}


class CappedQuery(BaseModel):
    """A query as sent to the engine after the cap was pushed into it.

    Attributes:
        text: the query to send (``original`` when no rewrite applied).
        original: the query as given.
        limit: the ``LIMIT`` the engine applies (cap + 1), or ``None`` when
            the query is sent unchanged.
    """

    text: str = Field(description="The query to send.")
    original: str = Field(description="The query as given.")
    limit: int | None = Field(default=None, description="The LIMIT pushed in, or None.")

    @property
    def rewritten(self) -> bool:
        """True when ``text`` differs from ``original``."""
        return self.limit is not None


def _top_level(tokens: list[Token]) -> list[Token]:
    """The tokens outside every bracket, brackets themselves left out."""
    depths = bracket_depths(tokens, lenient=True)
    return [
        token
        for token, depth in zip(tokens, depths, strict=True)
        if depth == 0 and not (token.kind is TokenKind.PUNCT and token.text in "()[]{}")
    ]


def push_row_cap(query: str, row_cap: int) -> CappedQuery:
    """Append (or lower) a final ``LIMIT row_cap + 1`` where that keeps the capped result.

    Args:
        query: Cypher text.
        row_cap: rows the caller keeps (>= 0).

    Returns:
        The query to send and the limit pushed in (see module doc for when).
    """
    unchanged = CappedQuery(text=query, original=query)
    try:
        tokens = tokenize(query)
    except CypherParseError:
        return unchanged
    while tokens and tokens[-1].is_punct(";"):
        tokens.pop()
    top = _top_level(tokens)
    if not top or any(token.is_punct(";") or token.is_name("UNION") for token in top):
        return unchanged
    last_return = max((i for i, t in enumerate(top) if t.is_name("RETURN")), default=None)
    if last_return is None:
        return unchanged
    tail = top[last_return + 1 :]
    if any(token.kind is TokenKind.NAME and token.upper in _CLAUSES for token in tail):
        return unchanged
    limit = row_cap + 1
    limits = [i for i, token in enumerate(tail) if token.is_name("LIMIT")]
    if limits:
        after = tail[limits[-1] + 1 :]
        literal = len(after) == 1 and after[0].kind is TokenKind.NUMBER and after[0].text.isdigit()
        if not literal or int(after[0].text) <= limit or after[0] is not tokens[-1]:
            return unchanged
        number = after[0]
        text = query[: number.start] + str(limit) + query[number.end :]
        return CappedQuery(text=text, original=query, limit=limit)
    end = tokens[-1].end
    return CappedQuery(
        text=f"{query[:end]} LIMIT {limit}{query[end:]}", original=query, limit=limit
    )
