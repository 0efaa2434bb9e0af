"""The static check: one ordered table of checks, run over a query before it is executed.

:func:`check_query` compares what a query names (:mod:`._facts`) with a
:class:`~cypherturn.grounding.GraphIndex`. Each check of :data:`CHECKS` is a
small unit in its own module: a *detect* that reports findings (over the whole
query's tokens, or over one UNION branch's facts) and, where it has one, a
*repair* that gives findings found so far their :class:`Edit`. The table's
order is the order of the findings in a report, and a repair sees every
finding the checks above it made. Adding a check is adding its module, a line
here and its cases in ``tests/grounding/check_cases.json``
(docs/design/grounding-checks.md).

Guarantee: a query the check cannot parse gets no verdict (``parsed`` is
False and no finding but the lint's), and every finding names something
that cannot match the graph as it is, so a query that the engine runs correctly
is never flagged (tested on every gold query the project ships).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cypherturn.cypher import tokenize
from cypherturn.errors import CypherParseError
from cypherturn.grounding._facts import BranchFacts, query_facts
from cypherturn.grounding._findings import CheckContext, CheckReport, Finding, FindingCode
from cypherturn.grounding._index import GraphIndex
from cypherturn.grounding._lint import copied_shapes, sql_habits
from cypherturn.grounding._pitfalls import engine_pitfall_findings
from cypherturn.grounding._schema_checks import (
    missing_labels,
    property_findings,
    temporal_literals,
    undefined_variables,
    unknown_labels,
    unknown_types,
)
from cypherturn.grounding._topology import (
    endpoint_findings,
    endpoint_repairs,
    hop_predicates,
    projection_hops,
    retype_unknown,
)

__all__ = ["CHECKS", "Check", "check_query"]

QueryDetect = Callable[[CheckContext], list[Finding]]
BranchDetect = Callable[[CheckContext, BranchFacts], list[Finding]]
Repair = Callable[[CheckContext, BranchFacts, list[Finding]], None]


@dataclass(frozen=True, slots=True)
class Check:
    """One check of the table.

    Attributes:
        name: what the check is called in the design note and the case file.
        codes: the finding codes it reports or repairs.
        on_query: detect over the whole query's tokens (no schema needed).
        on_branch: detect over one UNION branch's facts.
        repair: gives the findings found so far (in this branch) their edits.
        unparsed: ``on_query`` also runs on a query the parser cannot read.
        after_clean_lint: skipped when a query-level check found something: SQL
            words the parser took for variables are reported once, as the habit.
    """

    name: str
    codes: tuple[FindingCode, ...]
    on_query: QueryDetect | None = None
    on_branch: BranchDetect | None = None
    repair: Repair | None = None
    unparsed: bool = False
    after_clean_lint: bool = False


CHECKS: tuple[Check, ...] = (
    Check("sql_habits", ("sql_habit",), on_query=sql_habits, unparsed=True),
    Check(
        "copied_shapes", ("sql_habit", "undefined_variable"), on_query=copied_shapes, unparsed=True
    ),
    Check("engine_pitfalls", ("engine_pitfall",), on_query=engine_pitfall_findings),
    Check("unknown_labels", ("unknown_label",), on_branch=unknown_labels),
    Check(
        "unknown_types",
        ("unknown_relationship_type",),
        on_branch=unknown_types,
        repair=retype_unknown,
    ),
    Check(
        "endpoints",
        ("reversed_direction", "wrong_endpoints"),
        on_branch=endpoint_findings,
        repair=endpoint_repairs,
    ),
    Check("properties", ("unknown_property", "property_not_on_label"), on_branch=property_findings),
    Check("missing_label", ("missing_label",), on_branch=missing_labels),
    Check("hop_predicates", ("property_not_on_label",), repair=hop_predicates),
    Check("projection_hops", ("property_not_on_label",), repair=projection_hops),
    Check("temporal_literals", ("literal_type",), on_branch=temporal_literals),
    Check(
        "undefined_variables",
        ("undefined_variable",),
        on_branch=undefined_variables,
        after_clean_lint=True,
    ),
)
"""Every check :func:`check_query` runs, in order."""


def _query_findings(context: CheckContext, *, parsed: bool) -> list[Finding]:
    return [
        finding
        for check in CHECKS
        if check.on_query is not None and (parsed or check.unparsed)
        for finding in check.on_query(context)
    ]


def _branch_findings(context: CheckContext, *, lint: bool) -> list[Finding]:
    """The branch checks' findings, each span reported once (the first check's finding wins)."""
    assert context.facts is not None
    findings: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    for branch in context.facts.branches:
        for check in CHECKS:
            if check.after_clean_lint and lint:
                continue
            for finding in check.on_branch(context, branch) if check.on_branch else ():
                key = finding.span or (-1, len(findings))
                if key not in seen:
                    seen.add(key)
                    findings.append(finding)
            if check.repair is not None:
                check.repair(context, branch, findings)
    return findings


def check_query(query: str, index: GraphIndex) -> CheckReport:
    """Check one query against the graph's schema, before it is executed.

    Checks (each a :class:`Finding` code, the table :data:`CHECKS`): labels and
    relationship types exist; each relationship pattern's type connects its
    endpoint labels in the written direction (a pattern that occurs only the
    other way is ``reversed_direction``, repaired by flipping the arrow);
    property keys exist on the variable's labels or types; read variables are
    defined; SQL habits (``!=`` and ``x NOT IN list`` repaired as ``<>`` and
    ``NOT x IN list``; ``ORDER BY`` / ``SKIP`` / ``LIMIT`` straight after a MATCH
    given a ``WITH *``); a schema's ``{key: TYPE}`` copied into a pattern
    (dropped); engine pitfalls (``engine_pitfall``: a WHERE comparison on a
    temporal component that FalkorDB answers with nothing, repaired with
    ``toInteger``).

    Args:
        query: the Cypher text.
        index: the graph's :class:`GraphIndex`.

    Returns:
        The report; ``parsed`` is False when the query does not parse, and then
        the only findings are the lint's (token-level: SQL habits and copied
        shapes), no verdict.
    """
    try:
        tokens = tokenize(query)
    except CypherParseError as e:
        return CheckReport(parsed=False, parse_error=str(e))
    try:
        facts = query_facts(query, tokens=tokens)
    except CypherParseError as e:
        context = CheckContext(query, tokens, index)
        findings = _query_findings(context, parsed=False)
        return CheckReport(parsed=False, parse_error=str(e), findings=findings)
    context = CheckContext(query, tokens, index, facts)
    findings = _query_findings(context, parsed=True)
    findings += _branch_findings(context, lint=bool(findings))
    return CheckReport(parsed=True, findings=findings)
