"""Read a Cypher data script (CREATE/MERGE/MATCH/SET statements) into a :class:`GraphData`.

The official CypherTurn graphs ship as ``data/graphs/<graph>/data.cypher``:
either one long statement of ``CREATE (h1:House {...})`` clauses whose
variables are reused by later ``CREATE (s1)-[:T {...}]->(h1)`` clauses, or
``;``-separated statements such as ``MERGE (t:Trader {name: '...'}) SET t.x = 1``
and ``MATCH (a:L {name: '...'}), (b:M {name: '...'}) CREATE (a)-[:T]->(b)``.

This module interprets exactly that data-definition subset, without a
database: a tokenizer that respects string literals (quotes, backslash
escapes, comments and backquoted names are never confused with syntax), and a
small interpreter with Cypher's semantics for the clauses it knows — variables
live for one statement, MATCH binds every matching node (rows multiply),
MERGE matches or creates, ``ON CREATE SET``/``ON MATCH SET`` apply
accordingly, null properties are not stored. Anything else (WHERE, WITH,
RETURN, DELETE, parameters, expressions other than literals and ``date()``)
is refused with a :class:`~cypherturn.errors.DatasetError` naming the line.
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphData, NodeRecord, RelationshipRecord

__all__ = ["parse_cypher_script", "tokenize"]

log = logging.getLogger(__name__)

_PUNCT2 = ("->", "<-", "+=")
_PUNCT1 = "()[]{}:,;.=-<>*|+$"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: ``kind`` is ``name``, ``string``, ``number``, ``punct`` or ``end``."""

    kind: str
    text: str
    value: Any
    line: int


def tokenize(text: str, origin: str = "<script>") -> list[Token]:
    """Split Cypher text into tokens, skipping whitespace and ``//``/``/* */`` comments.

    Args:
        text: the script.
        origin: file name used in error messages.

    Returns:
        The tokens, ending with one ``end`` token.

    Raises:
        DatasetError: an unterminated string, comment or backquoted name, or a
            character that is not Cypher syntax; the message names the line.
    """
    tokens: list[Token] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise DatasetError(f"{origin}:{line}: unterminated /* comment")
            line += text.count("\n", i, end)
            i = end + 2
        elif ch in "'\"":
            value, i, lines = _string(text, i, origin, line)
            tokens.append(Token("string", value, value, line))
            line += lines
        elif ch == "`":
            end = i + 1
            parts = []
            while True:
                close = text.find("`", end)
                if close < 0:
                    raise DatasetError(f"{origin}:{line}: unterminated `name`")
                parts.append(text[end:close])
                if text.startswith("``", close):
                    parts.append("`")
                    end = close + 2
                    continue
                break
            name = "".join(parts)
            tokens.append(Token("name", name, name, line))
            i = close + 1
        elif ch.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            is_float = j + 1 < n and text[j] == "." and text[j + 1].isdigit()
            if is_float:
                j += 1
                while j < n and text[j].isdigit():
                    j += 1
            if (
                j < n
                and text[j] in "eE"
                and (
                    text[j + 1 : j + 2].isdigit()
                    or (text[j + 1 : j + 2] in "+-" and text[j + 2 : j + 3].isdigit())
                )
            ):
                is_float = True
                j += 2
                while j < n and text[j].isdigit():
                    j += 1
            literal = text[i:j]
            tokens.append(
                Token("number", literal, float(literal) if is_float else int(literal), line)
            )
            i = j
        elif ch.isalpha() or ch == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(Token("name", text[i:j], text[i:j], line))
            i = j
        elif text[i : i + 2] in _PUNCT2:
            tokens.append(Token("punct", text[i : i + 2], None, line))
            i += 2
        elif ch in _PUNCT1:
            tokens.append(Token("punct", ch, None, line))
            i += 1
        else:
            raise DatasetError(f"{origin}:{line}: unexpected character {ch!r}")
    tokens.append(Token("end", "", None, line))
    return tokens


def _string(text: str, start: int, origin: str, line: int) -> tuple[str, int, int]:
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1, text.count("\n", start, i)
        if ch == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt == "u" and len(text) >= i + 6:
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            if nxt not in _ESCAPES:
                raise DatasetError(f"{origin}:{line}: bad escape \\{nxt} in string")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise DatasetError(f"{origin}:{line}: unterminated string")


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
    def __init__(self, tokens: list[Token], origin: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.origin = origin
        self.store = _Store()
        self.unmatched = 0

    # -- token helpers
    def peek(self) -> Token:
        return self.tokens[self.pos]

    def next(self) -> Token:
        token = self.tokens[self.pos]
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
    def run(self) -> None:
        """Interpret every statement of the script."""
        while self.peek().kind != "end":
            if self.at(";"):
                self.next()
                continue
            self.statement()

    def statement(self) -> None:
        """One statement: clauses over a table of variable bindings, until ``;`` or the end."""
        rows: list[dict[str, int]] = [{}]
        while not (self.at(";") or self.peek().kind == "end"):
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
    interpreter = _Interpreter(tokenize(text, origin), origin)
    interpreter.run()
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
