"""Pull the Cypher statement out of a chat model's raw completion text.

Models wrap queries in reasoning blocks, chat special tokens, Markdown code
fences, lead-in labels and prose, and escape Markdown punctuation
(``PARTY\\_TO``). :func:`extract_cypher` removes those wrappers and escapes and
nothing else: string literals, backtick-quoted names and comments inside the
query are never rewritten. tests/strategies/extraction_cases.json holds the
replies, written as models write them, that this is checked on. (LangChain's ``GraphCypherQAChain``, the RAS paper's pipeline,
only takes the text between the first pair of triple backticks.)

Code fences are found with a CommonMark parser (markdown-it-py). Quoting is
tracked by a lenient state scan (:func:`_lexer_states`) rather than
:func:`cypherturn.cypher.tokenize`, because that tokenizer is strict: it rejects
the unterminated literals and non-Cypher characters that prose and truncated
answers contain, and extraction must never fail.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from cypherturn.cypher import (
    BOOLEAN_WORDS,
    CLAUSE_KEYWORDS,
    CLAUSE_STARTS,
    TokenKind,
    tokenize,
    unescape_markdown,
)

__all__ = ["extract_cypher"]

STATEMENT_STARTS = CLAUSE_STARTS | {"EXPLAIN", "PROFILE", "CYPHER", "SHOW"}
"""Words an openCypher statement can start with: a clause, or a prefix of the whole statement."""

CONTINUATION_KEYWORDS = (
    STATEMENT_STARTS
    | frozenset(CLAUSE_KEYWORDS)
    | BOOLEAN_WORDS
    | frozenset(
        {"YIELD", "ON", "AS", "ASC", "DESC", "ASCENDING", "DESCENDING", "CASE", "WHEN", "THEN",
         "ELSE", "END", "DISTINCT"}
    )
)  # fmt: skip
"""Words a line inside a multi-line statement can start with."""

CYPHER_FENCE_TAGS = frozenset({"cypher", "cql", "opencypher", "neo4j", "falkordb", "gql"})
"""Info-string languages that mark a fenced block as Cypher."""

_OUT, _SINGLE, _DOUBLE, _BACKTICK, _LINE_COMMENT, _BLOCK_COMMENT = range(6)

_END_TOKENS = re.compile(
    r"<\|(?:im_end|endoftext|eot_id|eom_id|end|im_start|start_header_id|end_of_text)\|>"
    r"|<end_of_turn>|<start_of_turn>|<\uff5cend\u2581of\u2581sentence\uff5c>"
)
_LEADING_ROLE = re.compile(
    r"^\s*(?:<\|im_start\|>|<\|assistant\|>|<start_of_turn>)(?:assistant|model)?\s*"
)
_TRAILING_EOS = re.compile(r"(?:\s*</s>)+\s*$")
_THINK_OPEN = re.compile(r"^\s*<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_LEADING_COMMENTS = re.compile(r"^(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*", re.DOTALL)
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_SENTENCE = re.compile(
    r"^[A-Z][a-z'\u2019]*\s+[a-z'\u2019]+[,.:;!?]?\s+[a-z'\u2019]+[,.:;!?]?(?:\s|$)"
)
_MARKDOWN_LINE = re.compile(r"^(?:#{1,6}\s|\*\*|[-*+]\s|\d+[.)]\s|>\s?|`{3,}|~{3,})")
_AFTER_COLON = re.compile(r"[:\uff1a]\s*(?=(?:" + "|".join(sorted(STATEMENT_STARTS)) + r")\b)")
# A lead-in label such as "Cypher query:", "**Answer:**" or "Final answer:": a few words,
# optionally bold, ending in a colon that whitespace or the end of the line follows (the
# colon of a Cypher label, as in ``n:Person``, is followed by the name).
_LEAD_IN = re.compile(
    r"^[ \t]*(?:[*_]{1,3}[ \t]*)?[A-Za-z][A-Za-z0-9'\u2019 \t-]{0,40}?[ \t]*(?:[*_]{1,3}[ \t]*)?"
    r"[:\uff1a](?:[ \t]*[*_]{1,3})?(?=\s|$)[ \t]*"
)
# CYPHER starts a statement only as a query prefix: a version or an option, then the query.
_CYPHER_PREFIX = re.compile(
    r"CYPHER(?:[ \t]+\d+(?:\.\d+)?|[ \t]+\w+[ \t]*=[ \t]*\S+)*[ \t]+(?:"
    + "|".join(sorted(STATEMENT_STARTS - {"CYPHER"}))
    + r")\b",
    re.IGNORECASE,
)
_INLINE_CODE = re.compile(r"(?<!`)(`{1,2})(?!`)(.+?)(?<!`)\1(?!`)")
_INLINE_FENCE = re.compile(r"(`{3,})(.+?)\1", re.DOTALL)

_MARKDOWN = MarkdownIt("commonmark")


def extract_cypher(text: str) -> str:
    """Extract the first Cypher statement from a model's completion.

    Steps, in order: drop chat special tokens (a leading role header, anything
    from the first end-of-turn token such as ``<|im_end|>`` or
    ``<|endoftext|>``, trailing ``</s>``); drop leading reasoning blocks
    (``<think>…</think>``; an unclosed leading ``<think>`` means the answer was
    cut off inside the reasoning, so nothing is left; a ``</think>`` without an
    opening tag, as templates that open the block in the prompt produce, drops
    everything before it); take the first Markdown code fence that looks like
    Cypher (a ``cypher``-like language tag, or content starting with a clause
    keyword; else the first non-empty fence); without a fence, drop prose
    before the first line that starts with a clause keyword, the statement after
    a lead-in label (``Cypher query:``, ``**Answer:**``, ``answer:``; the label's
    words are never read as query words, ``Cypher`` included) or an upper-case
    clause keyword right after a colon (whichever comes first), and drop
    everything from the first prose or Markdown line after it (sentence
    punctuation inside a comment or a string literal does not make a line
    prose); failing that, take a statement written as inline code; then drop
    the backslash of Markdown escapes (``PARTY\\_TO``, ``count(\\*)``) outside
    string literals, names and comments; finally keep the first statement (up
    to a ``;`` outside literals) and strip whitespace. Anything else the model
    got wrong (a trailing full stop, a bad clause) is left for the engine to
    report, so that RAS can feed the engine's message back.

    Args:
        text: the raw completion.

    Returns:
        The Cypher statement, or ``""`` when the text holds none.
    """
    text = _strip_special_tokens(text)
    text = _strip_reasoning(text)
    fenced = _first_fenced_block(text)
    candidate = fenced if fenced is not None else _strip_prose(text) or _inline_code(text)
    return _first_statement(unescape_markdown(candidate))


def _lexer_states(text: str) -> list[int]:
    """The openCypher lexer state in which each character is read, plus the state at the end.

    ``states[i]`` is ``_OUT`` when character ``i`` is ordinary query text, or the
    literal/comment state it belongs to (an opening quote is read in ``_OUT``;
    the closing quote belongs to the literal). The literals are the string and
    backtick-name tokens of the lenient :func:`cypherturn.cypher.tokenize`, the
    tokenizer the read-only guard also uses; what lies between tokens is
    whitespace or a ``//`` or ``/* */`` comment.
    """
    n = len(text)
    states = [_OUT] * (n + 1)
    previous = 0
    for token in tokenize(text, lenient=True):
        _mark_comments(text, previous, token.start, states)
        if token.kind is TokenKind.STRING:
            literal = _SINGLE if token.text[0] == "'" else _DOUBLE
            states[token.start + 1 : token.end] = [literal] * (token.end - token.start - 1)
            if not _closed(token.text, token.text[0]):
                states[n] = literal
        elif token.kind is TokenKind.QUOTED_NAME:
            states[token.start + 1 : token.end] = [_BACKTICK] * (token.end - token.start - 1)
            if not _closed(token.text, "`"):
                states[n] = _BACKTICK
        previous = token.end
    _mark_comments(text, previous, n, states)
    return states


def _closed(literal: str, quote: str) -> bool:
    """True when a string or backtick token ends with its closing quote."""
    body = literal[1:]
    i = 0
    while i < len(body):
        if body[i] == "\\" and quote != "`":
            i += 2
            continue
        if body[i] == quote:
            if quote == "`" and body[i + 1 : i + 2] == "`":
                i += 2
                continue
            return i == len(body) - 1
        i += 1
    return False


def _mark_comments(text: str, start: int, end: int, states: list[int]) -> None:
    """Set the comment states of the gap ``text[start:end]`` between two tokens."""
    i = start
    while i < end:
        if text.startswith("//", i):
            newline = text.find("\n", i, end)
            stop = end if newline < 0 else newline + 1
            states[i + 1 : stop] = [_LINE_COMMENT] * (stop - i - 1)
            if newline < 0 and end == len(text):
                states[end] = _LINE_COMMENT
            i = stop
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2, end)
            stop = end if close < 0 else close + 2
            states[i + 1 : stop] = [_BLOCK_COMMENT] * (stop - i - 1)
            if close < 0 and end == len(text):
                states[end] = _BLOCK_COMMENT
            i = stop
        else:
            i += 1


def _strip_special_tokens(text: str) -> str:
    text = _LEADING_ROLE.sub("", text, count=1)
    end = _END_TOKENS.search(text)
    if end is not None:
        text = text[: end.start()]
    return _TRAILING_EOS.sub("", text)


def _strip_reasoning(text: str) -> str:
    while True:
        opened = _THINK_OPEN.match(text)
        if opened is None:
            break
        closed = _THINK_CLOSE.search(text, opened.end())
        if closed is None:
            return ""
        text = text[closed.end() :]
    orphan = _THINK_CLOSE.search(text)
    if orphan is not None and not re.search(
        r"<(?:think|thinking|reasoning)>", text[: orphan.start()], re.IGNORECASE
    ):
        text = text[orphan.end() :]
    return text


def _starts_with_clause(code: str) -> bool:
    body = _LEADING_COMMENTS.sub("", code, count=1)
    word = _FIRST_WORD.match(body)
    if word is None or word.group().upper() not in STATEMENT_STARTS:
        return False
    return word.group().upper() != "CYPHER" or _CYPHER_PREFIX.match(body) is not None


def _first_fenced_block(text: str) -> str | None:
    """Content of the first fenced block that looks like Cypher; None when the text has no fence."""
    fences = [t for t in _MARKDOWN.parse(text) if t.type == "fence"]
    if not fences:
        return _inline_fence(text)
    for token in fences:
        tag = token.info.strip().split(maxsplit=1)[0].lower() if token.info.strip() else ""
        if tag in CYPHER_FENCE_TAGS or _starts_with_clause(token.content):
            return _drop_unclosed_fence_end(token.content)
    nonempty = [t.content for t in fences if t.content.strip()]
    return _drop_unclosed_fence_end(nonempty[0]) if nonempty else ""


def _inline_fence(text: str) -> str | None:
    """A one-line fence such as ``` ```cypher MATCH (n) RETURN n``` ```, which CommonMark reads as inline code."""
    for match in _INLINE_FENCE.finditer(text):
        body = match.group(2).strip()
        first, _, rest = body.partition(" ")
        if first.lower() in CYPHER_FENCE_TAGS and rest.strip():
            body = rest.strip()
        if _starts_with_clause(body):
            return body
    return None


def _drop_unclosed_fence_end(content: str) -> str:
    """Remove a closing ``` written on the last code line, which CommonMark keeps as content."""
    stripped = content.rstrip()
    run = len(stripped) - len(stripped.rstrip("`"))
    if run >= 3 and _lexer_states(stripped)[len(stripped) - run] == _OUT:
        return stripped[: len(stripped) - run]
    return content


