"""Read a Cypher data script (CREATE/MERGE/MATCH/SET statements) into a :class:`GraphData`.

The official CypherTurn graphs ship as ``data/graphs/<graph>/data.cypher``:
either one long statement of ``CREATE (h1:House {...})`` clauses whose
variables are reused by later ``CREATE (s1)-[:T {...}]->(h1)`` clauses, or
``;``-separated statements such as ``MERGE (t:Trader {name: '...'}) SET t.x = 1``
and ``MATCH (a:L {name: '...'}), (b:M {name: '...'}) CREATE (a)-[:T]->(b)``.

This module interprets exactly that data-definition subset, without a
database. The text is read by the shared tokenizer, :func:`cypherturn.cypher.tokenize`
(the one the read-only guard, the parser and the answer extractor use;
docs/design/architecture.md, "One Cypher tokenizer"), so
quotes, backslash escapes, comments and backquoted names are never confused with
syntax and a ``;`` ends a statement exactly where the tokenizer sees one. A small
interpreter then applies Cypher's semantics for the clauses it knows — variables
live for one statement, MATCH binds every matching node (rows multiply),
MERGE matches or creates, ``ON CREATE SET``/``ON MATCH SET`` apply
accordingly, null properties are not stored. Anything else (WHERE, WITH,
RETURN, DELETE, parameters, expressions other than literals and ``date()``)
is refused with a :class:`~cypherturn.errors.DatasetError` naming the line.

Released scripts are trusted input, and one of them re-labels nodes with a
statement outside that subset (``MATCH (a:L {...})-[:R]->(n) WHERE
size(labels(n))=0 SET n:Label, ...``). :func:`read_cypher_script` therefore
says, instead of refusing, which statements the engine itself must run:
:class:`ScriptPlan` (used by :func:`cypherturn.worlds.load_official_graph`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import string
from dataclasses import dataclass, field
from typing import Any

from cypherturn.cypher import TokenKind
from cypherturn.cypher import tokenize as cypher_tokenize
from cypherturn.errors import DatasetError
from cypherturn.graph import GraphData, NodeRecord, RelationshipRecord

__all__ = [
    "ScriptPlan",
    "Token",
    "parse_cypher_script",
    "read_cypher_script",
    "split_statements",
    "tokenize",
]

log = logging.getLogger(__name__)

# The punctuation of the data subset; any other operator the tokenizer knows is refused.
_PUNCTUATION = frozenset({"->", "<-", "+=", *"()[]{}:,;.=-<>*|+$"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token of a data script.

    Attributes:
        kind: ``name`` (a backquoted name without its backticks), ``string`` (decoded),
            ``number``, ``punct`` or ``end`` (after the last token, or a statement's ``;``).
        text: the source text; for strings and backquoted names, their decoded value.
        value: the Python value of a string or number literal, else the name or ``None``.
        line: 1-based line of the token's first character.
        start / end: the token's ``[start, end)`` offsets in the script.
    """

    kind: str
    text: str
    value: Any
    line: int
    start: int = 0
    end: int = 0


