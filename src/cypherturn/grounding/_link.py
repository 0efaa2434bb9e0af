"""Value linking: the stored values a question's words name, found before any query is written.

Small models pick the wrong label or property for a value the question names
(a place type stored as ``Location.address``, written as a ``Crime``
property; a route of administration stored on a relationship, written as a
node property).
Text-to-SQL systems retrieve the database values a question mentions and show
them with their column (schema linking with value retrieval: Li et al. 2023,
"RESDSQL"; Talaei et al. 2024, "CHESS", whose entity retrieval matches question
keywords against stored values). :func:`link_values` does the same for a
property graph: every run of one to four words of the question, and its
singular and adverb-less forms, is compared ignoring case with the stored
string values of every label and relationship type; listed (low-cardinality)
values are also matched when they start with a long question word (a
question's "<word>" finds a listed ``'<Word>ization - ...'``).

Deviation from CHESS: exact and prefix matching only (no embeddings, no
edit-distance retrieval), because the question is matched offline against a
live graph on a 2-core machine; misspelt literals are caught after execution
by the value check instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel

from cypherturn.errors import QueryError
from cypherturn.graph import cypher_name, quote_name
from cypherturn.grounding._index import GraphIndex

__all__ = ["LinkRules", "ValueLink", "link_values", "render_links"]

_MAX_GRAM = 4
_PREFIX_MIN = 6
_MAX_LINKS = 8

_STOPWORD_TEXT = """a an the of in on at to for from by with and or not no is are was were be been being
    how many much what which who whom whose where when why there their they them it its this
    that these those give me list show tell find all any each every most more least less than
    top first last number count total have has had do does did made make get got per one two
    three four five six seven eight nine ten name names some other another same between about
    into did done ever still also only just than then as if so i you we our my your
    whether were what's who's"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@dataclass(frozen=True, slots=True)
class LinkRules:
    """Which of the linker's word-form rules apply; all do unless one is switched off.

    ``benchmarks/bench_linking.py`` switches each off in turn to measure what it
    finds on questions it was not written from (docs/results/grounding-transfer/).

    Attributes:
        plural: a phrase's last word also in its singular form (``robberies`` -> ``robbery``).
        adverb: a word also without ``-ly`` (``orally`` -> ``oral``).
        prefix: listed values of low-cardinality properties that start with a
            question word of at least 6 letters.
    """

    plural: bool = True
    adverb: bool = True
    prefix: bool = True


ALL_RULES = LinkRules()


class ValueLink(BaseModel):
    """One stored value a question's words name.

    Attributes:
        phrase: the question's words, as written.
        owner: the label or relationship type holding the value.
        key: the property key.
        value: the stored value, exactly as stored.
        relationship: ``owner`` is a relationship type.
    """

    phrase: str
    owner: str
    key: str
    value: str
    relationship: bool = False


def _forms(word: str, rules: LinkRules = ALL_RULES) -> set[str]:
    """A word's plain, singular and adverb-less forms, lower case (``robberies`` -> ``robbery``)."""
    w = word.lower()
    forms = {w}
    if rules.plural and len(w) > 4 and w.endswith("ies"):
        forms.add(w[:-3] + "y")
    if rules.plural and len(w) > 4 and w.endswith(("ses", "xes", "ches", "shes")):
        forms.add(w[:-2])
    if rules.plural and len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        forms.add(w[:-1])
    if rules.adverb and len(w) > 5 and w.endswith("ly"):
        forms.add(w[:-2])
    return forms


