"""QER side tables: failures by error class at each n, and compute spent per strategy (RAS §4.6, §5.3).

The RAS comparison is made at equal budget n; these tables show what each
strategy spent to get there (attempts actually used, prompt and completion
tokens, model and engine time, the context at the last attempt, which grows
under RAS) and which failure classes remain at each n.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from cypherturn.errors import ErrorClass
from cypherturn.metrics import QerEpisode
from cypherturn.reports._tables import Cell, Table

__all__ = ["qer_cost_table", "qer_error_class_table"]


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