def tokenize(text: str, origin: str = "<script>", *, strict: bool = True) -> list[Token]:
    """Split a data script into tokens with :func:`cypherturn.cypher.tokenize`, checked for the subset.

    The shared tokenizer runs in its lenient mode, so that every malformed
    piece is found here and reported with its line rather than as an offset.

    Args:
        text: the script.
        origin: file name used in error messages.
        strict: refuse operators outside the data subset (``<>``, ``>=``, ...); when
            False they are kept as ``other`` tokens, which the interpreter refuses
            in the statement that holds them.

    Returns:
        The tokens, ending with one ``end`` token.

    Raises:
        DatasetError: an unterminated string, comment or backquoted name, a bad
            escape or number, or a character or operator that is not in the data
            subset; the message names the line.
    """
    tokens: list[Token] = []
    line, counted = 1, 0
    for shared in cypher_tokenize(text, lenient=True):
        start, end, kind, raw = shared.start, shared.end, shared.kind, shared.text
        line += text.count("\n", counted, start)
        counted = start
        # most frequent kinds first: this loop runs once per token of a whole graph
        if kind is TokenKind.PUNCT:
            if raw in _PUNCTUATION:
                tokens.append(Token("punct", raw, None, line, start, end))
            elif strict:
                raise DatasetError(f"{origin}:{line}: unexpected character {raw!r}")
            else:
                tokens.append(Token("other", raw, None, line, start, end))
        elif kind is TokenKind.NAME:
            tokens.append(Token("name", raw, raw, line, start, end))
        elif kind is TokenKind.STRING:
            value: Any = _string(raw, origin, line)
            tokens.append(Token("string", value, value, line, start, end))
        elif kind is TokenKind.NUMBER:
            tokens.append(Token("number", raw, _number(raw, origin, line), line, start, end))
        elif kind is TokenKind.QUOTED_NAME:
            body = raw[1:-1]
            if len(raw) < 2 or not raw.endswith("`") or "`" in body.replace("``", ""):
                raise DatasetError(f"{origin}:{line}: unterminated `name`")
            name = body.replace("``", "`")
            tokens.append(Token("name", name, name, line, start, end))
        else:
            # a parameter is kept, so that the interpreter names it: parameters are not data
            tokens.append(Token("punct", raw, None, line, start, end))
    tail = tokens[-1].end if tokens else 0
    opened = _unclosed_comment(text[tail:])
    if opened is not None:
        line += text.count("\n", counted, tail + opened)
        raise DatasetError(f"{origin}:{line}: unterminated /* comment")
    line += text.count("\n", counted)
    tokens.append(Token("end", "", None, line, len(text), len(text)))
    return tokens


def _unclosed_comment(gap: str) -> int | None:
    """Offset of a ``/*`` never closed in ``gap`` (text after the last token), or ``None``.

    The lenient tokenizer lets such a comment swallow the rest of the text; it can
    only be in this last gap, and it is the first ``/*`` outside a comment with no
    ``*/`` after it (a name appended after a point inside a comment is no token).
    """
    start = gap.find("/*")
    while start >= 0:
        outside = cypher_tokenize(gap[:start] + " x", lenient=True) != []
        if outside and "*/" not in gap[start + 2 :]:
            return start
        start = gap.find("/*", start + 1)
    return None


def _string(literal: str, origin: str, line: int) -> str:
    """The value of a string literal token (quotes included), its escapes decoded."""
    where = f"{origin}:{line}"
    quote = literal[0]
    out: list[str] = []
    i, n = 1, len(literal)
    while i < n:
        ch = literal[i]
        if ch == quote:
            if i != n - 1:
                raise DatasetError(f"{where}: unterminated string")
            return "".join(out)
        if ch == "\\":
            nxt = literal[i + 1 : i + 2]
            if nxt == "u":
                digits = literal[i + 2 : i + 6]
                if len(digits) != 4 or any(c not in string.hexdigits for c in digits):
                    raise DatasetError(f"{where}: bad escape \\u{digits} in string")
                out.append(chr(int(digits, 16)))
                i += 6
                continue
            if nxt not in _ESCAPES:
                raise DatasetError(f"{where}: bad escape \\{nxt} in string")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise DatasetError(f"{where}: unterminated string")


def _number(literal: str, origin: str, line: int) -> int | float:
    """The value of a number token: decimal, hex (``0x``) or octal (``0o``), ``_`` allowed."""
    try:
        if literal[:2] in ("0x", "0X", "0o", "0O"):
            return int(literal, 0)
        if "." in literal or "e" in literal or "E" in literal:
            return float(literal)
        return int(literal)
    except ValueError:
        raise DatasetError(f"{origin}:{line}: bad number {literal!r}") from None


def split_statements(tokens: list[Token]) -> list[list[Token]]:
    """The statements of a tokenized script: the tokens between ``;`` tokens, empty ones left out.

    Each statement ends with an ``end`` token: the ``;`` that closed it (its text
    kept, for messages) or the script's own ``end``.

    Args:
        tokens: :func:`tokenize` output (ending with its ``end`` token).

    Returns:
        The statements in source order.
    """
    statements: list[list[Token]] = []
    current: list[Token] = []
    for token in tokens:
        if token.kind == "end" or (token.kind == "punct" and token.text == ";"):
            if current:
                closer = Token("end", token.text, None, token.line, token.start, token.end)
                statements.append([*current, closer])
            current = []
        else:
            current.append(token)
    return statements


