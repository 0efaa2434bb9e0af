"""QER side tables: failures by error class, compute per strategy, answers and reduction (RAS §4.6, §5.3).

The RAS comparison is made at equal budget n; these tables show what each
strategy spent to get there (attempts actually used, prompt and completion
tokens, model and engine time, the context at the last attempt, which grows
under RAS), which failure classes remain at each n, and, per configuration,
the relative reduction of QER from Q@1 and the answer accuracy (EX, relaxed
EX against the question's gold) of the final query (issue 11, §4).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from cypherturn.errors import ErrorClass
from cypherturn.experiments import QerAnswer
from cypherturn.metrics import TIERS, QerCurve
from cypherturn.records import QerEpisode
from cypherturn.reports._tables import Cell, Table

__all__ = [
    "format_change",
    "qer_answer_tables",
    "qer_cost_table",
    "qer_error_class_table",
    "relative_change",
]


def qer_error_class_table(episodes: Sequence[QerEpisode], n: int) -> Table | None:
    """Share of failed questions by error class at each n = 1..``n``, per strategy.

    A question fails at n when its first n attempts all failed; its class at n
    is the class of attempt n (the query the strategy would return).

    Returns:
        The table, or ``None`` when no episode failed at any n.
    """
    counts: dict[tuple[str, int], Counter[str]] = defaultdict(Counter)
    for e in episodes:
        for k in range(1, min(n, e.budget) + 1):
            if e.failed_by(k) and len(e.attempts) >= k:
                cls = e.attempts[k - 1].error_class
                counts[(e.strategy, k)][cls.value if cls else ErrorClass.OTHER.value] += 1
    if not counts:
        return None
    present = {c for counter in counts.values() for c in counter}
    classes = [c.value for c in ErrorClass if c.value in present]
    rows: list[list[Cell]] = []
    for (strategy, k), counter in sorted(counts.items()):
        total = sum(counter.values())
        rows.append([strategy, k, total, *(counter[c] / total for c in classes)])
    return Table(
        name="qer_error_classes",
        title="Failures by error class at each n",
        columns=["Strategy", "n", "Failed questions", *classes],
        rows=rows,
        notes=(
            "Questions with no executable query among their first n attempts, all datasets, tiers and "
            "runs pooled; each share is the fraction of those failures whose n-th query failed with that class."
        ),
    )


def qer_cost_table(episodes: Sequence[QerEpisode]) -> Table | None:
    """Attempts used, tokens and latency per question for each (dataset, strategy).

    Returns:
        The table, or ``None`` without episodes.
    """
    groups: dict[tuple[str, str], list[QerEpisode]] = defaultdict(list)
    for e in episodes:
        groups[(e.dataset, e.strategy)].append(e)
    if not groups:
        return None
    rows: list[list[Cell]] = []
    for (dataset, strategy), group in sorted(groups.items()):
        prompt = [sum(a.prompt_tokens for a in e.attempts) for e in group]
        completion = [sum(a.completion_tokens for a in e.attempts) for e in group]
        rows.append(
            [
                dataset,
                strategy,
                len(group),
                f"{np.mean([len(e.attempts) for e in group]):.2f}",
                f"{np.mean(prompt):.0f}",
                f"{np.mean(completion):.0f}",
                f"{np.mean(np.add(prompt, completion)):.0f}",
                f"{np.mean([e.attempts[-1].prompt_tokens for e in group]):.0f}",
                f"{np.mean([sum(a.model_latency_s for a in e.attempts) for e in group]):.2f}",
                f"{np.mean([sum(a.execution_latency_s for a in e.attempts) for e in group]):.3f}",
            ]
        )
    return Table(
        name="qer_cost",
        title="Compute per question by strategy",
        columns=[
            "Dataset",
            "Strategy",
            "Episodes",
            "Attempts",
            "Prompt tok",
            "Compl. tok",
            "Total tok",
            "Last ctx tok",
            "Model s",
            "Engine s",
        ],
        rows=rows,
        notes=(
            "Means per question (episode) over every tier, model and run: attempts actually used, tokens and seconds summed over its attempts; Last ctx tok: prompt tokens of its last attempt. Both strategies stop at the first "
            "executable query; the last-attempt prompt shows RAS's context growth (IS keeps C0)."
        ),
    )


def relative_change(q1: float, value: float) -> float | None:
    """Relative change of QER from Q@1, ``(value - q1) / q1`` (-0.41 is a 41 % reduction).

    The RAS paper's reductions (Table 3, Figure 3) are read this way in issue 11.

    Returns:
        The change, or ``None`` when ``q1`` is 0 (nothing to reduce).
    """
    return None if q1 == 0 else (value - q1) / q1


def format_change(change: float | None) -> str | None:
    """A relative change as a signed percentage (``-0.412`` -> ``"-41.2%"``); ``None`` stays ``None``."""
    return None if change is None else f"{100 * change:+.1f}%"


def _baseline(curves: Sequence[QerCurve], curve: QerCurve) -> float:
    """Q@1 of the curve's (dataset, tier, model): IS@1 and RAS@1 averaged, else its own QER@1."""
    shared = [
        c.at(1)
        for c in curves
        if (c.dataset, c.tier, c.model) == (curve.dataset, curve.tier, curve.model)
        and c.strategy in ("is", "ras")
    ]
    return float(np.mean(shared)) if len(shared) == 2 else curve.at(1)


