"""QER of the bundled model on ten POLE questions: IS@n vs RAS@n (RAS paper §3.3, Algorithms 1-2).

Runs each question once per strategy with budget T (default 5) on the embedded
engine, and prints QER@k for k = 1..T: the fraction of questions whose first k
attempts produced no executable query. A smoke-sized version of the RAS
experiment; the full experiment (question sets, 128 runs, tiers) is
`cypherturn qer run`.

Usage:
    python benchmarks/qer_pole.py [--budget 5] [--seed 0] [--model default]
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from cypherturn import api
from cypherturn.models import load_model

QUESTIONS = [
    "How many crimes are recorded in the database?",
    "List each crime type with the number of crimes of that type.",
    "Which five officers investigated the most crimes? Return their name, surname and the count.",
    "Find the crimes that occurred at the address 'Piccadilly' and return their date and type.",
    "Which people are party to a crime? Return their name, surname and the number of crimes.",
    "Which vehicles are involved in crimes? Return make, model and the crime type.",
    "Find people who know someone who is party to a crime.",
    "Which areas have the most crimes? Return the area code and the crime count, top 10.",
    "How many calls did each phone make as caller? Return the phone number and the count.",
    "List the people with the surname 'Hamilton' and their email addresses.",
]


def main() -> None:
    """Run the ten questions with IS and RAS and print QER@k and token cost."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    model = load_model(args.model)
    console = Console()
    table = Table(title=f"QER on {len(QUESTIONS)} POLE questions, model {args.model}")
    table.add_column("strategy")
    for k in range(1, args.budget + 1):
        table.add_column(f"QER@{k}", justify="right")
    table.add_column("attempts", justify="right")
    table.add_column("tokens/question", justify="right")
    table.add_column("seconds", justify="right")
    for strategy in ("is", "ras"):
        started = time.perf_counter()
        first_ok: list[int | None] = []
        tokens = 0
        attempts = 0
        for i, question in enumerate(QUESTIONS):
            result = api.ask(
                question,
                graph="pole",
                strategy=strategy,
                budget=args.budget,
                model=model,
                seed=args.seed + 1000 * i,
            )
            ok_at = next((a.index for a in result.attempts if a.ok), None)
            first_ok.append(ok_at)
            console.print(f"[dim]{strategy} q{i + 1}: first executable attempt {ok_at}[/]")
            tokens += result.total_tokens
            attempts += result.attempts_used
        qer = [
            sum(1 for ok in first_ok if ok is None or ok > k) / len(QUESTIONS)
            for k in range(1, args.budget + 1)
        ]
        table.add_row(
            strategy,
            *(f"{q:.2f}" for q in qer),
            f"{attempts / len(QUESTIONS):.1f}",
            f"{tokens / len(QUESTIONS):.0f}",
            f"{time.perf_counter() - started:.0f}",
        )
    console.print(table)


if __name__ == "__main__":
    main()