# ---------------------------------------------------------------------------- interpreter


@dataclass(slots=True)
class _NodePattern:
    var: str | None
    labels: list[str]
    props: dict[str, Any]


@dataclass(slots=True)
class _RelPattern:
    var: str | None
    type: str | None
    props: dict[str, Any]
    outgoing: bool  # True for -[...]->, False for <-[...]-


@dataclass(slots=True)
class _Path:
    nodes: list[_NodePattern]
    rels: list[_RelPattern] = field(default_factory=list)


class _Store:
    """Nodes and relationships created so far, with the lookups MATCH and MERGE need."""

    def __init__(self) -> None:
        self.labels: list[list[str]] = []
        self.props: list[dict[str, Any]] = []
        self.rels: list[tuple[int, int, str, dict[str, Any]]] = []
        self._by_label: dict[str, list[int]] = {}
        self._by_value: dict[tuple[str, str, Any], list[int]] = {}
        self._rel_index: dict[tuple[int, int, str], list[int]] = {}

    def create_node(self, labels: list[str], props: dict[str, Any]) -> int:
        """Add a node; null properties are not stored. Returns its key."""
        key = len(self.labels)
        self.labels.append(list(labels))
        self.props.append({})
        for label in labels:
            self._by_label.setdefault(label, []).append(key)
        for name, value in props.items():
            self.set_property(key, name, value)
        return key

    def set_property(self, key: int, name: str, value: Any) -> None:
        """Set (or, with ``None``, remove) one property, keeping the value index current."""
        old = self.props[key].pop(name, None)
        if old is not None:
            for label in self.labels[key]:
                self._by_value[(label, name, _hashable(old))].remove(key)
        if value is not None:
            self.props[key][name] = value
            for label in self.labels[key]:
                self._by_value.setdefault((label, name, _hashable(value)), []).append(key)

    def add_label(self, key: int, label: str) -> None:
        """Give node ``key`` one more label (``SET v:Label``)."""
        if label in self.labels[key]:
            return
        self.labels[key].append(label)
        self._by_label.setdefault(label, []).append(key)
        for name, value in self.props[key].items():
            self._by_value.setdefault((label, name, _hashable(value)), []).append(key)

    def find_nodes(self, labels: list[str], props: dict[str, Any]) -> list[int]:
        """Keys of the nodes carrying all ``labels`` and equal to all ``props``, in creation order."""
        if labels and props:
            name, value = next(iter(props.items()))
            candidates = self._by_value.get((labels[0], name, _hashable(value)), [])
        elif labels:
            candidates = self._by_label.get(labels[0], [])
        else:
            candidates = range(len(self.labels))  # type: ignore[assignment]
        return [
            k
            for k in candidates
            if all(label in self.labels[k] for label in labels)
            and all(self.props[k].get(name) == value for name, value in props.items())
        ]

    def create_rel(self, start: int, end: int, rel_type: str, props: dict[str, Any]) -> None:
        """Add a relationship; null properties are not stored."""
        self._rel_index.setdefault((start, end, rel_type), []).append(len(self.rels))
        self.rels.append((start, end, rel_type, {k: v for k, v in props.items() if v is not None}))

    def has_rel(self, start: int, end: int, rel_type: str, props: dict[str, Any]) -> bool:
        """True when such a relationship with at least these properties exists (for MERGE)."""
        return any(
            all(self.rels[i][3].get(k) == v for k, v in props.items())
            for i in self._rel_index.get((start, end, rel_type), [])
        )


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class _Interpreter:
    def __init__(self, origin: str) -> None:
        self.tokens: list[Token] = []
        self.pos = 0
        self.origin = origin
        self.store = _Store()
        self.unmatched = 0

    # -- token helpers
    def peek(self) -> Token:
        return self.tokens[self.pos]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        # the statement's end token is never passed, so a truncated clause reads it again
        if token.kind != "end":
            self.pos += 1
        return token

    def error(self, message: str, token: Token | None = None) -> DatasetError:
        line = (token or self.peek()).line
        return DatasetError(f"{self.origin}:{line}: {message}")

    def at_keyword(self, *words: str) -> bool:
        token = self.peek()
        return token.kind == "name" and token.text.upper() in words

    def at(self, text: str) -> bool:
        token = self.peek()
        return token.kind == "punct" and token.text == text

    def expect(self, text: str) -> Token:
        token = self.next()
        if token.kind != "punct" or token.text != text:
            raise self.error(f"expected {text!r}, found {token.text or 'end of script'!r}", token)
        return token

    def name(self) -> str:
        token = self.next()
        if token.kind != "name":
            raise self.error(f"expected a name, found {token.text or 'end of script'!r}", token)
        return token.text

    # -- statements and clauses
    def run(self, statements: list[list[Token]]) -> None:
        """Interpret the statements of the script (:func:`split_statements`), in order."""
        for statement in statements:
            self.tokens, self.pos = statement, 0
            self.statement()

    def statement(self) -> None:
        """One statement: clauses over a table of variable bindings, until its ``end`` token."""
        rows: list[dict[str, int]] = [{}]
        while self.peek().kind != "end":
            token = self.next()
            keyword = token.text.upper() if token.kind == "name" else token.text
            if keyword == "MATCH":
                rows = self.match(rows, token)
            elif keyword == "CREATE":
                for path in self.paths():
                    for row in rows:
                        self.create(path, row)
            elif keyword == "MERGE":
                rows = self.merge(rows)
            elif keyword == "SET":
                items = self.set_items()
                for row in rows:
                    self.apply_set(items, row)
            else:
                raise self.error(
                    f"unsupported clause {token.text!r} (this reader knows "
                    "CREATE, MERGE, MATCH and SET)",
                    token,
                )

    def match(self, rows: list[dict[str, int]], token: Token) -> list[dict[str, int]]:
        """MATCH node patterns: every matching node extends every row."""
        paths = self.paths()
        if self.at_keyword("WHERE"):
            raise self.error("WHERE is not supported; put the properties in the pattern")
        for path in paths:
            if path.rels:
                raise self.error("MATCH of relationship patterns is not supported", token)
            pattern = path.nodes[0]
            expanded = []
            for row in rows:
                if pattern.var is not None and pattern.var in row:
                    expanded.append(row)
                    continue
                for key in self.store.find_nodes(pattern.labels, pattern.props):
                    expanded.append({**row, pattern.var: key} if pattern.var else row)
            rows = expanded
        if not rows:
            self.unmatched += 1
            log.warning(
                "%s:%d: MATCH found no node; the statement creates nothing", self.origin, token.line
            )
        return rows

    def merge(self, rows: list[dict[str, int]]) -> list[dict[str, int]]:
        """MERGE one pattern per row, then its ON CREATE SET or ON MATCH SET items."""
        path = self.path()
        on_create: list[tuple[Any, ...]] = []
        on_match: list[tuple[Any, ...]] = []
        while self.at_keyword("ON"):
            self.next()
            which = self.name().upper()
            if not self.at_keyword("SET") or which not in ("CREATE", "MATCH"):
                raise self.error("expected ON CREATE SET or ON MATCH SET")
            self.next()
            (on_create if which == "CREATE" else on_match).extend(self.set_items())
        result = []
        for row in rows:
            row = dict(row)
            created = self.merge_path(path, row)
            self.apply_set(on_create if created else on_match, row)
            result.append(row)
        return result

    def merge_path(self, path: _Path, row: dict[str, int]) -> bool:
        """Match or create ``path`` for one row; True when something was created."""
        if not path.rels:
            pattern = path.nodes[0]
            if pattern.var is not None and pattern.var in row:
                return False
            found = self.store.find_nodes(pattern.labels, pattern.props)
            if found:
                if pattern.var is not None:
                    row[pattern.var] = found[0]
                return False
            key = self.store.create_node(pattern.labels, pattern.props)
            if pattern.var is not None:
                row[pattern.var] = key
            return True
        created = False
        ends = [self.bind_or_merge(node, row) for node in path.nodes]
        for rel, (left, right) in zip(path.rels, itertools.pairwise(ends), strict=True):
            start, end = (left, right) if rel.outgoing else (right, left)
            if rel.type is None:
                raise self.error("a MERGE relationship needs a type")
            if not self.store.has_rel(start, end, rel.type, rel.props):
                self.store.create_rel(start, end, rel.type, rel.props)
                created = True
        return created

    def bind_or_merge(self, pattern: _NodePattern, row: dict[str, int]) -> int:
        if pattern.var is not None and pattern.var in row:
            return row[pattern.var]
        self.merge_path(_Path([pattern]), row)
        if pattern.var is None:
            return self.store.find_nodes(pattern.labels, pattern.props)[0]
        return row[pattern.var]

    def create(self, path: _Path, row: dict[str, int]) -> None:
        """CREATE ``path`` for one row, binding its new variables."""
        keys = []
        for pattern in path.nodes:
            if pattern.var is not None and pattern.var in row:
                if pattern.labels or pattern.props:
                    raise self.error(
                        f"variable {pattern.var!r} is already bound; CREATE cannot "
                        "redeclare it with labels or properties"
                    )
                keys.append(row[pattern.var])
                continue
            key = self.store.create_node(pattern.labels, pattern.props)
            if pattern.var is not None:
                row[pattern.var] = key
            keys.append(key)
        for rel, (left, right) in zip(path.rels, itertools.pairwise(keys), strict=True):
            if rel.type is None:
                raise self.error("a created relationship needs exactly one type")
            start, end = (left, right) if rel.outgoing else (right, left)
            self.store.create_rel(start, end, rel.type, rel.props)

    def set_items(self) -> list[tuple[Any, ...]]:
        """Parse ``v.k = value``, ``v += {...}`` and ``v:Label`` items separated by commas."""
        items: list[tuple[Any, ...]] = []
        while True:
            var = self.name()
            if self.at("."):
                self.next()
                prop = self.name()
                self.expect("=")
                items.append(("prop", var, prop, self.value()))
            elif self.at("+="):
                self.next()
                items.append(("merge", var, self.value()))
            elif self.at(":"):
                while self.at(":"):
                    self.next()
                    items.append(("label", var, self.name()))
            else:
                raise self.error("expected v.key = value, v += {...} or v:Label after SET")
            if not self.at(","):
                return items
            self.next()

    def apply_set(self, items: list[tuple[Any, ...]], row: dict[str, int]) -> None:
        """Apply parsed SET items to the nodes bound in ``row``."""
        for item in items:
            key = row.get(item[1])
            if key is None:
                raise self.error(f"SET on unbound variable {item[1]!r}")
            if item[0] == "prop":
                self.store.set_property(key, item[2], item[3])
            elif item[0] == "merge":
                if not isinstance(item[2], dict):
                    raise self.error("+= needs a map")
                for name, value in item[2].items():
                    self.store.set_property(key, name, value)
            else:
                self.store.add_label(key, item[2])

    # -- patterns and values
    def paths(self) -> list[_Path]:
        paths = [self.path()]
        while self.at(","):
            self.next()
            paths.append(self.path())
        return paths

    def path(self) -> _Path:
        path = _Path([self.node()])
        while self.at("-") or self.at("<-"):
            path.rels.append(self.relationship())
            path.nodes.append(self.node())
        return path

    def node(self) -> _NodePattern:
        self.expect("(")
        var = self.next().text if self.peek().kind == "name" else None
        labels = []
        while self.at(":"):
            self.next()
            labels.append(self.name())
        props = self.map_literal() if self.at("{") else {}
        self.expect(")")
        return _NodePattern(var, labels, props)

    def relationship(self) -> _RelPattern:
        incoming = self.next().text == "<-"
        self.expect("[")
        var = self.next().text if self.peek().kind == "name" else None
        rel_type = None
        if self.at(":"):
            self.next()
            rel_type = self.name()
            if self.at("|"):
                raise self.error("alternative relationship types cannot be created")
        props = self.map_literal() if self.at("{") else {}
        self.expect("]")
        if incoming:
            self.expect("-")
        else:
            closing = self.next()
            if closing.text != "->":
                raise self.error("relationships must be directed (-[...]-> or <-[...]-)", closing)
        return _RelPattern(var, rel_type, props, outgoing=not incoming)

    def map_literal(self) -> dict[str, Any]:
        self.expect("{")
        values: dict[str, Any] = {}
        while not self.at("}"):
            key = self.name()
            self.expect(":")
            values[key] = self.value()
            if not self.at(","):
                break
            self.next()
        self.expect("}")
        return values

    def value(self) -> Any:
        """A literal: string, number, boolean, null, list, map or ``date('...')``."""
        token = self.next()
        if token.kind in ("string", "number"):
            return token.value
        if token.kind == "punct" and token.text == "-":
            number = self.next()
            if number.kind != "number":
                raise self.error("expected a number after '-'", number)
            return -number.value
        if token.kind == "punct" and token.text == "[":
            items = []
            while not self.at("]"):
                items.append(self.value())
                if not self.at(","):
                    break
                self.next()
            self.expect("]")
            return items
        if token.kind == "punct" and token.text == "{":
            self.pos -= 1
            return self.map_literal()
        if token.kind == "name":
            word = token.text.lower()
            if word in ("true", "false"):
                return word == "true"
            if word == "null":
                return None
            if word == "date" and self.at("("):
                self.next()
                text = self.next()
                self.expect(")")
                try:
                    return dt.date.fromisoformat(str(text.value))
                except ValueError as exc:
                    raise self.error(f"bad date literal {text.text!r}", text) from exc
        raise self.error(f"unsupported value {token.text!r} (literals and date('...') only)", token)


