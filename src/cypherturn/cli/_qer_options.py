"""The options of `cypherturn qer run`, declared once (``Annotated`` aliases named after them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cypherturn.experiments import DATASETS, TIERS

__all__ = [
    "ALL_DATASETS",
    "ALL_TIERS",
    "QerBudgetOpt",
    "QerConcurrencyOpt",
    "QerDatasetsOpt",
    "QerMaxTokensOpt",
    "QerOutOpt",
    "QerPromptOpt",
    "QerQuestionDirOpt",
    "QerQuestionsOpt",
    "QerRowCapOpt",
    "QerRunsOpt",
    "QerSeedOpt",
    "QerStrategiesOpt",
    "QerTemperatureOpt",
    "QerTiersOpt",
    "QerTimeoutOpt",
]

ALL_DATASETS = ",".join(DATASETS)
"""The default of ``--datasets``: every dataset."""

ALL_TIERS = ",".join(TIERS)
"""The default of ``--tiers``: every tier."""

QerOutOpt = Annotated[
    Path, typer.Option("--out", "-o", help="Run directory (resumed when it exists).")
]

QerDatasetsOpt = Annotated[
    str, typer.Option("--datasets", help="Comma-separated: healthcare, crime, fraud.")
]

QerTiersOpt = Annotated[str, typer.Option("--tiers", help="Comma-separated: easy, medium, hard.")]

QerStrategiesOpt = Annotated[
    str,
    typer.Option(
        "--strategies",
        help="Comma-separated: is, ras, ras+ (grounded RAS), single, or ras+:<part>+<part>.",
    ),
]

QerBudgetOpt = Annotated[int, typer.Option("-n", "--budget", min=1, help="Budget n (RAS §4.7: 5).")]

QerRunsOpt = Annotated[
    int,
    typer.Option("--runs", "-r", min=1, help="Independent runs per configuration (paper: 128)."),
]

QerTemperatureOpt = Annotated[
    float,
    typer.Option("--temperature", "-t", min=0.0, help="Sampling temperature (paper: 0.9)."),
]

QerMaxTokensOpt = Annotated[
    int, typer.Option("--max-tokens", min=1, help="Most tokens per attempt.")
]

QerPromptOpt = Annotated[
    str,
    typer.Option(
        "--prompt",
        help="Prompt version: v1 (the paper's zero-shot GraphCypherQAChain prompt) or v2 (few-shot).",
    ),
]

QerQuestionsOpt = Annotated[
    int | None,
    typer.Option("--questions", "-q", min=1, help="Questions per dataset and tier (default: all)."),
]

QerQuestionDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--question-dir", help="Folder with <dataset>.json question sets (default: packaged)."
    ),
]

QerSeedOpt = Annotated[int, typer.Option("--seed", help="Experiment seed.")]

QerConcurrencyOpt = Annotated[
    int,
    typer.Option(
        "--concurrency",
        "-j",
        min=1,
        help="Worker threads (useful for openai: endpoints; GGUF is serialised).",
    ),
]

QerTimeoutOpt = Annotated[
    float | None, typer.Option("--timeout", min=0.001, help="Per-query timeout, seconds.")
]

QerRowCapOpt = Annotated[int | None, typer.Option("--row-cap", min=1, help="Rows kept per query.")]