def _is_prose(line: str) -> bool:
    """A line that is Markdown structure or an English sentence rather than Cypher."""
    stripped = line.strip()
    if _MARKDOWN_LINE.match(stripped):
        return True
    # Cypher never ends a line with sentence punctuation outside a literal.
    if stripped[-1:] in (".", "!", "?"):
        return True
    word = _FIRST_WORD.match(stripped)
    if word is None or (word.group().isupper() and word.group() in CONTINUATION_KEYWORDS):
        return False
    return _SENTENCE.match(stripped) is not None or stripped.endswith(":")


def _opens_statement(line: str) -> bool:
    """True when ``line`` (left-stripped) begins with a clause keyword that starts a statement.

    An upper-case keyword always does; another casing only on a line that is not
    prose. ``CYPHER`` counts only as a query prefix (``CYPHER 5 MATCH ...``), so the
    word of a label such as ``Cypher query:`` never does, nor does a bare language line.
    """
    word = _FIRST_WORD.match(line)
    if word is None or word.group().upper() not in STATEMENT_STARTS:
        return False
    if line.strip().lower() in CYPHER_FENCE_TAGS:
        return False
    if word.group().upper() == "CYPHER" and _CYPHER_PREFIX.match(line) is None:
        return False
    return word.group().isupper() or not _is_prose(line)