def _graph_data(interpreter: _Interpreter, name: str, origin: str) -> GraphData:
    store = interpreter.store
    nodes = [
        NodeRecord(key, tuple(labels), props)
        for key, (labels, props) in enumerate(zip(store.labels, store.props, strict=True))
    ]
    for node in nodes:
        if not node.labels:
            raise DatasetError(f"{origin}: node {node.key} {node.properties} has no label")
    relationships = [RelationshipRecord(s, e, t, p) for s, e, t, p in store.rels]
    if interpreter.unmatched:
        log.warning("%s: %d statements matched no node", origin, interpreter.unmatched)
    return GraphData(name=name, nodes=nodes, relationships=relationships, source=origin)


def parse_cypher_script(text: str, name: str, origin: str = "<script>") -> GraphData:
    """Interpret a Cypher data script into a graph named ``name``.

    Args:
        text: the script (CREATE / MERGE / MATCH / SET statements, ``;``-separated or not).
        name: the graph name of the result.
        origin: file name for messages and provenance.

    Returns:
        The nodes (keys in creation order, labels in the order written) and
        relationships the script creates; no indexes.

    Raises:
        DatasetError: a syntax error or an unsupported construct, with its line.
    """
    interpreter = _Interpreter(origin)
    interpreter.run(split_statements(tokenize(text, origin)))
    return _graph_data(interpreter, name, origin)


