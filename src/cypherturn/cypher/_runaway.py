"""Where a projection that a model ran away in stops being the query it meant.

Small models that list columns sometimes never stop: Qwen2.5-Coder-1.5B wrote
``RETURN i.name AS invoice_name, i.due_date AS due_date, ..., i.is_insured AS is_insured,
i.gold_value AS gold_value, i.is_insured AS is_insured, ...`` until the 512-token cap, in
3 of 498 guided actions and 8 of 635 agentic ones (docs/design/ask-benchmark.md). Everything before the
first item it wrote a second time is a query; what follows repeats it.
"""

from __future__ import annotations

from cypherturn.cypher._scan import READING_KEYWORDS, bracket_depths
from cypherturn.cypher._tokens import tokenize
from cypherturn.errors import CypherParseError

__all__ = ["runaway_projection_end"]


def runaway_projection_end(query: str) -> int | None:
    """The offset at which the query's final ``RETURN`` list starts repeating itself.

    The items of the last top-level ``RETURN``, split at top-level commas, are
    compared by their tokens; the first item equal to an earlier one marks the
    runaway. The query before it, up to the end of the previous item, is complete:
    its brackets are balanced and its projection names each item once. Only a
    ``RETURN`` list with nothing after its items is read: a query whose last
    projection is a ``WITH`` would end without a ``RETURN``, and one cut in its
    ``ORDER BY``, ``SKIP`` or ``LIMIT`` would lose what the model wrote there.

    Args:
        query: Cypher text, possibly cut off (read leniently: an open string or
            bracket at the end is allowed).

    Returns:
        The offset just past the last item before the first repeated one (so
        ``query[:offset]`` is the query without its runaway), or None when the
        last projection repeats no item, or a bracket before the repeat is unbalanced.
    """
    tokens = tokenize(query, lenient=True)
    try:
        depths = bracket_depths(tokens, open_at_end=True)
    except CypherParseError:
        return None
    clauses = [
        i
        for i, tok in enumerate(tokens)
        if depths[i] == 0
        and tok.is_name(*READING_KEYWORDS)
        and not (tok.is_name("WITH") and i and tokens[i - 1].is_name("STARTS", "ENDS"))
    ]
    if not clauses or not tokens[clauses[-1]].is_name("RETURN"):
        return None
    lo = clauses[-1] + 1
    if lo < len(tokens) and tokens[lo].is_name("DISTINCT"):
        lo += 1
    seen: set[tuple[str, ...]] = set()
    begin = lo
    previous_end: int | None = None
    for i in range(lo, len(tokens) + 1):
        if i < len(tokens) and not (depths[i] == 0 and tokens[i].is_punct(",")):
            continue
        if i == len(tokens):
            return None
        item = tuple(tok.text for tok in tokens[begin:i])
        if item in seen:
            return previous_end
        seen.add(item)
        previous_end = tokens[i - 1].end if i > begin else previous_end
        begin = i + 1
    return None