def _statement_start(text: str) -> int | None:
    """Offset where the statement begins.

    The earliest of: a line that opens a statement, the statement after a lead-in
    label on its line (``Cypher query: MATCH ...``, ``**Answer:** match ...``), and
    an upper-case clause keyword right after a colon.
    """
    starts: list[int] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        indent = offset + len(line) - len(stripped)
        lead = _LEAD_IN.match(stripped)
        if lead is not None and _opens_statement(stripped[lead.end() :]):
            starts.append(indent + lead.end())
            break
        if _opens_statement(stripped):
            starts.append(indent)
            break
        offset += len(line)
    after_colon = _AFTER_COLON.search(text)
    if after_colon is not None:
        starts.append(after_colon.end())
    return min(starts, default=None)


def _code_only(text: str, states: list[int]) -> str:
    """``text`` with the inside of literals masked by ``x`` and comments blanked.

    Line breaks are kept, so the result splits into the same lines. Prose tests
    then see only query text: a full stop inside ``// count the people.`` or a
    string literal is not sentence punctuation.
    """
    masked = []
    for i, c in enumerate(text):
        state = states[i]
        opens_comment = state == _OUT and text.startswith(("//", "/*"), i)
        if (state == _OUT and not opens_comment) or c == "\n":
            masked.append(c)
        elif opens_comment or state in (_LINE_COMMENT, _BLOCK_COMMENT):
            masked.append(" ")
        else:
            masked.append("x")
    return "".join(masked)


