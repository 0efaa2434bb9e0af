"""Binding a follow-up's reference to the previous result: "those", "these", "their", "the ones".

"What is the total capacity of the storehouses above?" refers to the rows the
previous turn showed; Qwen2.5-Coder-1.5B answered it with
``MATCH (n:Storehouse) RETURN sum(n.capacity)``, over every storehouse. When the
question refers back (:func:`refers_to_previous`), the previous result is a list
of names stored on one label (:func:`previous_names`), and the query ranges over
that label without a condition on the name, :func:`bind_reference` restricts
the variable to exactly those names, the query the chain note asks the model
to write (``WHERE n.name IN [...]``, ``protocols/prompts/chain.v1.txt``).

The decision reads meaning, not phrases (issue 41): a reference word counts only
when nothing in the question itself is what it stands for
(:func:`antecedent_inside`), and it points at the previous result only when what
it names is that result's label (:func:`points_to_previous`: "those cities" does
not point at a list of people). Closed classes of English words, not the
phrases of any question set, mark a reference that is not to the whole previous
result: a complement ("the rest", "the others", "not among"), an ordinal ("the
second one"), an exchange further back ("earlier", "question 2") and a contrast
("instead", "what about"). A query that already tests the variable's name gets
nothing either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.cypher import (
    READ_CLAUSES,
    READING_KEYWORDS,
    Token,
    TokenKind,
    bracket_depths,
    keyword_at,
)
from cypherturn.errors import CypherParseError
from cypherturn.grounding._facts import BranchFacts, NodeFact, query_facts
from cypherturn.grounding._findings import Edit, Finding
from cypherturn.grounding._index import GraphIndex
from cypherturn.grounding._words import SINGULARS, WORD, content_words, stem, stems

__all__ = [
    "MAX_BOUND_NAMES",
    "PreviousResult",
    "antecedent_inside",
    "bind_reference",
    "names_prior_output",
    "points_to_previous",
    "previous_names",
    "reference_word",
    "refers_to_previous",
]

MAX_BOUND_NAMES = 50
"""A previous result with more names than this is not bound (the list would swamp the query)."""

_PRIOR_OUTPUT_TEXT = (
    r"you\s+(?:just\s+|already\s+|have\s+|had\s+)?"
    r"(?:listed|showed|shown|gave|given|found|returned|mentioned|named|said)"
    r"|your\s+(?:(?:last|previous|latest|earlier|first)\s+)?"
    r"(?:answer|result|list|reply|output|response)s?"
    r"|(?:previous|last|latest)\s+(?:answer|result|list|reply|output|response)s?"
    r"|(?:that|this)\s+list"
)
_PRIOR_OUTPUT = re.compile(rf"\b(?:{_PRIOR_OUTPUT_TEXT})\b", re.IGNORECASE)
_REFERS = re.compile(
    r"\b(those|these|them|their|theirs|the\s+ones|ones|above(?!\s*[-+]?\d)|of\s+them|"
    rf"{_PRIOR_OUTPUT_TEXT})\b",
    re.IGNORECASE,
)
# Closed classes of English words that make a reference other than "all of the previous rows".
_COMPLEMENT = (
    r"rest|others?|remaining|excluding|except|besides|apart\s+from|other\s+than|"
    r"not\s+among|not\s+in|aren'?t"
)
_ORDINAL = (
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)|"
    r"last\s+one"
)
_FURTHER_BACK = r"earlier|originally|(?:turn|question|answer|step|query)\s+(?:#\s*)?\d+"
_CONTRAST = r"instead|what\s+about|how\s+about"
_NOT_BOUND = re.compile(
    rf"\b(?:{_COMPLEMENT}|{_ORDINAL}|{_FURTHER_BACK}|{_CONTRAST})\b", re.IGNORECASE
)
_COMPARES = frozenset({"=", "<>", "=~", "IN", "STARTS", "ENDS", "CONTAINS"})
_CLAUSES = READ_CLAUSES | {"UNION", "WHERE"}
_WHERE_ENDS = READING_KEYWORDS - {"WHERE"}


class PreviousResult(BaseModel):
    """The names the previous turn's result listed, and the one label that stores them.

    Attributes:
        label: the label whose ``name`` property holds every one of ``names``.
        names: the listed names, in the result's order (1 to :data:`MAX_BOUND_NAMES`).
    """

    model_config = ConfigDict(frozen=True)

    label: str
    names: list[str] = Field(min_length=1, max_length=MAX_BOUND_NAMES)


_PRONOUNS = frozenset({"them", "their", "theirs", "they"})
_DEMONSTRATIVES = frozenset({"those", "these"})
_SINGULAR_PRONOUNS = frozenset({"it", "its", "that"})
_ANAPHORS = _PRONOUNS | _DEMONSTRATIVES | _SINGULAR_PRONOUNS


def _plural(word: str) -> bool:
    return word in SINGULARS or (
        len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    )


def antecedent_inside(question: str, start: int, end: int) -> bool:
    """Whether the pronoun or demonstrative at ``question[start:end]`` points inside the question.

    A reference word points back to an earlier turn only when nothing before it
    in the question can be what it stands for (its antecedent). From English
    grammar, not from any question set:

    - "those"/"these" before a noun point inside when that noun (stemmed, Snowball
      English) was already named ("cases ... these cases"); as a pronoun ("which
      of those"), as "them";
    - "them", "their", "theirs", "they" point inside when a plural noun comes
      before ("for each manufacturer's cases ... registered with them");
    - "it", "its" and "that" point inside when any content word comes before (a
      relative "that" follows its noun: "cases that resulted in").

    Other reference words ("above", "the ones", "previous result") never point
    inside.

    Examples:
        >>> q = "Which ships carry cargo, and what is the total tonnage of these ships?"
        >>> antecedent_inside(q, q.index("these"), q.index("these") + 5)
        True
        >>> q = "How many of them were born before 1900?"
        >>> antecedent_inside(q, q.index("them"), q.index("them") + 4)
        False
    """
    word = question[start:end].lower().split()[-1]
    before = content_words(question[:start])
    if word in _DEMONSTRATIVES:
        after = content_words(question[end:])
        following = WORD.findall(question[end:])
        if after and following and following[0].lower() == after[0]:
            return stem(after[0]) in {stem(w) for w in before}
        return any(_plural(w) for w in before)
    if word in _PRONOUNS:
        return any(_plural(w) for w in before)
    if word in _SINGULAR_PRONOUNS:
        return bool(before)
    return False


def names_prior_output(question: str) -> bool:
    """Whether ``question`` names the assistant's earlier output in the second person or as a list.

    English's ways of pointing at what was said before: "you listed", "you just
    showed", "your answer", "your last result", "the previous list", "that list".

    Example:
        >>> names_prior_output("Which of the cities you listed are ports?")
        True
        >>> names_prior_output("List the cities with a port.")
        False
    """
    return bool(_PRIOR_OUTPUT.search(question))


def _outside_references(question: str) -> list[re.Match[str]]:
    return [m for m in _REFERS.finditer(question) if not antecedent_inside(question, *m.span())]


def reference_word(question: str) -> re.Match[str] | None:
    """Where ``question`` refers to the whole previous result: its first reference word, if any.

    ``None`` when :func:`refers_to_previous` does not hold.

    Example:
        >>> reference_word("Which of those were born before 1900?").group()
        'those'
    """
    if _NOT_BOUND.search(question):
        return None
    found = _outside_references(question)
    return found[0] if found else None


def refers_to_previous(question: str) -> bool:
    """Whether ``question`` builds on the whole previous result ("those", "their", "the ones", ...).

    A reference word counts only when nothing before it in the question is what
    it stands for (:func:`antecedent_inside`): in "which officers investigated
    crimes, and how many of those crimes" (POLE labels), "those crimes" are the
    question's own crimes. False for a complement ("the
    rest", "the others"), an ordinal ("the second one"), a named earlier turn,
    and a change of topic.

    Example:
        >>> refers_to_previous("Their average age?"), refers_to_previous("The rest of them?")
        (True, False)
        >>> refers_to_previous("For each city, how many people live in those cities?")
        False
    """
    return reference_word(question) is not None


def points_to_previous(question: str, label: str, labels: Iterable[str]) -> bool:
    """Whether ``question``'s reference word points at the previous result, a list of ``label`` names.

    :func:`refers_to_previous` must hold, and nothing may point the reference
    elsewhere: a word before it names ``label`` (the question's own antecedent:
    "Which persons were born in 1900, and what are their names?"), or the noun
    after "those"/"these" is another label of the graph ("How many crimes
    happened at those locations?" after a list of persons). Where it is unsure,
    it answers ``False`` and the query stands.

    Not from a paper: the CypherTurn paper's chain modes build follow-ups on earlier
    results (its reference phenomena); how a system binds them is cypherturn's own
    (docs/design/grounding.md, ``unbound_reference``).

    Args:
        question: the follow-up as typed.
        label: the label whose names the previous result listed.
        labels: every label of the graph.

    Returns:
        ``True`` when the reference points at the previous result; ``False`` when
        the question has no reference to the whole previous result or it points
        elsewhere. Raises nothing.

    Example (POLE labels):
        >>> labels = ["Person", "Location", "Crime"]
        >>> points_to_previous("How many crimes are those people party to?", "Person", labels)
        True
        >>> points_to_previous("How many crimes happened at those locations?", "Person", labels)
        False
    """
    found = reference_word(question)
    if found is None:
        return False
    word = found.group().lower()
    own = stems(label)
    # a pronoun after the label's noun stands for the question's own; "the cities you
    # listed" or "the people above" name the previous result with that noun
    if word in _ANAPHORS and own and own[-1] in stems(question[: found.start()]):
        return False
    if word in _DEMONSTRATIVES:
        after = stems(question[found.end() :])
        others = {s for other in labels if other != label for s in stems(other)}
        if after and after[0] not in own and after[0] in others:
            return False
    return True


def previous_names(
    columns: Sequence[str], rows: Sequence[Sequence[object]], index: GraphIndex
) -> PreviousResult | None:
    """The previous result as a :class:`PreviousResult`, when it is a list of names of one label.

    Args:
        columns: the result's column names.
        rows: its rows (every row, as shown: a cut-short result is not a list of them).
        index: the graph's index (its engine looks the names up).

    Returns:
        ``None`` unless the result has one column, 1 to :data:`MAX_BOUND_NAMES`
        rows of strings, and exactly one label stores all of them as ``name``.
    """
    if len(columns) != 1 or not 0 < len(rows) <= MAX_BOUND_NAMES:
        return None
    names = [row[0] for row in rows if len(row) == 1 and isinstance(row[0], str)]
    if len(names) != len(rows):
        return None
    labels = index.labels_holding("name", names)
    return PreviousResult(label=labels[0], names=names) if len(labels) == 1 else None


def _list_literal(names: Sequence[str]) -> str:
    escaped = (n.replace("\\", "\\\\").replace("'", "\\'") for n in dict.fromkeys(names))
    return "[" + ", ".join(f"'{n}'" for n in escaped) + "]"


def _named_variables(tokens: Sequence[Token]) -> set[str]:
    """The variables whose ``name`` the query compares with something (``=``, ``IN``, ...)."""
    named: set[str] = set()
    for i in range(len(tokens) - 3):
        a, dot, key, op = tokens[i : i + 4]
        named_key = a.kind is TokenKind.NAME and dot.is_punct(".") and key.text == "name"
        if named_key and op.upper in _COMPARES:
            named.add(a.text)
    return named


def _clause_end(
    tokens: Sequence[Token], depths: Sequence[int], start: int, enders: frozenset[str]
) -> int | None:
    """Index of the first token from ``start``, at ``start``'s bracket depth, whose keyword is in ``enders``."""
    return next(
        (
            i
            for i in range(start, len(tokens))
            if depths[i] == depths[start] and tokens[i].upper in enders and keyword_at(tokens, i)
        ),
        None,
    )


def bind_reference(
    question: str, query: str, previous: PreviousResult | None, index: GraphIndex
) -> Finding | None:
    """An ``unbound_reference`` finding: the question refers to the previous result, the query does not.

    Fires when ``previous`` is given, :func:`points_to_previous` holds for its label, and the
    query binds exactly one variable ``v`` of ``previous.label``, in a ``MATCH`` clause (not ``OPTIONAL``), in a query
    without ``UNION``, and no variable of that label has its ``name`` compared with
    anything. The edit adds ``v.name IN [<previous
    names>]`` to that clause's ``WHERE`` (``WHERE v.name IN [...] AND (<its
    condition>)``), or a ``WHERE`` holding only it.

    Args:
        question: the current question.
        query: the candidate Cypher.
        previous: the previous turn's result (:func:`previous_names`), ``None`` when
            it is not a list of names.
        index: the graph's index (labels and property keys).

    Returns:
        The finding with its edit, or ``None``.
    """
    if previous is None or not points_to_previous(question, previous.label, index.labels):
        return None
    if "name" not in index.label_keys.get(previous.label, frozenset()):
        return None
    if "//" in query or "/*" in query:
        return None  # a comment could swallow the text the edit moves
    try:
        facts = query_facts(query)
    except CypherParseError:
        return None
    if len(facts.branches) != 1:
        return None
    node = _ranging_node(facts.tokens, facts.branches[0], previous.label, index)
    if node is None:
        return None
    edit = _where_edit(query, facts.tokens, node, previous)
    if edit is None:
        return None
    var = node.variable
    return Finding(
        code="unbound_reference",
        message=(
            f"the question refers to the previous result ({len(previous.names)} "
            f"{previous.label} names), but the query ranges over every {previous.label}; "
            f"restrict {var} to those names: WHERE {var}.name IN [...]"
        ),
        span=(node.start, node.end),
        edit=edit,
    )


def _ranging_node(
    tokens: Sequence[Token], branch: BranchFacts, label: str, index: GraphIndex
) -> NodeFact | None:
    """The first node pattern of the one variable of ``label``, when nothing restricts its name."""
    nodes = sorted(
        (n for n in branch.nodes if n.variable and any(name == label for name, _ in n.labels)),
        key=lambda n: n.start,
    )
    if not nodes or len({n.variable for n in nodes}) != 1:
        return None  # "who do those people know?": which Person is meant is not clear
    node = nodes[0]
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", node.variable or ""):
        return None
    # the reference may already be written, on a node of the label or an unlabelled one
    for other in branch.nodes:
        own = {name for name, _ in other.labels}
        if (not own or label in own) and any(key == "name" for key, _ in other.map_keys):
            return None
    for named in _named_variables(tokens):
        given = branch.labels_of(named)
        if not given or label in given:
            return None
    # (a)-[:KNOWS]->(b:Person), KNOWS from Person to Person: a may be the people meant
    triples = index.triples()
    for rel in branch.relationships:
        if any((label, t, label) in triples for t, _ in rel.types) and not (
            rel.left.labels and rel.right.labels
        ):
            return None
    return node


def _where_edit(
    query: str, tokens: Sequence[Token], node: NodeFact, previous: PreviousResult
) -> Edit | None:
    """The edit that restricts ``node``'s variable to the previous names in its MATCH's WHERE."""
    at = next((i for i, t in enumerate(tokens) if t.start >= node.end), None)
    if at is None:
        return None  # nothing follows the pattern
    clause = max(
        (i for i, t in enumerate(tokens[:at]) if t.kind is TokenKind.NAME and t.upper in _CLAUSES),
        default=None,
    )
    if clause is None or tokens[clause].upper != "MATCH":
        return None
    if clause > 0 and tokens[clause - 1].is_name("OPTIONAL"):
        return None
    depths = bracket_depths(tokens, lenient=True)
    bound = f"{node.variable}.name IN {_list_literal(previous.names)}"
    reason = (
        f"the question refers to the previous result, {len(previous.names)} {previous.label} names"
    )
    nxt = _clause_end(tokens, depths, at, _CLAUSES)
    if nxt is None:
        return None  # nothing follows the MATCH: not a query a WHERE can be added to
    if tokens[nxt].upper != "WHERE":
        where = tokens[nxt].start
        return Edit(start=where, end=where, replacement=f"WHERE {bound} ", reason=reason)
    end = _clause_end(tokens, depths, nxt + 1, _WHERE_ENDS) if nxt + 1 < len(tokens) else None
    stop = tokens[end].start if end is not None else len(query.rstrip().rstrip(";").rstrip())
    condition = query[tokens[nxt].end : stop].strip()
    return Edit(
        start=tokens[nxt].end,
        end=stop,
        replacement=f" {bound} AND ({condition})" + (" " if end is not None else ""),
        reason=reason,
    )
