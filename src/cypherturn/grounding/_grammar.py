"""A llama.cpp GBNF grammar, derived from a graph schema, for read-only Cypher.

Decoding under :func:`schema_grammar`'s grammar lets a GGUF model write only a
Cypher statement of a read-only subset, with no prose and no code fence around
it, in which every label is one of the schema's labels, every relationship type
one of its types and every property key (after ``.``, or as a key of a node or
relationship pattern's property map) one of its property keys. Optional value
grounding restricts the string literals compared with a property to the values
the graph holds. Subset, guarantees and measured cost:
docs/design/grounding-grammar.md.

The grammar is shaped by how llama.cpp's sampler works: at every step it walks
every vocabulary token through every live parse stack (the stacks in the
reverse order of the alternatives that made them, and a token accepted by one
stack is not tried on the next). So: after ``WHERE`` almost every word token is
a valid identifier, and the first stack to try them is a plain free-name
function call (the last alternative of ``atom``), whose only continuation is
``(``, before the keyword-excluding variable trie; operators form one flat
loop behind a single whitespace run, so whitespace is matched by one stack
instead of one per operator; names of the schema are factored into tries; and
every token boundary allows at most four whitespace characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cypherturn.cypher import RESERVED_WORDS
from cypherturn.errors import ConfigError
from cypherturn.graph import GraphSchema

__all__ = ["GRAMMAR_KEYWORDS", "schema_grammar"]

GRAMMAR_KEYWORDS = RESERVED_WORDS
"""Words (any letter case) that the grammar never accepts as a variable name."""

_QUANTIFIERS = ("ALL", "ANY", "NONE", "SINGLE")
_PATH_FUNCTIONS = ("shortestPath", "allShortestPaths")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Bounds that keep every completion finite without cutting typical questions short.
_MAX_CLAUSES = 12
_MAX_HOPS = 8
_MAX_ITEMS = 12
_MAX_STRING = 120
_MAX_NAME = 32
_MAX_WS = 4

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_NAME_FIRST = _LETTERS | {c.upper() for c in _LETTERS} | {"_"}
_NAME_REST = _NAME_FIRST | frozenset("0123456789")


def _cypher_name(name: str) -> str:
    """``name`` as Cypher source: itself when a plain identifier, else in backticks (doubled inside)."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "]\\-^[" else ch


def _char_class(chars: Iterable[str]) -> str:
    """A GBNF character class matching exactly ``chars``, written as ranges."""
    codes = sorted({ord(c) for c in chars})
    parts: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        lo, hi = _class_char(chr(codes[i])), _class_char(chr(codes[j]))
        parts.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "[" + "".join(parts) + "]"


def _folded(ch: str) -> set[str]:
    return {ch, ch.upper()} if ch in _LETTERS else {ch}


def _keyword(word: str) -> str:
    """A keyword in any letter case (Cypher keywords are case-insensitive), as one stack."""
    return " ".join(_char_class(_folded(ch)) for ch in word.lower())


@dataclass
class _Trie:
    end: bool = False
    children: dict[str, _Trie] = field(default_factory=dict)

    def add(self, word: str) -> None:
        node = self
        for ch in word:
            node = node.children.setdefault(ch, _Trie())
        node.end = True


def _trie_expression(node: _Trie) -> str:
    """GBNF matching exactly the suffixes stored under ``node`` (which has children)."""
    branches = []
    for ch, child in sorted(node.children.items()):
        run = ch
        while len(child.children) == 1 and not child.end:
            (next_ch, child), *_ = child.children.items()
            run += next_ch
        if not child.children:
            branches.append(_literal(run))
        elif child.end:
            branches.append(f"{_literal(run)} ({_trie_expression(child)})?")
        else:
            branches.append(f"{_literal(run)} {_trie_expression(child)}")
    return branches[0] if len(branches) == 1 else "(" + " | ".join(branches) + ")"


def _alternatives(words: Iterable[str]) -> str:
    """GBNF matching exactly one of ``words`` (non-empty strings), factored as a trie.

    llama.cpp keeps one parse stack per alternative that can start here; a trie
    keeps one per distinct first character instead of one per word.
    """
    trie = _Trie()
    for word in sorted(set(words)):
        trie.add(word)
    return _trie_expression(trie)


def _variable_rules(reserved: Iterable[str]) -> dict[str, str]:
    """Rules of ``var``: a plain identifier that is none of ``reserved`` in any letter case.

    The complement of a finite set of words is regular, so it is a trie over
    the reserved words (case folded): a name leaves the trie at the first
    character no reserved word continues with, and may end inside the trie
    only where its prefix is not reserved.
    """
    trie = _Trie()
    for word in reserved:
        trie.add(word.lower())
    rules: dict[str, str] = {"name-tail": f"{_char_class(_NAME_REST)}{{0,{_MAX_NAME}}}"}

    def visit(node: _Trie, prefix: str) -> str:
        rule = f"var-{prefix}" if prefix else "var"
        branches = [
            f"{_char_class(_folded(ch))} {visit(child, prefix + ch)}"
            for ch, child in sorted(node.children.items())
        ]
        taken = {c for ch in node.children for c in _folded(ch)}
        branches.append(f"{_char_class((_NAME_REST if prefix else _NAME_FIRST) - taken)} name-tail")
        body = " | ".join(branches)
        rules[rule] = f"({body})?" if prefix and not node.end else body
        return rule

    visit(trie, "")
    return rules


def _quoted_values(values: Iterable[str]) -> str:
    """GBNF matching each value as a single- or double-quoted Cypher string literal."""
    single, double = [], []
    for value in values:
        body = value.replace("\\", "\\\\").replace("\n", "\\n")
        single.append("'" + body.replace("'", "\\'") + "'")
        double.append('"' + body.replace('"', '\\"') + '"')
    return _alternatives([*single, *double])


def _value_map(schema_keys: set[str], values: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, known in values.items():
        if key not in schema_keys:
            raise ConfigError(
                f"values name the property key {key!r}, which the schema does not have"
            )
        strings = sorted({str(v) for v in known})
        if strings:
            out[key] = strings
    return out


class _Grammar:
    """The rules of one grammar, in order of definition."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def __setitem__(self, name: str, body: str) -> None:
        self.rules[name] = body

    def text(self) -> str:
        return "".join(f"{name} ::= {body}\n" for name, body in self.rules.items())


_KW = {word: _keyword(word) for word in GRAMMAR_KEYWORDS}


def _clause_rules(g: _Grammar) -> None:
    """Statement structure: UNION branches of (MATCH | WITH | UNWIND)* RETURN."""
    k = _KW
    g["root"] = 'query ";"? [ \\t\\n]{0,2}'
    g["query"] = f"single (sp {k['UNION']} (sp {k['ALL']})? sp single){{0,3}}"
    g["single"] = f"(clause sp){{0,{_MAX_CLAUSES - 1}}} return"
    g["clause"] = "match | with | unwind"
    g["match"] = f"({k['OPTIONAL']} sp)? {k['MATCH']} sp patterns (sp where)?"
    g["where"] = f"{k['WHERE']} sp expr"
    g["unwind"] = f"{k['UNWIND']} sp expr sp {k['AS']} sp var"
    # One whitespace run before ORDER BY / SKIP / LIMIT / WHERE, not one per sub-clause.
    g["with"] = f"{k['WITH']} sp ({k['DISTINCT']} sp)? items (sp with-tail)?"
    g["with-tail"] = (
        "order (sp skip)? (sp limit)? (sp where)? | skip (sp limit)? (sp where)? "
        "| limit (sp where)? | where"
    )
    g["return"] = f"{k['RETURN']} sp ({k['DISTINCT']} sp)? items (sp return-tail)?"
    g["return-tail"] = "order (sp skip)? (sp limit)? | skip (sp limit)? | limit"
    g["items"] = f'"*" | item ("," ows item){{0,{_MAX_ITEMS - 1}}}'
    g["item"] = f"expr (sp {k['AS']} sp var)?"
    direction = " | ".join(k[w] for w in ("ASCENDING", "ASC", "DESCENDING", "DESC"))
    g["order"] = f'{k["ORDER"]} sp {k["BY"]} sp sort-item ("," ows sort-item){{0,5}}'
    g["sort-item"] = f"expr (sp ({direction}))?"
    g["skip"] = f"{k['SKIP']} sp int"
    g["limit"] = f"{k['LIMIT']} sp int"


def _pattern_rules(g: _Grammar, labels: list[str], types: list[str], entries: list[str]) -> None:
    """Node and relationship patterns, with schema labels, types and property keys."""
    g["patterns"] = 'pattern-part ("," ows pattern-part){0,5}'
    g["pattern-part"] = (
        f'(var ows "=" ows)? ({_alternatives(_PATH_FUNCTIONS)} "(" chain ")" | chain)'
    )
    g["chain"] = f"node (rel node){{0,{_MAX_HOPS}}}"
    g["node"] = f'"(" var? {"label-expr? " if labels else ""}(ows props)? ")"'
    g["rel"] = '"<-" rel-detail? "-" | "-" rel-detail? "-" ">"?'
    rel_types = '(":" rel-type ("|" ":"? rel-type){0,4})? ' if types else ""
    g["rel-detail"] = f'"[" var? {rel_types}var-length? (ows props)? "]"'
    g["var-length"] = '"*" (int | int? ".." int?)?'
    if labels:
        g["label-expr"] = '(":" label){1,3}'
        g["label"] = _alternatives(_cypher_name(x) for x in labels)
    if types:
        g["rel-type"] = _alternatives(_cypher_name(x) for x in types)
    if entries:
        g["props"] = '"{" ows prop-entry ("," ows prop-entry){0,5} ows "}"'
        g["prop-entry"] = " | ".join(entries)
    else:
        g["props"] = '"{" ows "}"'
    g["pattern-predicate"] = f"node (rel node){{1,{_MAX_HOPS}}}"


def _expression_rules(g: _Grammar, postfix_ops: list[str]) -> None:
    """Expressions: operands joined by one flat operator loop.

    The grammar only recognises; the engine applies precedence. A flat loop
    (``expr ::= operand expr-more?``) puts every operator behind one
    whitespace run, the single biggest saving of sampler time after an operand.
    """
    k = _KW
    word_ops = " | ".join(
        [k["AND"], k["OR"], k["XOR"], f"{k['STARTS']} sp {k['WITH']}",
         f"{k['ENDS']} sp {k['WITH']}", k["CONTAINS"]]
    )  # fmt: skip
    g["word-op"] = word_ops
    g["sym-op"] = '[-+*/%^] | "=" "~"? | "<" [>=]? | ">" "="?'
    g["is-null"] = f"{k['IS']} sp ({k['NOT']} sp)? {k['NULL']}"
    g["expr-more"] = (
        f"sp (word-op sp expr | {k['IN']} sp expr | sym-op ows expr | is-null expr-more?) "
        "| sym-op ows expr"
    )
    g["not-prefix"] = f"({k['NOT']} sp){{0,2}}"
    g["postfix-op"] = " | ".join(postfix_ops)
    g["postfix"] = "atom postfix-op{0,3}"
    g["unary"] = '"-" ows postfix | postfix'
    g["index"] = 'expr (ows ".." (ows expr)?)? | ".." ows expr'
    # `call` must stay the last alternative: llama.cpp tries it first, and it takes
    # every word-like token at the cost of one continuation ("(").
    g["atom"] = "atom-core | string | keyword-atom | var | call"
    g["atom-core"] = 'number | list | map | pattern-predicate | "(" ows expr ows ")"'
    quantifiers = " | ".join(k[w] if w in k else _keyword(w) for w in _QUANTIFIERS)
    g["keyword-atom"] = (
        f"{k['TRUE']} | {k['FALSE']} | {k['NULL']} | {k['CASE']} case-body "
        f"| {k['EXISTS']} ows exists-body | ({quantifiers}) quantifier-body"
    )
    g["call"] = (
        f'{_char_class(_NAME_FIRST)} name-tail "(" ows ((("*" | ({k["DISTINCT"]} sp)? '
        'expr ("," ows expr){0,5})) ows)? ")"'
    )
    g["case-body"] = (
        f"(sp expr)? (sp {k['WHEN']} sp expr sp {k['THEN']} sp expr){{1,8}} "
        f"(sp {k['ELSE']} sp expr)? sp {k['END']}"
    )
    g["quantifier-body"] = f'"(" ows var sp {k["IN"]} sp expr sp {k["WHERE"]} sp expr ows ")"'
    g["exists-body"] = f'"{{" ows ({k["MATCH"]} sp)? patterns (sp where)? ows "}}"'
    g["list"] = '"[" ows (list-body ows)? "]"'
    g["list-body"] = (
        'expr ("," ows expr){0,19} '
        f'| var sp {k["IN"]} sp expr (sp {k["WHERE"]} sp expr)? (ows "|" ows expr)? '
        f'| pattern-predicate (sp {k["WHERE"]} sp expr)? ows "|" ows expr'
    )
    g["map"] = '"{" ows (map-entry ("," ows map-entry){0,9} ows)? "}"'
    g["map-entry"] = 'var ows ":" ows expr'


def _value_rules(g: _Grammar, n_valued: int, plain_ops: list[str]) -> None:
    """``expr`` under value grounding.

    An operand that is a bare valued property ``v.key`` (no further postfix)
    continues in ``vmore-i``, where ``=``, ``<>`` and ``IN [...]`` take only
    the key's values (or an operand that is no string literal); every other
    operand goes through ``operand``, which never ends in a bare valued
    property. The valued branch comes first so that llama.cpp tries it last.
    """
    k = _KW
    vkeys = " | ".join(f"vkey-{i} vmore-{i}?" for i in range(n_valued))
    g["expr"] = f'not-prefix var "." ({vkeys}) | operand expr-more?'
    for i in range(n_valued):
        g[f"vmore-{i}"] = (
            f'ows ("=" | "<>") ows (vals-{i} | rhs) expr-more? '
            f"| ows sym-op-ne ows expr "
            f"| sp (word-op sp expr | is-null expr-more? "
            f'| {k["IN"]} sp ("[" ows (vals-{i} ("," ows vals-{i}){{0,19}} ows)? "]" '
            "| var postfix-op{0,2}) expr-more?) "
            "| postfix-op{1,2} expr-more?"
        )
    g["sym-op-ne"] = '[-+*/%^] | "=~" | "<" "="? | ">" "="?'
    g["operand"] = 'not-prefix ("-" ows postfix | operand-nv)'
    plain = " | ".join(plain_ops)
    g["operand-nv"] = (
        f'var (({plain}) postfix-op{{0,2}} | "." vkey postfix-op{{1,2}})? '
        "| (atom-core | string | keyword-atom | call) postfix-op{0,3}"
    )
    g["vkey"] = " | ".join(f"vkey-{i}" for i in range(n_valued))
    g["rhs"] = (
        'not-prefix ("-" ows postfix | (atom-core | keyword-atom | var | call) postfix-op{0,3})'
    )


def _key_rules(
    g: _Grammar, free_keys: list[str], valued: Mapping[str, list[str]]
) -> tuple[list[str], list[str]]:
    """Property-key rules: ``free-key`` and one ``vkey-i`` / ``vals-i`` per valued key.

    Returns:
        The property-map entries and the key rule names.
    """
    entries = []
    key_refs = []
    if free_keys:
        g["free-key"] = _alternatives(_cypher_name(k) for k in free_keys)
        entries.append('free-key ows ":" ows expr')
        key_refs.append("free-key")
    for i, key in enumerate(valued):
        g[f"vkey-{i}"] = _literal(_cypher_name(key))
        g[f"vals-{i}"] = _quoted_values(valued[key])
        entries.append(f'vkey-{i} ows ":" ows (vals-{i} | rhs)')
        key_refs.append(f"vkey-{i}")
    if key_refs:
        g["key"] = " | ".join(key_refs)
    return entries, key_refs


def _lexical_rules(g: _Grammar) -> None:
    """Literals, variables and whitespace."""
    g["string"] = (
        f'"\'" ([^\'\\\\\\n] | "\\\\" [^\\n]){{0,{_MAX_STRING}}} "\'" '
        f'| "\\"" ([^"\\\\\\n] | "\\\\" [^\\n]){{0,{_MAX_STRING}}} "\\""'
    )
    g["number"] = '[0-9]{1,15} ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?'
    g["int"] = "[0-9]{1,10}"
    g.rules.update(_variable_rules(GRAMMAR_KEYWORDS))
    g["sp"] = f"[ \\t\\n]{{1,{_MAX_WS}}}"
    g["ows"] = f"[ \\t\\n]{{0,{_MAX_WS}}}"


def schema_grammar(
    schema: GraphSchema, *, values: Mapping[str, Iterable[str]] | None = None
) -> str:
    """Write a GBNF grammar (llama.cpp) of read-only Cypher grounded in ``schema``.

    A completion decoded under the grammar is one Cypher statement and nothing
    else (an optional ``;`` and at most two whitespace characters may end it).
    The subset: ``MATCH`` / ``OPTIONAL MATCH`` (comma-separated parts, multi-hop
    chains, ``*m..n`` lengths, ``shortestPath``), ``WHERE``, ``WITH``
    (``DISTINCT``, ``ORDER BY``, ``SKIP``, ``LIMIT``, ``WHERE``), ``UNWIND``,
    ``RETURN`` and ``UNION [ALL]``; expressions with boolean logic, comparisons,
    ``IS [NOT] NULL``, ``IN``, string predicates, ``=~``, arithmetic, pattern
    predicates, ``EXISTS { }``, function calls (``count(*)``, ``count(DISTINCT
    x)``), ``CASE``, list and map literals, list and pattern comprehensions,
    quantifiers and literals. Not covered: parameters, comments, ``CALL``,
    write clauses, map projections, ``reduce``.

    Grounding: every label (after ``:``) is a schema label, every relationship
    type a schema type, and every property key after ``.`` or in a pattern's
    ``{key: ...}`` map a schema key (the union over labels and types); names
    that are not plain identifiers are written in backticks (inner backticks
    doubled), plain ones without. Variables are plain identifiers other than
    :data:`GRAMMAR_KEYWORDS` (any letter case). Function names are free
    identifiers: a closed list made llama.cpp's sampler markedly slower
    (docs/design/grounding-grammar.md), and the engine names an unknown one.
    Keywords may be written in any letter case. At most 4 whitespace
    characters separate two tokens; clauses, hops, items and string lengths
    are bounded too.

    Args:
        schema: the graph's schema (introspected or declared). Its property
            keys are the only keys allowed: pass complete keys, not a sample.
        values: optional value grounding: property key -> every string value
            the graph holds for that key, over all labels and types that have
            it (any other literal is refused, so the list must be complete).
            For such a key, a string literal written as the key's value in a
            pattern map (``{type: '...'}``) or directly on the right of
            ``v.key =``, ``v.key <>`` or inside ``v.key IN [...]`` is one of the
            values; other positions (``CONTAINS``, ``toLower(v.key) = ...``)
            stay free. Keys given no values are left free. The grammar grows
            with the values; give low-cardinality keys.

    Returns:
        The grammar text; its start rule is ``root``.

    Raises:
        ConfigError: ``values`` names a property key the schema does not have.
    """
    labels = sorted({lab.label for lab in schema.labels})
    types = sorted({rel.type for rel in schema.relationship_types})
    keys = sorted(
        {k for lab in schema.labels for k in lab.properties}
        | {k for rel in schema.relationship_types for k in rel.properties}
    )
    valued = _value_map(set(keys), values or {})
    free_keys = [k for k in keys if k not in valued]

    g = _Grammar()
    _clause_rules(g)
    entries, key_refs = _key_rules(g, free_keys, valued)
    _pattern_rules(g, labels, types, entries)

    index_op = '"[" ows index ows "]"'
    label_op = ['":" label'] if labels else []
    _expression_rules(g, ['"." key'] * bool(key_refs) + [index_op, *label_op])
    if valued:
        plain_ops = ['"." free-key'] * bool(free_keys) + [index_op, *label_op]
        _value_rules(g, len(valued), plain_ops)
    else:
        g["expr"] = "not-prefix unary expr-more?"

    _lexical_rules(g)
    return g.text()