@dataclass(frozen=True, slots=True)
class ScriptPlan:
    """How to load a trusted data script: by this reader, or statement by statement on the engine.

    Attributes:
        data: the whole graph, when the reader interprets every statement; ``None``
            when some statement is outside the reader's subset.
        statements: every statement's text, in order (what the engine runs when
            ``data`` is ``None``).
        lines: the 1-based line each statement starts on.
        reason: why the reader could not interpret the script (``""`` when it could).
    """

    data: GraphData | None
    statements: tuple[str, ...]
    lines: tuple[int, ...]
    reason: str = ""


def read_cypher_script(text: str, name: str, origin: str = "<script>") -> ScriptPlan:
    """Read a trusted data script; say whether the engine must run it (as the release's loader does).

    The reader interprets the script when it can (so the result can be checked
    against the schema file before anything is written). When a statement is
    outside its subset (a WHERE, an expression, an operator it does not know),
    the engine must run the script itself, every statement in order, since later
    statements can match what that one wrote.

    Args:
        text: the script.
        name: the graph name of the result.
        origin: file name for messages and provenance.

    Returns:
        The :class:`ScriptPlan`.

    Raises:
        DatasetError: the script cannot be tokenized (an unterminated string,
            comment or backquoted name, a bad escape or number).
    """
    statements = split_statements(tokenize(text, origin, strict=False))
    texts = tuple(text[s[0].start : s[-2].end] for s in statements)
    lines = tuple(s[0].line for s in statements)
    interpreter = _Interpreter(origin)
    try:
        interpreter.run(statements)
        data = _graph_data(interpreter, name, origin)
    except DatasetError as exc:
        return ScriptPlan(None, texts, lines, str(exc))
    return ScriptPlan(data, texts, lines)
