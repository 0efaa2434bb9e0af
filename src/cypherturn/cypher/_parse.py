"""A clause-level Cypher parser over the offset-keeping tokens of :mod:`._tokens`.

It does not build expression trees. It finds, at bracket depth 0, the UNION
branches, the clauses of each branch, the pattern parts of every MATCH, and the
items, DISTINCT, ORDER BY, SKIP and LIMIT of every WITH and RETURN, each with the
source offsets the provenance rewrite splices at. That is what PSJS
(CypherBench §4) and the ORDER BY rule of EX (docs/design/ex-equivalence.md)
need, and no more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from cypherturn.cypher._scan import (
    AGGREGATE_FUNCTIONS,
    CLAUSE_STARTS,
    RESERVED_WORDS,
    WRITE_CLAUSES,
    bracket_depths,
)
from cypherturn.cypher._tokens import Token, TokenKind, tokenize
from cypherturn.errors import CypherParseError

__all__ = [
    "Clause",
    "MatchClause",
    "OtherClause",
    "ParsedQuery",
    "PatternElement",
    "PatternPart",
    "Projection",
    "ProjectionItem",
    "SingleQuery",
    "SortItem",
    "parse_query",
]


@dataclass(frozen=True, slots=True)
class PatternElement:
    """A node pattern ``(...)`` or relationship pattern ``-[...]->`` / ``-->`` of a MATCH.

    Attributes:
        kind: ``"node"`` or ``"relationship"``.
        variable: its variable (unquoted), or ``None`` when anonymous.
        var_length: a relationship pattern with ``*`` (binds a list of relationships).
        insert_at: offset just after ``(`` or ``[``, where a variable can be inserted;
            ``None`` for a bracket-less connector such as ``-->``.
        start / end: the element's span; for a bracket-less connector, the span to
            replace by a bracketed one.
        left / right: the arrow heads of a relationship (``<-`` and ``->``).
    """

    kind: Literal["node", "relationship"]
    variable: str | None
    var_length: bool
    insert_at: int | None
    start: int
    end: int
    left: bool = False
    right: bool = False


@dataclass(frozen=True, slots=True)
class PatternPart:
    """One comma-separated part of a MATCH pattern, e.g. ``p = (a)-[:R]->(b)``.

    Attributes:
        path_variable: the path variable the part is bound to, or ``None``.
        start: offset of the part's first character (the path variable when named).
        end: offset one past its last character.
        text: the part's source text.
        elements: its node and relationship patterns, in order (those inside a
            ``shortestPath(...)`` wrapper included).
    """

    path_variable: str | None
    start: int
    end: int
    text: str
    elements: tuple[PatternElement, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchClause:
    """A ``MATCH`` or ``OPTIONAL MATCH`` clause with its pattern parts."""

    optional: bool
    start: int
    end: int
    parts: tuple[PatternPart, ...]


@dataclass(frozen=True, slots=True)
class ProjectionItem:
    """One item of a WITH or RETURN.

    Attributes:
        expression: the expression's source text (without ``AS alias``).
        normalized: the expression's tokens joined by single spaces, function
            names lower-cased; two spellings of one expression compare equal.
        alias: the ``AS`` name, unquoted, or ``None``.
        aggregating: the expression calls an aggregating function.
        start: offset of the item's first character.
        end: offset one past the item's last character (alias included).
    """

    expression: str
    normalized: str
    alias: str | None
    aggregating: bool
    start: int
    end: int

    @property
    def output_name(self) -> str | None:
        """The variable name a later clause can use for this item, when it has one."""
        if self.alias is not None:
            return self.alias
        if " " not in self.normalized and self.normalized.isidentifier():
            return self.normalized
        return None


@dataclass(frozen=True, slots=True)
class SortItem:
    """One key of an ORDER BY: its text, normalized text and direction."""

    expression: str
    normalized: str
    descending: bool
    references: tuple[str, ...]
    """Variable names the key reads (names not preceded by ``.`` nor followed by ``(``)."""


@dataclass(frozen=True, slots=True)
class Projection:
    """A WITH or RETURN clause.

    Attributes:
        kind: ``"WITH"`` or ``"RETURN"``.
        start: offset of the keyword.
        end: offset one past the clause's last character.
        distinct: ``DISTINCT`` follows the keyword.
        star: the item list starts with ``*``.
        items: the items after ``*`` (or all items when there is no star).
        items_end: offset just after the last item (or the star): where an extra
            item can be appended with ``", expr AS name"``.
        order_by: the ORDER BY keys, empty when there is none.
        skip: a SKIP sub-clause is present.
        limit: a LIMIT sub-clause is present.
    """

    kind: Literal["WITH", "RETURN"]
    start: int
    end: int
    distinct: bool
    star: bool
    items: tuple[ProjectionItem, ...]
    items_end: int
    order_by: tuple[SortItem, ...]
    skip: bool
    limit: bool

    @property
    def aggregating(self) -> bool:
        """True when any item aggregates (the projection groups its input rows)."""
        return any(item.aggregating for item in self.items)

    @property
    def output_names(self) -> frozenset[str]:
        """Variable names visible after this projection, ``*`` excluded."""
        return frozenset(n for item in self.items if (n := item.output_name) is not None)


@dataclass(frozen=True, slots=True)
class OtherClause:
    """Any other clause (UNWIND, CALL, write clauses), kept as a keyword and a span.

    Attributes:
        keyword: the upper-cased clause keyword (``DETACH`` for ``DETACH DELETE``).
        subquery: a ``CALL { ... }`` or ``CALL (...) { ... }`` subquery.
        writes: the clause writes to the graph.
    """

    keyword: str
    start: int
    end: int
    subquery: bool = False
    writes: bool = False


Clause = MatchClause | Projection | OtherClause


@dataclass(frozen=True, slots=True)
class SingleQuery:
    """One UNION branch: its clauses in order."""

    clauses: tuple[Clause, ...]
    start: int
    end: int

    @property
    def final_projection(self) -> Projection | None:
        """The last clause when it is a RETURN, else ``None``."""
        last = self.clauses[-1] if self.clauses else None
        return last if isinstance(last, Projection) and last.kind == "RETURN" else None


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A whole query: the source text and its UNION branches.

    Attributes:
        text: the query as given.
        parts: one :class:`SingleQuery` per UNION branch (one when there is no UNION).
        union_all: for each UNION joint, whether it is ``UNION ALL``.
    """

    text: str
    parts: tuple[SingleQuery, ...]
    union_all: tuple[bool, ...] = field(default=())

    @property
    def is_union(self) -> bool:
        """True when the query combines branches with UNION."""
        return len(self.parts) > 1

    @property
    def writes(self) -> bool:
        """True when any branch has a write clause."""
        return any(isinstance(c, OtherClause) and c.writes for p in self.parts for c in p.clauses)


def _split_top(tokens: list[Token], depths: list[int], lo: int, hi: int) -> list[tuple[int, int]]:
    """Index ranges of ``tokens[lo:hi]`` separated by depth-0 commas."""
    ranges: list[tuple[int, int]] = []
    begin = lo
    for i in range(lo, hi):
        if depths[i] == 0 and tokens[i].is_punct(","):
            ranges.append((begin, i))
            begin = i + 1
    ranges.append((begin, hi))
    return ranges


def _normalized(tokens: list[Token], lo: int, hi: int) -> str:
    words = []
    for i in range(lo, hi):
        tok = tokens[i]
        is_call = tok.kind is TokenKind.NAME and i + 1 < hi and tokens[i + 1].is_punct("(")
        words.append(tok.text.lower() if is_call else tok.text)
    return " ".join(words)


def _unquote(tok: Token) -> str:
    if tok.kind is TokenKind.QUOTED_NAME:
        return tok.text[1:-1].replace("``", "`")
    return tok.text


def _is_variable_at(tokens: list[Token], i: int, hi: int) -> bool:
    """True when ``tokens[i]`` reads a variable (not a keyword, property key, label or function)."""
    tok = tokens[i]
    if tok.kind not in (TokenKind.NAME, TokenKind.QUOTED_NAME):
        return False
    if tok.kind is TokenKind.NAME and tok.upper in RESERVED_WORDS:
        return False
    if i > 0 and tokens[i - 1].is_punct(".", ":"):
        return False
    return not (i + 1 < hi and tokens[i + 1].is_punct("(", ":"))


class _Parser:
    def __init__(self, text: str, tokens: list[Token] | None = None) -> None:
        self.text = text
        self.tokens = tokenize(text) if tokens is None else tokens
        self.depths = bracket_depths(self.tokens)

    def src(self, lo: int, hi: int) -> str:
        """Source text covering tokens ``[lo, hi)``."""
        if lo >= hi:
            return ""
        return self.text[self.tokens[lo].start : self.tokens[hi - 1].end]

    def is_clause_start(self, i: int) -> bool:
        tok = self.tokens[i]
        if self.depths[i] != 0 or tok.kind is not TokenKind.NAME or tok.upper not in CLAUSE_STARTS:
            return False
        prev = self.tokens[i - 1] if i > 0 else None
        if prev is not None and (prev.is_punct(".") or prev.is_name("AS", "ON", "STARTS", "ENDS")):
            return False
        if tok.upper == "OPTIONAL":
            return i + 1 < len(self.tokens) and self.tokens[i + 1].is_name("MATCH")
        return not (tok.upper == "MATCH" and prev is not None and prev.is_name("OPTIONAL"))

    def parse(self) -> ParsedQuery:
        tokens = self.tokens
        if not tokens:
            raise CypherParseError("empty query")
        end = len(tokens)
        if tokens[-1].is_punct(";"):
            end -= 1
        branches: list[tuple[int, int]] = []
        union_all: list[bool] = []
        begin = 0
        i = 0
        while i < end:
            if self.depths[i] == 0 and tokens[i].is_name("UNION"):
                branches.append((begin, i))
                is_all = i + 1 < end and tokens[i + 1].is_name("ALL")
                union_all.append(is_all)
                i += 2 if is_all else 1
                begin = i
                continue
            i += 1
        branches.append((begin, end))
        parts = tuple(self.single_query(lo, hi) for lo, hi in branches)
        return ParsedQuery(self.text, parts, tuple(union_all))

    def single_query(self, lo: int, hi: int) -> SingleQuery:
        if lo >= hi:
            raise CypherParseError("empty UNION branch")
        starts = [i for i in range(lo, hi) if self.is_clause_start(i)]
        if not starts or starts[0] != lo:
            tok = self.tokens[lo]
            raise CypherParseError(
                f"expected a clause keyword at offset {tok.start}, got {tok.text!r}"
            )
        bounds = [*starts, hi]
        clauses = tuple(self.clause(bounds[k], bounds[k + 1]) for k in range(len(starts)))
        return SingleQuery(clauses, self.tokens[lo].start, self.tokens[hi - 1].end)

    def clause(self, lo: int, hi: int) -> Clause:
        tok = self.tokens[lo]
        start, end = tok.start, self.tokens[hi - 1].end
        word = tok.upper
        if word in ("MATCH", "OPTIONAL"):
            return self.match(lo, hi, optional=word == "OPTIONAL")
        if word in ("WITH", "RETURN"):
            return self.projection(lo, hi, "WITH" if word == "WITH" else "RETURN")
        subquery = word == "CALL" and lo + 1 < hi and self.tokens[lo + 1].is_punct("{", "(")
        return OtherClause(word, start, end, subquery=subquery, writes=word in WRITE_CLAUSES)

    def match(self, lo: int, hi: int, *, optional: bool) -> MatchClause:
        first = lo + (2 if optional else 1)
        stop = next(
            (
                i
                for i in range(first, hi)
                if self.depths[i] == 0 and self.tokens[i].is_name("WHERE", "USING")
            ),
            hi,
        )
        if first >= stop:
            raise CypherParseError(f"MATCH without a pattern at offset {self.tokens[lo].start}")
        parts = []
        for a, b in _split_top(self.tokens, self.depths, first, stop):
            if a >= b:
                raise CypherParseError(
                    f"empty pattern part in MATCH at offset {self.tokens[lo].start}"
                )
            named = (
                b - a > 2
                and self.tokens[a].kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
                and self.tokens[a + 1].is_punct("=")
            )
            variable = _unquote(self.tokens[a]) if named else None
            parts.append(
                PatternPart(
                    variable,
                    self.tokens[a].start,
                    self.tokens[b - 1].end,
                    self.src(a, b),
                    self.pattern_elements(a + 2 if named else a, b),
                )
            )
        return MatchClause(optional, self.tokens[lo].start, self.tokens[hi - 1].end, tuple(parts))

    def _variable_after(self, i: int, hi: int, followers: tuple[str, ...]) -> str | None:
        """The variable at token ``i`` (before the closer at ``hi``) when a name followed by ``followers``."""
        tok = self.tokens[i] if i < hi else None
        if tok is None or tok.kind not in (TokenKind.NAME, TokenKind.QUOTED_NAME):
            return None
        nxt = self.tokens[i + 1] if i + 1 <= hi else None
        return _unquote(tok) if nxt is not None and nxt.is_punct(*followers) else None

    def pattern_elements(self, lo: int, hi: int) -> tuple[PatternElement, ...]:
        """Node and relationship patterns of one pattern part, tokens ``[lo, hi)``."""
        tokens = self.tokens
        base = self.depths[lo]
        elements: list[PatternElement] = []
        i = lo
        while i < hi:
            tok = tokens[i]
            # Pattern elements sit at the part's own depth, or one level inside a
            # shortestPath(...) wrapper; maps and lists inside them are skipped whole.
            wrapper = self.depths[i] == base + 1 and i > lo and self.depths[lo] == base
            at_pattern_level = self.depths[i] == base or (wrapper and self._in_call(lo, i))
            if not at_pattern_level:
                i += 1
                continue
            prev = tokens[i - 1] if i > lo else None
            if tok.is_punct("(") and not (
                prev is not None and prev.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
            ):
                close = self._closing(i, hi)
                variable = self._variable_after(i + 1, close, (":", ")", "{"))
                elements.append(
                    PatternElement("node", variable, False, tok.end, tok.start, tokens[close].end)
                )
                i = close + 1
            elif tok.is_punct("-", "<-"):
                j = i
                while j < hi and tokens[j].is_punct("-", "<-", "->"):
                    j += 1
                if j < hi and tokens[j].is_punct("["):
                    close = self._closing(j, hi)
                    after = close + 1
                    var_length = any(
                        tokens[k].is_punct("*") and self.depths[k] == self.depths[j] + 1
                        for k in range(j + 1, close)
                    )
                    right = after < hi and tokens[after].is_punct("->")
                    elements.append(
                        PatternElement(
                            "relationship",
                            self._variable_after(j + 1, close, (":", "]", "*", "{")),
                            var_length,
                            tokens[j].end,
                            tok.start,
                            tokens[after].end if after < hi else tokens[close].end,
                            left=tok.is_punct("<-"),
                            right=right,
                        )
                    )
                    i = after + 1
                else:
                    elements.append(
                        PatternElement(
                            "relationship",
                            None,
                            False,
                            None,
                            tok.start,
                            tokens[j - 1].end,
                            left=tok.is_punct("<-"),
                            right=tokens[j - 1].is_punct("->"),
                        )
                    )
                    i = j
            else:
                i += 1
        return tuple(elements)

    def _closing(self, i: int, hi: int) -> int:
        """Index of the bracket closing the one at token ``i``."""
        depth = self.depths[i]
        for k in range(i + 1, hi):
            if (
                self.depths[k] == depth + 1
                and self.tokens[k].is_punct(")", "]", "}")
                and (k + 1 >= len(self.depths) or self.depths[k + 1] == depth)
            ):
                return k
        raise CypherParseError(f"unclosed bracket at offset {self.tokens[i].start}")

    def _in_call(self, lo: int, i: int) -> bool:
        """True when token ``i`` is directly inside a ``name(`` call opened within ``[lo, i)``."""
        depth = self.depths[i]
        for k in range(i - 1, lo - 1, -1):
            if self.depths[k] == depth - 1 and self.tokens[k].is_punct("("):
                return k > lo and self.tokens[k - 1].kind is TokenKind.NAME
            if self.depths[k] < depth - 1:
                return False
        return False

    def projection(self, lo: int, hi: int, kind: Literal["WITH", "RETURN"]) -> Projection:
        tokens = self.tokens
        i = lo + 1
        distinct = i < hi and tokens[i].is_name("DISTINCT")
        if distinct:
            i += 1
        subclauses = (
            ("ORDER", "SKIP", "LIMIT", "WHERE") if kind == "WITH" else ("ORDER", "SKIP", "LIMIT")
        )
        stop = next(
            (j for j in range(i, hi) if self.depths[j] == 0 and tokens[j].is_name(*subclauses)),
            hi,
        )
        if i >= stop:
            raise CypherParseError(f"{kind} without items at offset {tokens[lo].start}")
        ranges = _split_top(tokens, self.depths, i, stop)
        star = ranges[0][1] - ranges[0][0] == 1 and tokens[ranges[0][0]].is_punct("*")
        items = tuple(self.item(a, b) for a, b in (ranges[1:] if star else ranges))
        order_by: tuple[SortItem, ...] = ()
        j = stop
        if j < hi and tokens[j].is_name("ORDER"):
            if j + 1 >= hi or not tokens[j + 1].is_name("BY"):
                raise CypherParseError(f"ORDER without BY at offset {tokens[j].start}")
            key_stop = next(
                (
                    k
                    for k in range(j + 2, hi)
                    if self.depths[k] == 0 and tokens[k].is_name("SKIP", "LIMIT", "WHERE")
                ),
                hi,
            )
            order_by = tuple(
                self.sort_item(a, b) for a, b in _split_top(tokens, self.depths, j + 2, key_stop)
            )
        rest = range(stop, hi)
        skip = any(self.depths[k] == 0 and tokens[k].is_name("SKIP", "OFFSET") for k in rest)
        limit = any(self.depths[k] == 0 and tokens[k].is_name("LIMIT") for k in rest)
        return Projection(
            kind=kind,
            start=tokens[lo].start,
            end=tokens[hi - 1].end,
            distinct=distinct,
            star=star,
            items=items,
            items_end=tokens[stop - 1].end,
            order_by=order_by,
            skip=skip,
            limit=limit,
        )

    def item(self, a: int, b: int) -> ProjectionItem:
        tokens = self.tokens
        if a >= b:
            raise CypherParseError("empty item in a projection")
        alias = None
        expr_end = b
        if (
            b - a >= 3
            and tokens[b - 2].is_name("AS")
            and tokens[b - 1].kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
        ):
            alias = _unquote(tokens[b - 1])
            expr_end = b - 2
        aggregating = any(
            tokens[k].kind is TokenKind.NAME
            and tokens[k].text.lower() in AGGREGATE_FUNCTIONS
            and k + 1 < expr_end
            and tokens[k + 1].is_punct("(")
            and not (k > a and tokens[k - 1].is_punct("."))
            for k in range(a, expr_end)
        )
        return ProjectionItem(
            expression=self.src(a, expr_end),
            normalized=_normalized(tokens, a, expr_end),
            alias=alias,
            aggregating=aggregating,
            start=tokens[a].start,
            end=tokens[b - 1].end,
        )

    def sort_item(self, a: int, b: int) -> SortItem:
        tokens = self.tokens
        if a >= b:
            raise CypherParseError("empty ORDER BY key")
        descending = False
        if tokens[b - 1].is_name("ASC", "ASCENDING", "DESC", "DESCENDING"):
            descending = tokens[b - 1].upper.startswith("DESC")
            b -= 1
        references = tuple(
            _unquote(tokens[k]) for k in range(a, b) if _is_variable_at(tokens, k, b)
        )
        return SortItem(self.src(a, b), _normalized(tokens, a, b), descending, references)


def parse_query(query: str, *, tokens: list[Token] | None = None) -> ParsedQuery:
    """Parse a Cypher query down to clauses, pattern parts and projection items.

    Args:
        query: the Cypher text (a trailing ``;`` is allowed).
        tokens: ``tokenize(query)``, when the caller has it already.

    Returns:
        The :class:`ParsedQuery`, every element carrying source offsets.

    Raises:
        CypherParseError: the text does not tokenize, its brackets do not
            balance, or it does not start each UNION branch with a clause.
    """
    return _Parser(query, tokens).parse()
