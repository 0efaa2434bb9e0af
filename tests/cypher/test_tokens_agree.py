"""Fuzz: every reader of Cypher text agrees on what is a keyword, a name, a literal or a comment.

The read-only guard and the answer extractor read the lenient mode of
:func:`cypherturn.cypher.tokenize`, the parser its strict mode (docs/design/architecture.md). On
10,000 seeded random texts built from the pieces models write (keywords in any
case, keyword-named variables, strings and names holding keywords, comments,
numbers glued to keywords, stray backslashes and quotes), this checks that the
lenient mode never fails and equals the strict mode wherever that succeeds, that
the extractor's literal and comment states are exactly the tokenizer's, and that
the guard's decision does not change when a comment holding a write keyword is
inserted between two tokens. The data-script reader of the worlds reads the same
tokens and splits statements exactly at the tokenizer's ``;`` tokens.
"""

from __future__ import annotations

import random

from cypherturn.cypher import Token, TokenKind, tokenize
from cypherturn.errors import CypherParseError, DatasetError
from cypherturn.graph import find_write_clause
from cypherturn.strategies._extract import _OUT, _lexer_states
from cypherturn.worlds import parse_cypher_script
from cypherturn.worlds._cypher_script import split_statements
from cypherturn.worlds._cypher_script import tokenize as script_tokenize

SEED = 17
INPUTS = 10_000
_WORDS = [
    "MATCH", "RETURN", "WITH", "WHERE", "AS", "ORDER", "BY", "LIMIT", "SKIP", "UNWIND", "CALL",
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "INSERT", "FOREACH", "LOAD",
    "CSV", "EXPLAIN", "n", "m", "drop", "set", "merge", "x", "name", "Person", "count",
]  # fmt: skip
_PIECES = [
    "(", ")", "[", "]", "{", "}", ":", ".", ",", "=", "<>", "->", "<-", "-", "*", "|", ";", "$p",
    " ", " ", " ", "\n", "1", "0x1F", "0o7", "2.5e3", "'a CREATE b'", '"it\\"s SET"', "'O\\'B'",
    "`DELETE x`", "`a``b`", "// DELETE (n)\n", "/* MERGE */", "\\", "\\_", "'", '"', "`", "/*",
]  # fmt: skip


def _word(rng: random.Random) -> str:
    word = rng.choice(_WORDS)
    return rng.choice([word, word.lower(), word.capitalize()])


def _text(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 14)):
        if rng.random() < 0.45:
            glue = rng.random() < 0.1
            parts.append(("1" if glue else " ") + _word(rng))
        else:
            parts.append(rng.choice(_PIECES))
    return "".join(parts)


def _check_states(text: str, tokens: list[Token]) -> None:
    states = _lexer_states(text)
    previous = 0
    for token in tokens:
        gap = text[previous : token.start]
        assert tokenize(gap, lenient=True) == [], (text, gap)  # only whitespace and comments
        for i in range(previous, token.start):
            assert text[i].isspace() or states[i] != _OUT or text.startswith(("//", "/*"), i)
        opener = token.kind in (TokenKind.STRING, TokenKind.QUOTED_NAME)
        for i in range(token.start + opener, token.end):
            assert (states[i] != _OUT) == opener, (text, token)
        previous = token.end


def test_tokenizer_users_agree_on_random_texts() -> None:
    rng = random.Random(SEED)
    strict_ok = 0
    for _ in range(INPUTS):
        text = _text(rng)
        tokens = tokenize(text, lenient=True)
        try:
            strict = tokenize(text)
        except CypherParseError:
            pass
        else:
            strict_ok += 1
            assert strict == tokens, text
        _check_states(text, tokens)
        decision = find_write_clause(text)
        if tokens and _lexer_states(text)[len(text)] == _OUT:
            cut = rng.choice(tokens).end
            for comment in (" /* CREATE (x) */ ", " // DELETE n\n"):
                assert find_write_clause(text[:cut] + comment + text[cut:]) == decision, text
    # the generator reaches both modes: most texts are not Cypher, many are
    assert 500 < strict_ok < INPUTS


def test_write_after_a_closed_pattern_is_always_found() -> None:
    rng = random.Random(SEED + 1)
    for _ in range(INPUTS // 10):
        text = _text(rng)
        if _lexer_states(text)[len(text)] != _OUT or text.rstrip().endswith(("\\", "/")):
            continue
        for write in ("CREATE (z)", "merge (z)", "DETACH DELETE z", "INSERT (z)"):
            assert find_write_clause(f"{text} ) {write}") is not None, text


def _spans(tokens: list[Token] | list[object]) -> list[tuple[int, int]]:
    return [(t.start, t.end) for t in tokens]  # type: ignore[attr-defined]


def test_script_reader_reads_the_tokenizers_tokens_and_splits_at_its_semicolons() -> None:
    rng = random.Random(SEED + 2)
    read = 0
    for _ in range(INPUTS):
        text = _text(rng)
        shared = tokenize(text, lenient=True)
        try:
            tokens = script_tokenize(text)
        except DatasetError:
            continue
        read += 1
        # the reader accepts only text the strict mode accepts, and reads its tokens
        assert tokenize(text) == shared, text
        assert _spans(tokens[:-1]) == _spans(shared), text
        chunks: list[list[Token]] = [[]]
        for token in shared:
            if token.is_punct(";"):
                chunks.append([])
            else:
                chunks[-1].append(token)
        statements = split_statements(tokens)
        assert [_spans(s[:-1]) for s in statements] == [_spans(c) for c in chunks if c], text
        assert all(s[-1].kind == "end" for s in statements)
    assert 500 < read < INPUTS


def test_script_reader_fails_only_with_a_dataset_error() -> None:
    rng = random.Random(SEED + 3)
    loaded = 0
    for _ in range(INPUTS):
        text = _text(rng)
        try:
            parse_cypher_script(text, "g")
        except DatasetError:
            continue
        loaded += 1
    # some random texts are data scripts the reader loads; any other error would escape
    assert 0 < loaded < INPUTS
