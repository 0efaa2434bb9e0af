"""The tokenizer respects strings, backticks, comments and numbers, and keeps offsets."""

from __future__ import annotations

import pytest

from cypherturn.cypher import TokenKind, tokenize
from cypherturn.errors import CypherParseError


def texts(query: str) -> list[str]:
    return [t.text for t in tokenize(query)]


def test_offsets_reproduce_the_source() -> None:
    query = "MATCH (n:`My Label` {k: 'a'})-[:R*1..3]->(m) RETURN n.x // done"
    for tok in tokenize(query):
        assert query[tok.start : tok.end] == tok.text


def test_string_holding_comment_markers_and_keywords_is_one_token() -> None:
    toks = tokenize("RETURN 'a // b /* c */ RETURN \\' d' AS x")
    assert [t.kind for t in toks] == [
        TokenKind.NAME,
        TokenKind.STRING,
        TokenKind.NAME,
        TokenKind.NAME,
    ]
    assert toks[1].text == "'a // b /* c */ RETURN \\' d'"


def test_double_quoted_string() -> None:
    assert texts('RETURN "it\'s" AS x') == ["RETURN", '"it\'s"', "AS", "x"]


def test_backticks_with_doubled_backtick() -> None:
    toks = tokenize("MATCH (`a``b c`) RETURN `a``b c`")
    quoted = [t for t in toks if t.kind is TokenKind.QUOTED_NAME]
    assert [t.text for t in quoted] == ["`a``b c`", "`a``b c`"]


def test_comments_are_dropped() -> None:
    assert texts("MATCH (n) /* RETURN m */ // RETURN k\nRETURN n") == [
        "MATCH",
        "(",
        "n",
        ")",
        "RETURN",
        "n",
    ]


def test_range_is_not_a_float() -> None:
    assert texts("[*1..3]") == ["[", "*", "1", "..", "3", "]"]


def test_numbers() -> None:
    toks = tokenize("RETURN 1.5e3, .5, 0x1F, 42")
    assert [t.text for t in toks if t.kind is TokenKind.NUMBER] == ["1.5e3", ".5", "0x1F", "42"]


def test_multi_character_operators() -> None:
    assert texts("a <> b <= c >= d =~ e <-[]-> f") == [
        "a", "<>", "b", "<=", "c", ">=", "d", "=~", "e", "<-", "[", "]", "->", "f",
    ]  # fmt: skip


def test_parameters() -> None:
    toks = tokenize("MATCH (n {id: $id}) WHERE n.x = $0 RETURN n")
    assert [t.text for t in toks if t.kind is TokenKind.PARAMETER] == ["$id", "$0"]


@pytest.mark.parametrize(
    "query",
    ["RETURN 'open", "MATCH (n) /* never closed", "MATCH (`n) RETURN 1", "RETURN $", "RETURN #"],
)
def test_malformed_input_raises(query: str) -> None:
    with pytest.raises(CypherParseError):
        tokenize(query)
