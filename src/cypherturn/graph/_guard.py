"""First layer of the read-only gate: find the write clause of a Cypher text, if any.

Generated Cypher is untrusted (RAS paper §3.3: every candidate is executed).
Before a query reaches an engine, :func:`find_write_clause` scans it with a
small tokenizer that knows Cypher's lexical structure (string literals with
backslash escapes, backtick-quoted names, ``//`` and ``/* */`` comments), so a
word like ``CREATE`` inside ``'please create'``, ``n.create`` or
```Delete``` is not mistaken for a clause. The engine's own read-only mode
(``GRAPH.RO_QUERY``, Neo4j READ access) stays the final guard; this layer exists
so the refusal names the offending clause and so engines whose read-only mode is
weaker (FalkorDB's Bolt endpoint executes writes in READ mode) are still safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "find_write_clause", "tokenize"]

# Clause keywords that change the graph or its schema, or reach outside it.
_WRITE_KEYWORDS = frozenset(
    {
        "CREATE",
        "MERGE",
        "SET",
        "REMOVE",
        "DELETE",
        "DROP",
        "FOREACH",
        "ALTER",
        "GRANT",
        "DENY",
        "REVOKE",
        "RENAME",
        "TERMINATE",
    }
)

# A procedure name segment that names a mutating or outward-reaching operation:
# db.idx.fulltext.createNodeIndex, apoc.create.node, apoc.refactor.mergeNodes,
# apoc.periodic.iterate, apoc.load.json, apoc.cypher.doIt, gds.pageRank.write, ...
_WRITE_PROCEDURE_SEGMENT = re.compile(
    r"^(create|drop|delete|merge|remove|set|add|write|mutate|refactor|periodic|import|export"
    r"|load|doit|runwrite|runschema|runmany|trigger|atomic|lock)(?:$|[A-Z_0-9])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token.

    Attributes:
        kind: ``"word"`` (identifier or keyword), ``"quoted"`` (backtick name),
            ``"string"``, ``"number"``, ``"param"`` (``$name``) or ``"punct"``.
        text: the token text; words keep their case.
        offset: character offset in the query.
    """

    kind: str
    text: str
    offset: int


def tokenize(query: str) -> list[Token]:
    """Split Cypher text into tokens, dropping whitespace and comments.

    The scanner is total: an unterminated string, backtick name or block comment
    swallows the rest of the text (the engine reports the syntax error).

    Args:
        query: Cypher text.

    Returns:
        The tokens in order.
    """
    tokens: list[Token] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif query.startswith("//", i):
            end = query.find("\n", i)
            i = n if end < 0 else end + 1
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch in "'\"":
            j = i + 1
            while j < n and query[j] != ch:
                j += 2 if query[j] == "\\" else 1
            tokens.append(Token("string", query[i : j + 1], i))
            i = j + 1
        elif ch == "`":
            j = i + 1
            while j < n:
                if query[j] == "`":
                    if j + 1 < n and query[j + 1] == "`":
                        j += 2
                        continue
                    break
                j += 1
            tokens.append(Token("quoted", query[i + 1 : j].replace("``", "`"), i))
            i = j + 1
        elif ch == "$":
            j = i + 1
            while j < n and (query[j].isalnum() or query[j] == "_"):
                j += 1
            tokens.append(Token("param", query[i:j], i))
            i = j
        elif ch.isalpha() or ch == "_":
            j = i + 1
            while j < n and (query[j].isalnum() or query[j] == "_"):
                j += 1
            tokens.append(Token("word", query[i:j], i))
            i = j
        elif ch.isdigit():
            j = i + 1
            while j < n and (query[j].isalnum() or query[j] == "."):
                if query[j] == "." and (j + 1 >= n or not query[j + 1].isdigit()):
                    break
                j += 1
            tokens.append(Token("number", query[i:j], i))
            i = j
        else:
            tokens.append(Token("punct", ch, i))
            i += 1
    return tokens


def _is_clause_position(tokens: list[Token], k: int) -> bool:
    """True when the word at ``k`` stands where a clause keyword can, not as a name.

    A word right after ``.`` (property key), ``:`` (label, type) or before ``:``
    (map key) is a name, whatever it spells.
    """
    before = tokens[k - 1].text if k > 0 and tokens[k - 1].kind == "punct" else ""
    after = tokens[k + 1].text if k + 1 < len(tokens) and tokens[k + 1].kind == "punct" else ""
    return before not in (".", ":") and after != ":"


def _procedure_name(tokens: list[Token], k: int) -> tuple[str, list[str]]:
    """Read the dotted procedure name that starts at token ``k`` (just after CALL)."""
    segments: list[str] = []
    while k < len(tokens) and tokens[k].kind in ("word", "quoted"):
        segments.append(tokens[k].text)
        if k + 1 < len(tokens) and tokens[k + 1].text == "." and tokens[k + 1].kind == "punct":
            k += 2
        else:
            break
    return ".".join(segments), segments


def find_write_clause(query: str) -> str | None:
    """Name the first clause of ``query`` that would write or reach outside the graph.

    Detected: ``CREATE`` (also index/constraint creation), ``MERGE``, ``SET``,
    ``REMOVE``, ``DELETE``, ``DETACH DELETE``, ``DROP``, ``FOREACH``, ``LOAD CSV``
    (reads server-side files), administration commands (``ALTER``, ``GRANT``,
    ``DENY``, ``REVOKE``, ``RENAME``, ``TERMINATE``) and ``CALL`` of a procedure
    whose name has a mutating segment (``db.idx.fulltext.createNodeIndex``,
    ``apoc.create.node``, ``apoc.periodic.iterate``, ``apoc.load.json``, ...).

    Args:
        query: untrusted Cypher text.

    Returns:
        The clause as an upper-case string (``"DETACH DELETE"``, ``"LOAD CSV"``,
        ``"CALL apoc.create.node"``), or ``None`` when the text reads only.
    """
    tokens = tokenize(query)
    for k, token in enumerate(tokens):
        if token.kind != "word" or not _is_clause_position(tokens, k):
            continue
        word = token.text.upper()
        nxt = tokens[k + 1].text.upper() if k + 1 < len(tokens) else ""
        if word == "DETACH" and nxt == "DELETE":
            return "DETACH DELETE"
        if word == "LOAD" and nxt == "CSV":
            return "LOAD CSV"
        if word in _WRITE_KEYWORDS:
            return word
        if word == "CALL" and k + 1 < len(tokens) and tokens[k + 1].kind in ("word", "quoted"):
            name, segments = _procedure_name(tokens, k + 1)
            if any(_WRITE_PROCEDURE_SEGMENT.match(segment) for segment in segments):
                return f"CALL {name}"
    return None
