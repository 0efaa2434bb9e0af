"""A Cypher tokenizer that keeps every token's source offsets.

The provenance rewrite (PSJS, CypherBench §4) and the ORDER BY decision for EX
(CypherTurn §3.2) need to know where clauses and patterns start and end in the
original text, so that the rewrite can splice text into the query without ever
re-printing it. The tokenizer therefore works on offsets: it respects string
literals (single and double quoted, backslash escapes), backtick-quoted names
(with doubled backticks), ``//`` and ``/* */`` comments and parameters, and
leaves whitespace and comments out of the token stream.

One tokenizer serves every reader of Cypher text (docs/design/architecture.md): the PSJS rewrite
and the clause parser use the strict mode, which refuses text that is not
Cypher; the read-only guard (:mod:`cypherturn.graph._guard`) and the answer
extractor (:mod:`cypherturn.strategies._extract`) use the lenient mode, which
never fails, so the three agree on what is a keyword, a name, a literal or a
comment (tests/cypher/test_tokens_agree.py fuzzes that).

Why not a library: graphglot (the maintained openCypher/GQL parser on PyPI) was
evaluated and rejected for this use; see docs/design/psjs-rewrite.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from cypherturn.errors import CypherParseError

__all__ = ["Token", "TokenKind", "tokenize", "unescape_markdown"]


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

_TWO_CHARACTER = frozenset(p for p in _PUNCTUATION if len(p) == 2)
_ONE_CHARACTER = frozenset(p for p in _PUNCTUATION if len(p) == 1)

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


def _skip_space_and_comments(query: str, i: int, lenient: bool = False) -> int:
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
                if lenient:
                    return n
                raise CypherParseError(f"unterminated comment starting at offset {i}")
            i = close + 2
        else:
            break
    return i


def _read_string(query: str, i: int, lenient: bool = False) -> int:
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
    if lenient:
        return n
    raise CypherParseError(f"unterminated string literal starting at offset {i}")


def _read_backticks(query: str, i: int, lenient: bool = False) -> int:
    j = i + 1
    n = len(query)
    while j < n:
        if query[j] == "`":
            if j + 1 < n and query[j + 1] == "`":
                j += 2
                continue
            return j + 1
        j += 1
    if lenient:
        return n
    raise CypherParseError(f"unterminated backtick-quoted name starting at offset {i}")


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF_")
_OCTAL_DIGITS = frozenset("01234567_")


def _read_number(query: str, i: int) -> int:
    n = len(query)
    j = i
    if query.startswith(("0x", "0X", "0o", "0O"), i):
        # Only the base's digits: in ``0o7CREATE`` the engine reads 0o7, then CREATE.
        digits = _HEX_DIGITS if query[i + 1] in "xX" else _OCTAL_DIGITS
        j = i + 2
        while j < n and query[j] in digits:
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


def tokenize(query: str, *, lenient: bool = False) -> list[Token]:
    """Split a Cypher query into tokens, dropping whitespace and comments.

    Args:
        query: the Cypher text.
        lenient: never fail, for untrusted text (model output, prose around a
            query): an unterminated string or backtick-quoted name runs to the
            end of the text, an unterminated block comment swallows the rest,
            and a character that starts no Cypher token (``\\``, ``#``, ``$``
            without a name) becomes a one-character ``PUNCT`` token. On text the
            strict mode accepts, both modes give the same tokens.

    Returns:
        The tokens in source order; each carries its ``[start, end)`` offsets.

    Raises:
        CypherParseError: strict mode only: an unterminated string, comment or
            backtick-quoted name, or a character that cannot start any Cypher token.
    """
    tokens: list[Token] = []
    n = len(query)
    i = _skip_space_and_comments(query, 0, lenient)
    while i < n:
        ch = query[i]
        if ch in "'\"":
            j, kind = _read_string(query, i, lenient), TokenKind.STRING
        elif ch == "`":
            j, kind = _read_backticks(query, i, lenient), TokenKind.QUOTED_NAME
        elif ch.isdigit() or (ch == "." and i + 1 < n and query[i + 1].isdigit()):
            j, kind = _read_number(query, i), TokenKind.NUMBER
        elif ch.isalpha() or ch == "_":
            j, kind = _read_name(query, i), TokenKind.NAME
        elif ch == "$" and not (lenient and _bare_dollar(query, i)):
            if i + 1 < n and query[i + 1] == "`":
                j = _read_backticks(query, i + 1, lenient)
            else:
                j = _read_name(query, i + 1)
            if j == i + 1:
                raise CypherParseError(f"parameter without a name at offset {i}")
            kind = TokenKind.PARAMETER
        else:
            # a set lookup, longest first: the scan over every symbol dominated loading big scripts
            pair = query[i : i + 2]
            symbol = pair if pair in _TWO_CHARACTER else (ch if ch in _ONE_CHARACTER else None)
            if symbol is None:
                if not lenient:
                    raise CypherParseError(f"unexpected character {ch!r} at offset {i}")
                symbol = ch
            j, kind = i + len(symbol), TokenKind.PUNCT
        tokens.append(Token(kind, query[i:j], i, j))
        i = _skip_space_and_comments(query, j, lenient)
    return tokens


def _bare_dollar(query: str, i: int) -> bool:
    """True when the ``$`` at ``i`` names no parameter."""
    nxt = query[i + 1 : i + 2]
    return not (nxt == "`" or nxt.isalnum() or nxt == "_")


# Backslash escapes of Markdown punctuation (CommonMark §2.4). Quotes are not among
# them: a backslash before one changes where a string literal ends.
_MARKDOWN_PUNCTUATION = frozenset("!#$%&()*+,-./:;<=>?@[]^_{|}~")


def unescape_markdown(query: str) -> str:
    """Drop the backslash of Markdown escapes outside literals: ``PARTY\\_TO`` -> ``PARTY_TO``.

    Models that write Markdown escape ``_``, ``*`` and brackets. Outside a string
    literal, a backtick-quoted name or a comment a backslash is never Cypher, so
    no query the engine would accept is changed; inside literals nothing is.

    Args:
        query: Cypher text, possibly not well formed.

    Returns:
        The text without those backslashes.
    """
    tokens = tokenize(query, lenient=True)
    drop = {
        t.start
        for t in tokens
        if t.text == "\\"
        and t.kind is TokenKind.PUNCT
        and query[t.end : t.end + 1] in _MARKDOWN_PUNCTUATION
    }
    if not drop:
        return query
    return "".join(c for i, c in enumerate(query) if i not in drop)