def _accuracy(answers: Sequence[QerAnswer]) -> tuple[float | None, float | None, int, int]:
    """(EX, relaxed EX, questions scored, questions excluded) of one group of answers."""
    scored = [a for a in answers if a.status == "scored"]
    ex = float(np.mean([a.ex or 0 for a in scored])) if scored else None
    relaxed = float(np.mean([a.ex_relaxed or 0 for a in scored])) if scored else None
    excluded = {a.question_id for a in answers if a.status != "scored"}
    return ex, relaxed, len({a.question_id for a in scored}), len(excluded)


def _tier_key(tier: str) -> tuple[int, str]:
    return (TIERS.index(tier) if tier in TIERS else len(TIERS), tier)


def qer_answer_tables(
    curves: Sequence[QerCurve],
    n: int,
    answers: Sequence[QerAnswer] | None = None,
    gold_version: str | None = None,
) -> list[Table]:
    """Per configuration: QER@1, Q@1, QER@n, its relative change from Q@1, EX and relaxed EX.

    One table per (dataset, tier, model, strategy) configuration, one with the
    tiers averaged per (dataset, model, strategy) as in RAS Table 3, and, when
    answers were scored, one listing the questions left out of EX and why.
    Q@1 is the paper's (the mean of IS@1 and RAS@1, which share attempt 1) when
    the run has both, else the strategy's own QER@1; the change compares each
    strategy's QER@n with it, so a ``ras+`` row shows its reduction from the
    ungrounded single pass. n is capped by each configuration's budget.

    Args:
        curves: from :func:`cypherturn.metrics.qer_curves`.
        n: the scaled budget reported.
        answers: scored episodes (:func:`cypherturn.experiments.score_qer_answers`);
            ``None`` leaves the EX columns empty.
        gold_version: the golds' version, named in the notes.

    Returns:
        The tables (empty without curves).
    """
    if not curves:
        return []
    grouped: dict[tuple[str, str, str, str], list[QerAnswer]] = defaultdict(list)
    for a in answers or ():
        grouped[(a.strategy, a.dataset, a.tier, a.model)].append(a)
    ordered = sorted(curves, key=lambda c: (c.dataset, c.model, _tier_key(c.tier), c.strategy))
    rows: list[list[Cell]] = []
    per_dataset: dict[tuple[str, str, str], list[tuple[float, float, QerCurve]]] = defaultdict(list)
    for c in ordered:
        k = min(n, c.budget)
        q1 = _baseline(curves, c)
        ex, relaxed, scored, excluded = _accuracy(grouped[(c.strategy, c.dataset, c.tier, c.model)])
        per_dataset[(c.dataset, c.model, c.strategy)].append((q1, c.at(k), c))
        rows.append(
            [
                c.dataset,
                c.tier,
                c.model,
                c.strategy,
                k,
                c.runs,
                c.at(1),
                q1,
                c.at(k),
                format_change(relative_change(q1, c.at(k))),
                ex,
                relaxed,
                scored if answers is not None else None,
                excluded if answers is not None else None,
            ]
        )
    scored_note = (
        f"EX and rEX: strict and relaxed execution accuracy of the final query against the "
        f"question's gold ({gold_version or 'golds'}), over every run; an episode whose final query "
        "did not execute scores 0; questions without a usable gold are excluded and counted."
        if answers is not None
        else "EX columns are empty: score the answers with `cypherturn qer report RUN_DIR`."
    )
    change_note = (
        "vs Q@1: relative change of QER@n from Q@1, (QER@n - Q@1) / Q@1 (the RAS paper's "
        "-41 to -50 % for RAS@5, -32 to -38 % for IS@5 with 7B models); Q@1 averages IS@1 and "
        "RAS@1 when both ran, else it is the strategy's own QER@1."
    )
    columns = ["n", "Runs", "QER@1", "Q@1", "QER@n", "vs Q@1", "EX", "rEX", "Scored q", "Excl. q"]
    tables = [
        Table(
            name="qer_answers",
            title="QER reduction and answer accuracy per configuration",
            columns=["Dataset", "Tier", "Model", "Strategy", *columns],
            rows=rows,
            notes=f"{change_note} {scored_note}",
        )
    ]
    summary: list[list[Cell]] = []
    for (dataset, model, strategy), items in sorted(per_dataset.items()):
        q1 = float(np.mean([q for q, _, _ in items]))
        at_n = float(np.mean([v for _, v, _ in items]))
        tier_ex = [_accuracy(grouped[(strategy, dataset, c.tier, model)]) for _, _, c in items]
        exs = [t[0] for t in tier_ex if t[0] is not None]
        rexs = [t[1] for t in tier_ex if t[1] is not None]
        summary.append(
            [
                dataset,
                model,
                strategy,
                min(min(n, c.budget) for _, _, c in items),
                len(items),
                q1,
                at_n,
                format_change(relative_change(q1, at_n)),
                float(np.mean(exs)) if exs else None,
                float(np.mean(rexs)) if rexs else None,
                sum(t[2] for t in tier_ex) if answers is not None else None,
                sum(t[3] for t in tier_ex) if answers is not None else None,
            ]
        )
    tables.append(
        Table(
            name="qer_answers_datasets",
            title="QER reduction and answer accuracy per dataset (tiers averaged)",
            columns=[
                "Dataset",
                "Model",
                "Strategy",
                "n",
                "Tiers",
                "Q@1",
                "QER@n",
                "vs Q@1",
                "EX",
                "rEX",
                "Scored q",
                "Excl. q",
            ],
            rows=summary,
            notes=(
                "RAS Table 3 layout: every column is the mean over the complexity tiers of the "
                "per-configuration table; vs Q@1 compares those means. " + scored_note
            ),
        )
    )
    left_out = sorted(
        {
            (a.dataset, a.question_id, a.status, a.reason)
            for a in answers or ()
            if a.status != "scored"
        }
    )
    if left_out:
        tables.append(
            Table(
                name="qer_answers_excluded",
                title="Questions left out of EX",
                columns=["Dataset", "Question", "Status", "Reason"],
                rows=[list(row) for row in left_out],
                notes=(
                    "no_gold: the question has no gold; empty_gold: the gold returns no rows "
                    "(an empty answer cannot tell a right query from a wrong one); gold_over_cap: "
                    "the gold returns more rows than the run's row cap; gold_failed: the gold "
                    "fails on the engine."
                ),
            )
        )
    return tables