def _strip_prose(text: str) -> str:
    """The statement lines of an unfenced answer, without the prose around them.

    A line that holds only a comment counts as a blank line: it is kept when a
    statement line follows it.
    """
    start = _statement_start(text)
    if start is None:
        return ""
    body = text[start:]
    states = _lexer_states(body)
    lines = body.splitlines(keepends=True)
    code_lines = _code_only(body, states).splitlines(keepends=True)
    kept: list[str] = []
    offset = 0
    for number, (line, code) in enumerate(zip(lines, code_lines, strict=True)):
        in_literal = states[offset] not in (_OUT, _LINE_COMMENT, _BLOCK_COMMENT)
        offset += len(line)
        if number == 0 or in_literal:
            kept.append(line)
            continue
        if not code.strip():
            following = next((x for x in code_lines[number + 1 :] if x.strip()), "")
            word = _FIRST_WORD.match(following.lstrip())
            if word is None or word.group().upper() not in CONTINUATION_KEYWORDS:
                break
            kept.append(line)
            continue
        if _is_prose(code):
            break
        kept.append(line)
    return "".join(kept)


def _inline_code(text: str) -> str:
    """A statement written as inline code in prose, as in ``Answer: `MATCH (n) RETURN n```."""
    for match in _INLINE_CODE.finditer(text):
        body = match.group(2).strip()
        if " " in body and _opens_statement(body):
            return body
    return ""


def _first_statement(code: str) -> str:
    """Text before the first ``;`` outside literals and comments, stripped."""
    states = _lexer_states(code)
    for i, c in enumerate(code):
        if c == ";" and states[i] == _OUT:
            return code[:i].strip()
    return code.strip()
