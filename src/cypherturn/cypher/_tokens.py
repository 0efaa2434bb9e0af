"""A Cypher tokenizer that keeps every token's source offsets.

The provenance rewrite (PSJS, CypherBench §4) and the ORDER BY decision for EX
(CypherTurn §3.2) need to know where clauses and patterns start and end in the
original text, so that the rewrite can splice text into the query without ever
re-printing it. The tokenizer therefore works on offsets: it respects string
literals (single and double quoted, backslash escapes), backtick-quoted names
(with doubled backticks), ``//`` and ``/* */`` comments and parameters, and
leaves whitespace and comments out of the token stream.

Why not a library: graphglot (the maintained openCypher/GQL parser on PyPI) was
evaluated and rejected for this use; see docs/design/psjs-rewrite.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from cypherturn.errors import CypherParseError

__all__ = ["Token", "TokenKind", "tokenize"]


class TokenKind(Enum):
    """Lexical category of a :class:`Token`."""

    NAME = "name"
    """An unquoted identifier or keyword (``MATCH``, ``n``, ``count``)."""
    QUOTED_NAME = "quoted_name"
    """A backtick-quoted identifier; ``text`` keeps the backticks."""
    STRING = "string"
    """A string literal; ``text`` keeps the quotes and escapes."""
    NUMBER = "number"
    """An integer or float literal (decimal, hex, octal, exponent)."""
    PARAMETER = "parameter"
    """A query parameter such as ``$name`` or ``$0``."""
    PUNCT = "punct"
    """An operator or delimiter (``(``, ``->``, ``<=``, ``..``, ``=~``)."""


# Longest first so that "<>" is not read as "<" then ">".
_PUNCTUATION = (
    "<>", "<=", ">=", "=~", "->", "<-", "..", "+=",
    "(", ")", "[", "]", "{", "}", ",", ".", ":", ";", "|", "=",
    "<", ">", "+", "-", "*", "/", "%", "^", "!",
)  # fmt: skip

OPENERS = {"(": ")", "[": "]", "{": "}"}
"""Opening delimiters and their closers; nesting depth is counted over these."""


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a Cypher query.

    Attributes:
        kind: lexical category.
        text: the exact source text of the token.
        start: offset of the first character in the query.
        end: offset one past the last character (``query[start:end] == text``).
    """

    kind: TokenKind
    text: str
    start: int
    end: int

    @property
    def upper(self) -> str:
        """The text upper-cased (keyword comparison is case-insensitive in Cypher)."""
        return self.text.upper()

    def is_name(self, *words: str) -> bool:
        """True when this is an unquoted name equal, case-insensitively, to one of ``words``."""
        return self.kind is TokenKind.NAME and self.text.upper() in words

    def is_punct(self, *symbols: str) -> bool:
        """True when this is punctuation equal to one of ``symbols``."""
        return self.kind is TokenKind.PUNCT and self.text in symbols


def _skip_space_and_comments(query: str, i: int) -> int:
    n = len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif query.startswith("//", i):
            newline = query.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif query.startswith("/*", i):
            close = query.find("*/", i + 2)
            if close < 0:
                raise CypherParseError(f"unterminated comment starting at offset {i}")
            i = close + 2
        else:
            break
    return i


def _read_string(query: str, i: int) -> int:
    quote = query[i]
    j = i + 1
    n = len(query)
    while j < n:
        ch = query[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote:
            return j + 1
        j += 1
    raise CypherParseError(f"unterminated string literal starting at offset {i}")


def _read_backticks(query: str, i: int) -> int:
    j = i + 1
    n = len(query)
    while j < n:
        if query[j] == "`":
            if j + 1 < n and query[j + 1] == "`":
                j += 2
                continue
            return j + 1
        j += 1
    raise CypherParseError(f"unterminated backtick-quoted name starting at offset {i}")


def _read_number(query: str, i: int) -> int:
    n = len(query)
    j = i
    if query.startswith(("0x", "0X", "0o", "0O"), i):
        j = i + 2
        while j < n and (query[j].isalnum() or query[j] == "_"):
            j += 1
        return j
    while j < n and (query[j].isdigit() or query[j] == "_"):
        j += 1
    # A fraction needs a digit after the dot: `1..3` is a range, not `1.` then `.3`.
    if j + 1 < n and query[j] == "." and query[j + 1].isdigit():
        j += 1
        while j < n and (query[j].isdigit() or query[j] == "_"):
            j += 1
    if j < n and query[j] in "eE":
        k = j + 1
        if k < n and query[k] in "+-":
            k += 1
        if k < n and query[k].isdigit():
            j = k
            while j < n and query[j].isdigit():
                j += 1
    return j


def _read_name(query: str, i: int) -> int:
    n = len(query)
    j = i
    while j < n and (query[j].isalnum() or query[j] == "_"):
        j += 1
    return j


def tokenize(query: str) -> list[Token]:
    """Split a Cypher query into tokens, dropping whitespace and comments.

    Args:
        query: the Cypher text.

    Returns:
        The tokens in source order; each carries its ``[start, end)`` offsets.

    Raises:
        CypherParseError: an unterminated string, comment or backtick-quoted
            name, or a character that cannot start any Cypher token.
    """
    tokens: list[Token] = []
    n = len(query)
    i = _skip_space_and_comments(query, 0)
    while i < n:
        ch = query[i]
        if ch in "'\"":
            j, kind = _read_string(query, i), TokenKind.STRING
        elif ch == "`":
            j, kind = _read_backticks(query, i), TokenKind.QUOTED_NAME
        elif ch.isdigit() or (ch == "." and i + 1 < n and query[i + 1].isdigit()):
            j, kind = _read_number(query, i), TokenKind.NUMBER
        elif ch.isalpha() or ch == "_":
            j, kind = _read_name(query, i), TokenKind.NAME
        elif ch == "$":
            if i + 1 < n and query[i + 1] == "`":
                j = _read_backticks(query, i + 1)
            else:
                j = _read_name(query, i + 1)
            if j == i + 1:
                raise CypherParseError(f"parameter without a name at offset {i}")
            kind = TokenKind.PARAMETER
        else:
            symbol = next((p for p in _PUNCTUATION if query.startswith(p, i)), None)
            if symbol is None:
                raise CypherParseError(f"unexpected character {ch!r} at offset {i}")
            j, kind = i + len(symbol), TokenKind.PUNCT
        tokens.append(Token(kind, query[i:j], i, j))
        i = _skip_space_and_comments(query, j)
    return tokens
