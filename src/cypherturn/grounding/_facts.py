"""What a query says about the graph, read off cypherturn's own tokenizer and clause parser.

:func:`query_facts` lists, with source offsets, the labels and relationship
types every pattern names, the direction and endpoints of every relationship
pattern, every ``variable.key`` property access and every string literal
compared with a property. The schema check, value grounding and the
deterministic repairs (:mod:`._check`, :mod:`._values`, :mod:`._repair`) work
on these facts only, so every one of them sees a query the same way.

Only what the parser understands is reported: patterns of MATCH and OPTIONAL
MATCH clauses, and expressions at clause level. A construct the facts do not
cover (a pattern predicate in WHERE, a CALL subquery) yields no fact, and so
never a finding: an unanalysed part of a query is never called wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from cypherturn.cypher import (
    RESERVED_WORDS,
    MatchClause,
    OtherClause,
    PatternElement,
    Projection,
    Token,
    TokenKind,
    bracket_depths,
    parse_query,
    tokenize,
)

__all__ = [
    "KEYWORDS",
    "BranchFacts",
    "NodeFact",
    "PropertyAccess",
    "QueryFacts",
    "RelationshipFact",
    "Span",
    "StringComparison",
    "query_facts",
    "string_value",
]

# the reserved words, and the words inside USING INDEX, LOAD CSV FROM ... WITH HEADERS and
# the float literals NaN and Infinity
KEYWORDS = RESERVED_WORDS | frozenset(
    {"USING", "INDEX", "CSV", "FROM", "HEADERS", "NAN", "INF", "INFINITY"}
)
"""Upper-cased words that are never read as variables in an expression."""

Direction = Literal["out", "in", "both"]


@dataclass(frozen=True, slots=True)
class Span:
    """A ``[start, end)`` range of source offsets and the text it covers."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class NodeFact:
    """A node pattern ``(v:Label {key: value})`` of a MATCH clause.

    Attributes:
        variable: the variable, or ``None`` when anonymous.
        labels: the label names, unquoted, with their spans (the name token).
        map_strings: ``(key, value, span of the literal)`` for string-valued
            entries of the pattern's property map.
        map_keys: ``(key, span of the key)`` for every property-map entry.
        start / end: the pattern's span.
    """

    variable: str | None
    labels: tuple[tuple[str, Span], ...]
    map_strings: tuple[tuple[str, str, Span], ...]
    map_keys: tuple[tuple[str, Span], ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RelationshipFact:
    """A relationship pattern with its two endpoint node patterns.

    Attributes:
        variable: the relationship's variable, or ``None``.
        types: relationship type names (``[:A|B]`` gives two), with their spans.
        direction: ``out`` for ``(left)-[]->(right)``, ``in`` for
            ``(left)<-[]-(right)``, ``both`` when undirected.
        left / right: the node patterns written before and after it.
        var_length: a ``*`` variable-length relationship.
        element: the parser's element (offsets of the whole connector).
        map_keys: ``(key, span)`` for every property-map entry.
    """

    variable: str | None
    types: tuple[tuple[str, Span], ...]
    direction: Direction
    left: NodeFact
    right: NodeFact
    var_length: bool
    element: PatternElement
    map_keys: tuple[tuple[str, Span], ...] = ()


@dataclass(frozen=True, slots=True)
class PropertyAccess:
    """A ``variable.key`` read in an expression; ``span`` covers the key token."""

    variable: str
    key: str
    span: Span


@dataclass(frozen=True, slots=True)
class StringComparison:
    """A string literal compared with a property.

    Attributes:
        variable / key: the property ``variable.key`` compared.
        operator: ``=``, ``<>``, ``IN``, ``STARTS WITH``, ``ENDS WITH``,
            ``CONTAINS``, ``=~`` or ``MAP`` (a ``{key: 'value'}`` pattern entry).
        value: the literal's value, unescaped.
        span: the literal token, quotes included.
        fold: ``lower`` / ``upper`` when the property is wrapped in
            ``toLower`` / ``toUpper``, else ``None``.
    """

    variable: str
    key: str
    operator: str
    value: str
    span: Span
    fold: Literal["lower", "upper"] | None = None


@dataclass(slots=True)
class BranchFacts:
    """The facts of one UNION branch (variables are scoped to a branch)."""

    nodes: list[NodeFact] = field(default_factory=list)
    relationships: list[RelationshipFact] = field(default_factory=list)
    accesses: list[PropertyAccess] = field(default_factory=list)
    comparisons: list[StringComparison] = field(default_factory=list)
    rebound: set[str] = field(default_factory=set)
    """Variables that a projection or UNWIND rebinds to another value."""
    undefined: list[Span] = field(default_factory=list)
    """Variables read where no clause defines them (empty when the scope is not understood)."""

    def labels_of(self, variable: str) -> frozenset[str]:
        """Labels the branch's node patterns give ``variable`` (empty when none or rebound)."""
        if variable in self.rebound:
            return frozenset()
        return frozenset(name for n in self.nodes if n.variable == variable for name, _ in n.labels)

    def types_of(self, variable: str) -> frozenset[str]:
        """Relationship types bound to ``variable`` (single-hop patterns only)."""
        if variable in self.rebound:
            return frozenset()
        return frozenset(
            name
            for r in self.relationships
            if r.variable == variable and not r.var_length
            for name, _ in r.types
        )


@dataclass(frozen=True, slots=True)
class QueryFacts:
    """Everything :func:`query_facts` read from one query.

    Attributes:
        text: the query.
        tokens: its tokens.
        branches: one :class:`BranchFacts` per UNION branch.
        returns_per_branch: RETURN clauses in each branch (SQL-style queries write two).
    """

    text: str
    tokens: tuple[Token, ...]
    branches: tuple[BranchFacts, ...]
    returns_per_branch: tuple[int, ...]


def _unquote(tok: Token) -> str:
    if tok.kind is TokenKind.QUOTED_NAME:
        return tok.text[1:-1].replace("``", "`")
    return tok.text


def string_value(literal: str) -> str:
    """The value of a Cypher string literal token (quotes stripped, escapes read)."""
    body = literal[1:-1]
    out: list[str] = []
    i = 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(escapes.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _is_name(tok: Token) -> bool:
    return tok.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)


class _Reader:
    """Walks the tokens of one parsed query; ``index`` maps a start offset to a token index."""

    def __init__(self, text: str, tokens: list[Token] | None = None) -> None:
        self.text = text
        self.tokens = tokenize(text) if tokens is None else tokens
        self.index = {tok.start: i for i, tok in enumerate(self.tokens)}
        self.parsed = parse_query(text, tokens=self.tokens)
        self.depths = bracket_depths(self.tokens)

    def span(self, tok: Token) -> Span:
        return Span(tok.start, tok.end, tok.text)

    def tokens_between(self, start: int, end: int) -> tuple[int, int]:
        """Token index range ``[lo, hi)`` of tokens starting in ``[start, end)``."""
        lo = self.index[start]
        hi = lo
        while hi < len(self.tokens) and self.tokens[hi].start < end:
            hi += 1
        return lo, hi

    def names_after_colons(self, lo: int, hi: int) -> list[tuple[str, Span]]:
        """``:Name`` / ``|Name`` / ``|:Name`` sequences at the start of a pattern's body."""
        found: list[tuple[str, Span]] = []
        i = lo
        while i + 1 < hi and self.tokens[i].is_punct(":", "|"):
            j = i + 1
            if self.tokens[j].is_punct(":") and j + 1 < hi:
                j += 1
            if not _is_name(self.tokens[j]):
                break
            found.append((_unquote(self.tokens[j]), self.span(self.tokens[j])))
            i = j + 1
        return found

    def map_entries(
        self, lo: int, hi: int
    ) -> tuple[list[tuple[str, Span]], list[tuple[str, str, Span]]]:
        """Keys and string values of the first ``{...}`` map in tokens ``[lo, hi)`` (one level)."""
        keys: list[tuple[str, Span]] = []
        strings: list[tuple[str, str, Span]] = []
        open_at = next((i for i in range(lo, hi) if self.tokens[i].is_punct("{")), None)
        if open_at is None:
            return keys, strings
        inside = self.depths[open_at] + 1
        for i in range(open_at + 1, hi):
            tok = self.tokens[i]
            if self.depths[i] != inside:
                continue
            if tok.is_punct("}", "]", ")"):
                break
            if (
                _is_name(tok)
                and i + 1 < hi
                and self.tokens[i + 1].is_punct(":")
                and self.tokens[i - 1].is_punct("{", ",")
            ):
                key = _unquote(tok)
                keys.append((key, self.span(tok)))
                value = self.tokens[i + 2] if i + 2 < hi else None
                after = self.tokens[i + 3] if i + 3 < hi else None
                if (
                    value is not None
                    and value.kind is TokenKind.STRING
                    and after is not None
                    and after.is_punct(",", "}")
                ):
                    strings.append((key, string_value(value.text), self.span(value)))
        return keys, strings

    def node(self, element: PatternElement) -> NodeFact:
        lo, hi = self.tokens_between(element.start, element.end)
        body = lo + 1 + (1 if element.variable is not None else 0)
        labels = self.names_after_colons(body, hi - 1)
        keys, strings = self.map_entries(lo + 1, hi - 1)
        return NodeFact(element.variable, tuple(labels), tuple(strings), tuple(keys),
                        element.start, element.end)  # fmt: skip

    def relationship(
        self, element: PatternElement, left: NodeFact, right: NodeFact
    ) -> RelationshipFact:
        types: list[tuple[str, Span]] = []
        keys: list[tuple[str, Span]] = []
        if element.insert_at is not None:
            lo, hi = self.tokens_between(element.start, element.end)
            open_at = next(i for i in range(lo, hi) if self.tokens[i].is_punct("["))
            body = open_at + 1 + (1 if element.variable is not None else 0)
            types = self.names_after_colons(body, hi)
            keys, _ = self.map_entries(body, hi)
        if element.right and not element.left:
            direction: Direction = "out"
        elif element.left and not element.right:
            direction = "in"
        else:
            direction = "both"
        return RelationshipFact(element.variable, tuple(types), direction, left, right,
                                element.var_length, element, tuple(keys))  # fmt: skip


def _pattern_facts(reader: _Reader, clause: MatchClause, facts: BranchFacts) -> None:
    for part in clause.parts:
        elements = part.elements
        nodes: dict[int, NodeFact] = {
            k: reader.node(e) for k, e in enumerate(elements) if e.kind == "node"
        }
        facts.nodes.extend(nodes.values())
        for k, element in enumerate(elements):
            if element.kind != "relationship":
                continue
            left, right = nodes.get(k - 1), nodes.get(k + 1)
            if left is None or right is None:
                continue
            facts.relationships.append(reader.relationship(element, left, right))


_COMPARISON_OPERATORS = ("=", "<>")
_WORD_OPERATORS = {("STARTS", "WITH"): "STARTS WITH", ("ENDS", "WITH"): "ENDS WITH"}


def _operator_after(tokens: list[Token], i: int) -> tuple[str, int] | None:
    """The comparison operator starting at token ``i`` and the index after it."""
    if i >= len(tokens):
        return None
    tok = tokens[i]
    if tok.is_punct("=", "<>", "=~"):
        return tok.text, i + 1
    if tok.is_punct("!") and i + 1 < len(tokens) and tokens[i + 1].is_punct("="):
        return "<>", i + 2
    if tok.is_name("IN", "CONTAINS"):
        return tok.upper, i + 1
    if i + 1 < len(tokens) and (tok.upper, tokens[i + 1].upper) in _WORD_OPERATORS:
        return _WORD_OPERATORS[(tok.upper, tokens[i + 1].upper)], i + 2
    return None


def _property_at(tokens: list[Token], i: int) -> tuple[str, str, int, int] | None:
    """``variable.key`` at token ``i``: (variable, key, key index, index after)."""
    if i + 2 >= len(tokens):
        return None
    a, dot, b = tokens[i], tokens[i + 1], tokens[i + 2]
    if not (_is_name(a) and dot.is_punct(".") and _is_name(b)):
        return None
    if i > 0 and tokens[i - 1].is_punct("."):
        return None
    j = i + 3
    while j + 1 < len(tokens) and tokens[j].is_punct(".") and _is_name(tokens[j + 1]):
        j += 2
    if j < len(tokens) and tokens[j].is_punct("("):
        return None  # a namespaced function such as date.truncate(...)
    if a.kind is TokenKind.NAME and a.upper in KEYWORDS:
        return None
    return _unquote(a), _unquote(b), i + 2, i + 3


def _folded_property_at(
    tokens: list[Token], i: int
) -> tuple[str, str, Literal["lower", "upper"], int] | None:
    """``toLower(v.key)`` / ``toUpper(v.key)`` at token ``i``: (variable, key, fold, index after)."""
    if not (tokens[i].kind is TokenKind.NAME and tokens[i].text.lower() in ("tolower", "toupper")):
        return None
    if i + 5 >= len(tokens) or not tokens[i + 1].is_punct("("):
        return None
    prop = _property_at(tokens, i + 2)
    if prop is None or not tokens[prop[3]].is_punct(")"):
        return None
    fold: Literal["lower", "upper"] = "lower" if tokens[i].text.lower() == "tolower" else "upper"
    return prop[0], prop[1], fold, prop[3] + 1


def _strings_in_list(reader: _Reader, i: int) -> list[Token] | None:
    """The string tokens of a list literal ``['a', 'b']`` starting at token ``i``."""
    tokens = reader.tokens
    if i >= len(tokens) or not tokens[i].is_punct("["):
        return None
    found: list[Token] = []
    j = i + 1
    while j < len(tokens):
        tok = tokens[j]
        if tok.kind is TokenKind.STRING:
            found.append(tok)
        elif tok.is_punct("]"):
            return found
        elif not tok.is_punct(","):
            return None
        j += 1
    return None


def _expression_facts(reader: _Reader, lo: int, hi: int, facts: BranchFacts) -> None:
    """Property accesses and string comparisons in tokens ``[lo, hi)``."""
    tokens = reader.tokens
    i = lo
    while i < hi:
        folded = _folded_property_at(tokens, i)
        prop = _property_at(tokens, i)
        if folded is not None:
            variable, key, fold, after = folded
            key_tok = tokens[i + 4]
        elif prop is not None:
            variable, key, key_index, after = prop
            fold = None
            key_tok = tokens[key_index]
        else:
            _reversed_comparison(reader, i, hi, facts)
            i += 1
            continue
        facts.accesses.append(PropertyAccess(variable, key, reader.span(key_tok)))
        operator = _operator_after(tokens, after)
        if operator is not None:
            op, value_at = operator
            if op == "IN":
                for tok in _strings_in_list(reader, value_at) or []:
                    facts.comparisons.append(StringComparison(
                        variable, key, "IN", string_value(tok.text), reader.span(tok), fold))  # fmt: skip
            elif value_at < hi and tokens[value_at].kind is TokenKind.STRING:
                tok = tokens[value_at]
                facts.comparisons.append(StringComparison(
                    variable, key, op, string_value(tok.text), reader.span(tok), fold))  # fmt: skip
        i = after


def _reversed_comparison(reader: _Reader, i: int, hi: int, facts: BranchFacts) -> None:
    """``'value' = v.key`` written literal first."""
    tokens = reader.tokens
    tok = tokens[i]
    if tok.kind is not TokenKind.STRING or i + 2 >= hi or not tokens[i + 1].is_punct("="):
        return
    prop = _property_at(tokens, i + 2)
    if prop is None:
        return
    facts.comparisons.append(
        StringComparison(prop[0], prop[1], "=", string_value(tok.text), reader.span(tok))
    )


def _clause_tokens(reader: _Reader, start: int, end: int) -> tuple[int, int]:
    return reader.tokens_between(start, end)


class _Scope:
    """Variables in scope along one branch, for the undefined-variable check.

    The check runs only over constructs it understands; any other construct
    (CALL subqueries, FOREACH, existential subqueries, map projections) switches
    it off for the branch so that it never reports a variable the engine accepts.
    """

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.defined: set[str] = set()
        self.enabled = True
        self.undefined: list[Span] = []
        self.locals = self._local_names()

    def _local_names(self) -> set[str]:
        """Names that list comprehensions, quantifiers and reduce() introduce."""
        tokens = self.reader.tokens
        found: set[str] = set()
        for i in range(1, len(tokens) - 1):
            if (
                _is_name(tokens[i])
                and tokens[i + 1].is_name("IN")
                and tokens[i - 1].is_punct("[", "(", ",")
            ):
                found.add(_unquote(tokens[i]))
            if (
                _is_name(tokens[i])
                and tokens[i + 1].is_punct("=")
                and tokens[i - 1].is_punct("(")
                and i >= 2
                and tokens[i - 2].text.lower() == "reduce"
            ):
                found.add(_unquote(tokens[i]))
        return found

    def read(self, lo: int, hi: int, visible: set[str]) -> None:
        """Record reads of undefined variables in tokens ``[lo, hi)``."""
        if not self.enabled:
            return
        tokens = self.reader.tokens
        depth_brace = 0
        for i in range(lo, hi):
            tok = tokens[i]
            if tok.is_punct("{"):
                depth_brace += 1
                continue
            if tok.is_punct("}"):
                depth_brace -= 1
                continue
            if not _is_name(tok):
                continue
            if tok.kind is TokenKind.NAME and tok.upper in KEYWORDS:
                continue
            prev = tokens[i - 1] if i > 0 else None
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if prev is not None and (prev.is_punct(".", ":", "|", "$") or prev.is_name("AS")):
                continue
            if nxt is not None and nxt.is_punct("(", ":"):
                continue
            if (
                nxt is not None
                and nxt.is_punct(".")
                and i + 3 < len(tokens)
                and tokens[i + 3].is_punct("(")
            ):
                continue
            if (
                prev is not None
                and prev.is_punct("(")
                and nxt is not None
                and nxt.is_punct(")", "{", ":")
            ):
                continue  # a node pattern inside an expression binds or reuses a variable
            if depth_brace > 0 and nxt is not None and nxt.is_punct(":"):
                continue
            name = _unquote(tok)
            if name in visible or name in self.locals:
                continue
            self.undefined.append(self.reader.span(tok))


def _pattern_variables(clause: MatchClause) -> set[str]:
    names: set[str] = set()
    for part in clause.parts:
        if part.path_variable:
            names.add(part.path_variable)
        names.update(e.variable for e in part.elements if e.variable)
    return names


_UNSUPPORTED_SCOPE = frozenset({"CALL", "FOREACH", "LOAD", "USE"})


def _branch_facts(reader: _Reader, clauses: tuple[object, ...]) -> BranchFacts:
    facts = BranchFacts()
    scope = _Scope(reader)
    tokens = reader.tokens
    for clause in clauses:
        if isinstance(clause, MatchClause):
            _pattern_facts(reader, clause, facts)
            scope.defined |= _pattern_variables(clause)
            lo, hi = _clause_tokens(reader, clause.start, clause.end)
            where = next((i for i in range(lo, hi) if tokens[i].is_name("WHERE")), None)
            if where is not None:
                _expression_facts(reader, where + 1, hi, facts)
                scope.read(where + 1, hi, scope.defined)
            for part in clause.parts:
                plo, phi = _clause_tokens(reader, part.start, part.end)
                _expression_facts(reader, plo, phi, facts)
        elif isinstance(clause, Projection):
            lo, hi = _clause_tokens(reader, clause.start, clause.end)
            _expression_facts(reader, lo + 1, hi, facts)
            for item in clause.items:
                if item.alias is not None and item.alias != item.normalized:
                    facts.rebound.add(item.alias)
            ilo, ihi = _clause_tokens(reader, clause.start, clause.items_end)
            scope.read(ilo + 1, ihi, scope.defined)
            before = set(scope.defined)
            if clause.kind == "WITH":
                after = set(clause.output_names) | (before if clause.star else set())
                scope.defined = after
            # ORDER BY, SKIP, LIMIT and WITH's WHERE see the projected names and those before
            scope.read(ihi, hi, before | set(clause.output_names) | scope.defined)
        elif isinstance(clause, OtherClause):
            lo, hi = _clause_tokens(reader, clause.start, clause.end)
            if clause.keyword in _UNSUPPORTED_SCOPE:
                scope.enabled = False
                if clause.keyword == "CALL":
                    _call_yields(reader, lo, hi, scope)
                continue
            if clause.keyword == "UNWIND":
                as_at = max((i for i in range(lo, hi) if tokens[i].is_name("AS")), default=None)
                if as_at is not None and as_at + 1 < hi:
                    _expression_facts(reader, lo + 1, as_at, facts)
                    scope.read(lo + 1, as_at, scope.defined)
                    name = _unquote(tokens[as_at + 1])
                    scope.defined.add(name)
                    facts.rebound.add(name)
            else:
                scope.enabled = False
    if any(
        tok.is_name("EXISTS", "COUNT", "COLLECT")
        and i + 1 < len(tokens)
        and tokens[i + 1].is_punct("{")
        for i, tok in enumerate(tokens)
    ):
        scope.enabled = False
    facts.undefined = scope.undefined if scope.enabled else []
    return facts


def _call_yields(reader: _Reader, lo: int, hi: int, scope: _Scope) -> None:
    tokens = reader.tokens
    yield_at = next((i for i in range(lo, hi) if tokens[i].is_name("YIELD")), None)
    if yield_at is None:
        return
    for i in range(yield_at + 1, hi):
        if _is_name(tokens[i]) and tokens[i].upper not in KEYWORDS:
            scope.defined.add(_unquote(tokens[i]))


def query_facts(query: str, *, tokens: list[Token] | None = None) -> QueryFacts:
    """Read the labels, types, directions, property accesses and compared literals of a query.

    Args:
        query: Cypher text.
        tokens: ``tokenize(query)``, when the caller has it already (a check
            tokenizes a query once).

    Returns:
        The facts, one :class:`BranchFacts` per UNION branch.

    Raises:
        CypherParseError: the query does not tokenize or parse; callers treat
            such a query as having no verdict.
    """
    reader = _Reader(query, tokens)
    branches = []
    returns = []
    for part in reader.parsed.parts:
        branches.append(_branch_facts(reader, part.clauses))
        returns.append(
            sum(1 for c in part.clauses if isinstance(c, Projection) and c.kind == "RETURN")
        )
    return QueryFacts(query, tuple(reader.tokens), tuple(branches), tuple(returns))