def _grams(question: str, rules: LinkRules = ALL_RULES) -> list[tuple[int, int, str, set[str]]]:
    """Runs of 1-4 words not made only of stop words: ``(first, last, text, lowered forms)``."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'&.\-]*[A-Za-z0-9]|[A-Za-z0-9]", question)
    grams = []
    for i in range(len(words)):
        for n in range(1, _MAX_GRAM + 1):
            chunk = words[i : i + n]
            if len(chunk) < n or all(w.lower() in _STOPWORDS for w in chunk):
                continue
            if n == 1 and (len(chunk[0]) < 3 or chunk[0].isdigit()):
                continue
            head = " ".join(w.lower() for w in chunk[:-1])
            forms = {f"{head} {f}".strip() for f in _forms(chunk[-1], rules)}
            grams.append((i, i + n - 1, " ".join(chunk), forms))
    return grams


def _stored_matches(
    index: GraphIndex, owner: str, key: str, terms: set[str], relationship: bool
) -> list[str]:
    listed = index.values.get((owner, key))
    if listed is not None and listed.complete:
        return [v for v in listed.values if v.lower() in terms]
    if index.engine is None:
        return []
    match = f"()-[x:{quote_name(owner)}]->()" if relationship else f"(x:{quote_name(owner)})"
    prop = f"x.{quote_name(key)}"
    try:
        rows = index.engine.execute(
            f"MATCH {match} WHERE toLower({prop}) IN $terms RETURN DISTINCT {prop} LIMIT 20",
            {"terms": sorted(terms)},
        ).rows
    except QueryError:
        return []
    return [row[0] for row in rows if isinstance(row[0], str)]


def _prefix_matches(
    index: GraphIndex, terms: set[str], rules: LinkRules
) -> dict[str, list[tuple[str, str, str, bool]]]:
    """Listed values that start with a long question word: ``word -> [(owner, key, value, rel)]``."""
    rel_owners = set(index.type_keys)
    prefix: dict[str, list[tuple[str, str, str, bool]]] = {}
    # a word that names a label means the label ("how many vehicles" counts Vehicle
    # nodes), not a listed value that happens to start with the label's name
    labels = {label.lower() for label in index.labels}
    long_words = {
        t
        for t in terms
        if rules.prefix and " " not in t and len(t) >= _PREFIX_MIN and t not in labels
    }
    for (owner, key), pv in sorted(index.values.items()):
        if not pv.complete:
            continue
        relationship = owner in rel_owners and owner not in index.label_keys
        for stored in pv.values:
            low = stored.lower()
            for word in long_words:
                if low.startswith(word) and low != word and len(stored) <= 60:
                    prefix.setdefault(word, []).append((owner, key, stored, relationship))
    return prefix


def link_values(
    question: str, index: GraphIndex, *, limit: int = _MAX_LINKS, rules: LinkRules = ALL_RULES
) -> list[ValueLink]:
    """The stored string values the question's words name, longest phrase first.

    A phrase links to a stored value when, ignoring case, the value equals the
    phrase (or the phrase with its last word singular or without ``-ly``), or
    when a listed value of a low-cardinality property starts with a phrase word
    of at least 6 letters that names no label. A phrase inside a longer linked phrase is not linked
    again; values of more than 60 characters are skipped. When one phrase's
    value is stored under several labels, types or keys, only those whose names
    the question's other words name most are kept (a value stored on two
    relationship types is linked to the one whose name's words the question uses).

    Args:
        question: the user's question.
        index: the graph's index; its engine answers lookups of properties
            whose values are not all listed (one query per such property).
        limit: the most links returned.
        rules: the word-form rules that apply (all by default).

    Returns:
        At most ``limit`` links; empty when nothing matches.
    """
    grams = _grams(question, rules)
    terms: set[str] = set()
    for _, _, _, forms in grams:
        terms |= forms
    rel_owners = set(index.type_keys)
    found: dict[str, list[tuple[str, str, str, bool]]] = {}
    for (owner, key), _pv in sorted(index.values.items()):
        relationship = owner in rel_owners and owner not in index.label_keys
        for stored in _stored_matches(index, owner, key, terms, relationship):
            if len(stored) <= 60:
                found.setdefault(stored.lower(), []).append((owner, key, stored, relationship))
    prefix = _prefix_matches(index, terms, rules)
    asked = {f for _, last, _, forms in grams for f in forms if " " not in f}

    def named(owner: str, key: str) -> int:
        # question words that name the owner or the key (the words of a CamelCase or SNAKE name)
        parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", f"{owner} {key}")
        return sum(p.lower() in asked for p in parts if p.lower() not in _STOPWORDS)

    links: list[ValueLink] = []
    covered: list[tuple[int, int]] = []
    for first, last, text, forms in sorted(grams, key=lambda g: (g[0] - g[1], g[0])):
        if any(a <= first and last <= b for a, b in covered):
            continue
        hits = [h for form in sorted(forms) for h in found.get(form, [])]
        if first == last:
            hits += [h for form in sorted(forms) for h in prefix.get(form, [])]
        if not hits:
            continue
        best = max(named(owner, key) for owner, key, _, _ in hits)
        hits = [h for h in hits if named(h[0], h[1]) == best]
        covered.append((first, last))
        seen: set[tuple[str, str, str]] = set()
        for owner, key, stored, relationship in hits:
            if (owner, key, stored) in seen:
                continue
            seen.add((owner, key, stored))
            links.append(ValueLink(phrase=text, owner=owner, key=key, value=stored,
                                   relationship=relationship))  # fmt: skip
    return links[:limit]


def _pattern(link: ValueLink, index: GraphIndex) -> str:
    literal = "'" + link.value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    entry = f"{{{cypher_name(link.key)}: {literal}}}"
    if not link.relationship:
        return f"(:{cypher_name(link.owner)} {entry})"
    ends = sorted((p.source, p.target) for p in index.schema.patterns if p.type == link.owner)
    source, target = ends[0] if len(ends) == 1 else ("", "")
    left = f"(:{cypher_name(source)})" if source else "()"
    right = f"(:{cypher_name(target)})" if target else "()"
    return f"{left}-[:{cypher_name(link.owner)} {entry}]->{right}"


def render_links(links: Iterable[ValueLink], index: GraphIndex) -> str:
    """The links as prompt lines, e.g. ``- "harbours": (:Location {address: 'Harbour'})``.

    Returns:
        A heading and one line per phrase (its values joined by ``or``); ``""`` for no links.
    """
    by_phrase: dict[str, list[str]] = {}
    for link in links:
        shown = by_phrase.setdefault(link.phrase, [])
        pattern = _pattern(link, index)
        if pattern not in shown:
            shown.append(pattern)
    if not by_phrase:
        return ""
    lines = [f'- "{phrase}": {" or ".join(shown)}' for phrase, shown in by_phrase.items()]
    return (
        "Words of the question that name stored values (use this label, property key and value):\n"
        + "\n".join(lines)
    )
